// Pipeline > Engine, offscreen: CPU is checked at first; picking CUDA reruns
// compare on the CUDA engine. Where this machine has no driver or device, the
// window shows the engine's one sentence (the CLI's words) and the CPU engine
// still compares; where it has one, the CUDA compare reports a verdict.
#include "viewer/engine_menu.h"

#include <QAction>
#include <QMenu>
#include <QtTest>

#include "session/engines.h"
#include "session/session.h"
#include "tests/gui/main_window_util.h"
#include "tests/support/test_paths.h"
#include "viewer/main_window.h"

using namespace fuselens;
using namespace fuselens::viewer;

class EngineMenuTest : public QObject {
  Q_OBJECT
 private slots:
  void cudaComparesOrSaysWhyNot() {
    MainWindow w;
    w.setModalErrors(false);
    auto* menu = w.findChild<QMenu*>("engineMenu");
    QVERIFY(menu);
    QCOMPARE(menu->actions().size(), 2);
    QVERIFY(engineItem(menu, "cpu")->isChecked());
    QCOMPARE(engineChoice(menu), QString("cpu"));

    QSignalSpy compared(&w, &MainWindow::compareFinished);
    QSignalSpy errors(&w, &MainWindow::errorShown);
    w.openFile(QString::fromStdString(fuselens::test::sourcePath("/samples/mlp.onnx")));
    QTRY_VERIFY_WITH_TIMEOUT(compared.size() == 1, fuselens::test::kWindowTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(fuselens::test::settled(w), fuselens::test::kWindowTimeoutMs);

    engineItem(menu, "cuda")->trigger();
    QCOMPARE(engineChoice(menu), QString("cuda"));
    QTRY_VERIFY_WITH_TIMEOUT(fuselens::test::settled(w), fuselens::test::kWindowTimeoutMs);
    std::string why;
    if (cudaEngineAvailable(&why)) {
      QCOMPARE(compared.size(), 2);
      QVERIFY2(errors.isEmpty(), qPrintable(errors.value(0).value(0).toString()));
    } else {
      QCOMPARE(errors.size(), 1);
      const QString shown = errors.at(0).at(0).toString();
      QVERIFY2(shown.contains(QString::fromStdString(why)), qPrintable(shown));
      QVERIFY(engineItem(menu, "cuda")->toolTip().contains(QString::fromStdString(why)));
    }

    engineItem(menu, "cpu")->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(fuselens::test::settled(w), fuselens::test::kWindowTimeoutMs);
    QVERIFY(compared.size() >= 2);
    QVERIFY2(compared.last().at(0).toString().contains("within"),
             qPrintable(compared.last().at(0).toString()));
  }
};

QTEST_MAIN(EngineMenuTest)
#include "engine_menu_test.moc"
