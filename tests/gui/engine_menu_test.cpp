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
    QCOMPARE(menu->actions().size(), 4);  // CPU, CUDA, a separator, the cuBLASLt toggle
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

  // The cuBLASLt toggle reaches Session::cudaRun with the CUDA compare it
  // starts; on the CPU engine it starts nothing. Without a device that
  // compare stops at the engine's sentence, after the request was set.
  void cudaLibraryToggleReachesTheRequest() {
    MainWindow w;
    w.setModalErrors(false);
    auto* menu = w.findChild<QMenu*>("engineMenu");
    QVERIFY(menu);
    auto* lib = menu->findChild<QAction*>("cudaLibraryToggle");
    QVERIFY(lib && lib->isCheckable() && !lib->isChecked());
    QCOMPARE(cudaLibraryChoice(menu), QString("none"));
    QSignalSpy compared(&w, &MainWindow::compareFinished);
    QSignalSpy errors(&w, &MainWindow::errorShown);
    w.openFile(QString::fromStdString(fuselens::test::sourcePath("/samples/mlp.onnx")));
    QTRY_VERIFY_WITH_TIMEOUT(compared.size() == 1, fuselens::test::kWindowTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(fuselens::test::settled(w), fuselens::test::kWindowTimeoutMs);

    lib->trigger();
    QCOMPARE(cudaLibraryChoice(menu), QString("cublaslt"));
    QTRY_VERIFY_WITH_TIMEOUT(fuselens::test::settled(w), fuselens::test::kWindowTimeoutMs);
    QCOMPARE(compared.size(), 1);
    QCOMPARE(w.session()->cudaRun.library, std::string("none"));

    engineItem(menu, "cuda")->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(fuselens::test::settled(w), fuselens::test::kWindowTimeoutMs);
    QCOMPARE(w.session()->cudaRun.library, std::string("cublaslt"));
    std::string why;
    const bool device = cudaEngineAvailable(&why);
    if (!device) {
      QCOMPARE(errors.size(), 1);
      QVERIFY2(errors.at(0).at(0).toString().contains(QString::fromStdString(why)),
               qPrintable(errors.at(0).at(0).toString()));
    }

    lib->trigger();  // off again: the CUDA compare reruns with the generated kernels
    QCOMPARE(cudaLibraryChoice(menu), QString("none"));
    QTRY_VERIFY_WITH_TIMEOUT(fuselens::test::settled(w), fuselens::test::kWindowTimeoutMs);
    QCOMPARE(w.session()->cudaRun.library, std::string("none"));
    QCOMPARE(device ? compared.size() : errors.size(), device ? 3 : 2);
  }
};

QTEST_MAIN(EngineMenuTest)
#include "engine_menu_test.moc"
