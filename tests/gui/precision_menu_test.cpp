// Pipeline > Precision, offscreen: three exclusive items (f32, f16, bf16) that
// rewrite the pipeline box (reduce-precision added, replaced or taken away)
// and follow it when the box is edited by hand or restored from a session.
#include "viewer/precision_menu.h"

#include <QAction>
#include <QLineEdit>
#include <QMenu>
#include <QtTest>

#include "session/pipeline_choice.h"
#include "viewer/main_window.h"

using namespace fuselens;
using namespace fuselens::viewer;

class PrecisionMenuTest : public QObject {
  Q_OBJECT
 private slots:
  void itemsRewriteTheBoxAndFollowIt() {
    MainWindow w;
    auto* menu = w.findChild<QMenu*>("precisionMenu");
    QVERIFY(menu);
    QCOMPARE(menu->actions().size(), 3);
    QVERIFY(precisionItem(menu, "f32")->isChecked());
    const QString plain = w.pipeline();

    precisionItem(menu, "f16")->trigger();  // no model open: nothing reruns
    QCOMPARE(w.pipeline(), plain + ",reduce-precision{dtype=f16}");
    QVERIFY(precisionItem(menu, "f16")->isChecked());
    QVERIFY(!precisionItem(menu, "f32")->isChecked());

    precisionItem(menu, "bf16")->trigger();
    QCOMPARE(w.pipeline(), plain + ",reduce-precision{dtype=bf16}");
    precisionItem(menu, "f32")->trigger();
    QCOMPARE(w.pipeline(), plain);

    w.setPipeline(QString::fromStdString(pipelineTextForLevel(3)) + ",reduce-precision{dtype=f16}");
    QVERIFY(precisionItem(menu, "f16")->isChecked());
    w.setPipeline(plain);
    QVERIFY(precisionItem(menu, "f32")->isChecked());
  }

  void aBoxThatDoesNotParseIsLeftAlone() {
    MainWindow w;
    w.setModalErrors(false);
    QSignalSpy errors(&w, &MainWindow::errorShown);
    w.setPipeline("dce,no-such-pass");
    auto* menu = w.findChild<QMenu*>("precisionMenu");
    precisionItem(menu, "f16")->trigger();
    QCOMPARE(w.pipeline(), QString("dce,no-such-pass"));
    QCOMPARE(errors.size(), 1);
    QVERIFY(precisionItem(menu, "f32")->isChecked());
  }
};

QTEST_MAIN(PrecisionMenuTest)
#include "precision_menu_test.moc"
