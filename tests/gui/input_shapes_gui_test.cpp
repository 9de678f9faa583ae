// The Input shapes box on a model with a dynamic batch dim: without it the
// compare cannot make random inputs and says how to fix that; with it the
// model compiles and compares; a malformed box is one sentence in a dialog.
#include <QStandardPaths>
#include <QtTest>

#include "session/session.h"
#include "tests/gui/main_window_util.h"
#include "tests/support/test_paths.h"
#include "viewer/graph_view.h"
#include "viewer/main_window.h"

using namespace fuselens;
using namespace fuselens::viewer;

namespace {
constexpr int kTimeoutMs = fuselens::test::kWindowTimeoutMs;
const QString kModel =
    QString::fromStdString(fuselens::test::sourcePath("/tests/fixtures/dyn_batch/model.onnx"));
using fuselens::test::settled;
}  // namespace

class InputShapesGuiTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void withoutShapesCompareSaysWhatToDo() {
    MainWindow w;
    w.setModalErrors(false);
    QSignalSpy errors(&w, &MainWindow::errorShown);
    w.show();
    w.openFile(kModel);
    QTRY_VERIFY_WITH_TIMEOUT(settled(w), kTimeoutMs);
    QVERIFY(w.compareText().contains("failed"));
    QVERIFY(!errors.isEmpty());
    QVERIFY2(errors.last().first().toString().contains("Input shapes"),
             qPrintable(errors.last().first().toString()));
  }

  void withShapesItCompiles() {
    MainWindow w;
    w.setModalErrors(false);
    w.show();
    w.setInputShapes("x=4x8");
    w.openFile(kModel);
    QTRY_VERIFY_WITH_TIMEOUT(settled(w) && w.session() && w.session()->lastReport(), kTimeoutMs);
    QVERIFY2(w.compareText().contains("tensors within rounding"), qPrintable(w.compareText()));
  }

  void malformedShapesAreOneSentence() {
    MainWindow w;
    w.setModalErrors(false);
    QSignalSpy errors(&w, &MainWindow::errorShown);
    w.show();
    w.setInputShapes("x=4xq");
    w.openFile(kModel);
    QCOMPARE(errors.count(), 1);
    QVERIFY(errors.first().first().toString().contains("not a non-negative dim"));
    QVERIFY(!w.isBusy());
  }
};

QTEST_MAIN(InputShapesGuiTest)
#include "input_shapes_gui_test.moc"
