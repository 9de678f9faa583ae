// The code dock on samples/mlp.onnx: hidden until shown, then each tab is
// generated on the worker when first looked at (loop IR, LLVM IR, CUDA C, PTX
// when NVRTC is installed), and a new run drops the texts.
#include "viewer/code_pane.h"

#include <QDockWidget>
#include <QStandardPaths>
#include <QtTest>

#include "codegen/cuda/nvrtc.h"
#include "session/session.h"
#include "tests/gui/main_window_util.h"
#include "tests/support/test_paths.h"
#include "viewer/graph_view.h"
#include "viewer/main_window.h"

using namespace fuselens;
using namespace fuselens::viewer;

namespace {
constexpr int kTimeoutMs = fuselens::test::kWindowTimeoutMs;
using fuselens::test::settled;
}  // namespace

class CodePaneTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void tabsFillOnDemand() {
    MainWindow w;
    w.setModalErrors(false);
    w.show();
    w.openFile(QString::fromStdString(fuselens::test::sourcePath("/samples/mlp.onnx")));
    QTRY_VERIFY_WITH_TIMEOUT(settled(w) && w.session() && w.session()->lastReport(), kTimeoutMs);
    CodePane* pane = w.codePane();
    QVERIFY(!w.codeDock()->isVisible());
    QVERIFY(!pane->hasCode(CodePane::LoopIr));  // nothing generated while hidden

    w.codeDock()->show();
    QTRY_VERIFY_WITH_TIMEOUT(pane->hasCode(CodePane::LoopIr), kTimeoutMs);
    QVERIFY(pane->text(CodePane::LoopIr).contains("for ("));
    QVERIFY(!pane->hasCode(CodePane::CudaC));

    pane->setCurrentTab(CodePane::CudaC);
    QTRY_VERIFY_WITH_TIMEOUT(pane->hasCode(CodePane::CudaC), kTimeoutMs);
    QCOMPARE(pane->text(CodePane::CudaC).count("__global__ void k"), 3);

    pane->setCurrentTab(CodePane::LlvmIr);
    QTRY_VERIFY_WITH_TIMEOUT(pane->hasCode(CodePane::LlvmIr), kTimeoutMs);
    QVERIFY(pane->text(CodePane::LlvmIr).contains("define "));

    pane->setCurrentTab(CodePane::Ptx);
    if (nvrtcAvailable()) {
      QTRY_VERIFY_WITH_TIMEOUT(pane->hasCode(CodePane::Ptx), kTimeoutMs);
      QVERIFY(pane->text(CodePane::Ptx).contains(".entry"));
    } else {
      QTRY_VERIFY_WITH_TIMEOUT(!w.isBusy(), kTimeoutMs);
      QVERIFY(!pane->hasCode(CodePane::Ptx));
    }

    // A new run drops every tab; the visible one comes back by itself.
    w.runPipeline();
    QTRY_VERIFY_WITH_TIMEOUT(settled(w) && pane->hasCode(pane->currentTab()), kTimeoutMs);
    QVERIFY(!pane->hasCode(CodePane::CudaC) || pane->currentTab() == CodePane::CudaC);
  }

  void suggestedNames() {
    QCOMPARE(CodePane::suggestedFileName(CodePane::CudaC, "mlp"), QString("mlp.cu"));
    QCOMPARE(CodePane::suggestedFileName(CodePane::Ptx, "mlp"), QString("mlp.ptx"));
    QCOMPARE(CodePane::suggestedFileName(CodePane::LlvmIr, "mlp"), QString("mlp.ll"));
  }
};

QTEST_MAIN(CodePaneTest)
#include "code_pane_test.moc"
