// MainWindow's docks (fusion inspector, compare, profile, buckets, code, tour) and
// what picking a row in one of them selects in the graph.
#include <QDockWidget>
#include <QLineEdit>
#include <QStatusBar>

#include "session/session.h"
#include "viewer/bucket_panel.h"
#include "viewer/code_pane.h"
#include "viewer/compare_panel.h"
#include "viewer/fusion_inspector.h"
#include "viewer/graph_items.h"
#include "viewer/graph_view.h"
#include "viewer/main_window.h"
#include "viewer/profile_panel.h"
#include "viewer/tensor_inspector.h"

namespace fuselens::viewer {

void MainWindow::buildDocks() {
  inspector_ = new FusionInspector(this);
  comparePanel_ = new ComparePanel(this);
  inspectorDock_ = new QDockWidget(tr("Fusion inspector"), this);
  inspectorDock_->setObjectName("fusionInspectorDock");
  inspectorDock_->setWidget(inspector_);
  compareDock_ = new QDockWidget(tr("Compare"), this);
  compareDock_->setObjectName("compareDock");
  compareDock_->setWidget(comparePanel_);
  addDockWidget(Qt::BottomDockWidgetArea, inspectorDock_);
  addDockWidget(Qt::BottomDockWidgetArea, compareDock_);
  splitDockWidget(inspectorDock_, compareDock_, Qt::Horizontal);
  // The profile shares the compare dock's place, a tab behind it.
  profilePanel_ = new ProfilePanel(this);
  profileDock_ = new QDockWidget(tr("Profile"), this);
  profileDock_->setObjectName("profileDock");
  profileDock_->setWidget(profilePanel_);
  addDockWidget(Qt::BottomDockWidgetArea, profileDock_);
  tabifyDockWidget(compareDock_, profileDock_);
  // The tensor inspector too: it follows the selection, whichever tab is up.
  tensorInspector_ = new TensorInspector(this);
  tensorDock_ = new QDockWidget(tr("Tensor"), this);
  tensorDock_->setObjectName("tensorDock");
  tensorDock_->setWidget(tensorInspector_);
  addDockWidget(Qt::BottomDockWidgetArea, tensorDock_);
  tabifyDockWidget(compareDock_, tensorDock_);
  // The buckets too: a sweep is a question about the compare's numbers at other sizes.
  bucketPanel_ = new BucketPanel(this);
  bucketDock_ = new QDockWidget(tr("Buckets"), this);
  bucketDock_->setObjectName("bucketDock");
  bucketDock_->setWidget(bucketPanel_);
  addDockWidget(Qt::BottomDockWidgetArea, bucketDock_);
  tabifyDockWidget(compareDock_, bucketDock_);
  compareDock_->raise();
  connect(profilePanel_, &ProfilePanel::profileRequested, this, &MainWindow::startProfile);
  connect(profilePanel_, &ProfilePanel::kernelPicked, this, &MainWindow::onKernelPicked);
  resizeDocks({inspectorDock_}, {230}, Qt::Vertical);
  resizeDocks({inspectorDock_, compareDock_}, {790, 610}, Qt::Horizontal);

  connect(graphView_, &GraphView::opSelected, inspector_, &FusionInspector::setNodeFilter);
  connect(inspector_, &FusionInspector::decisionPicked, this, &MainWindow::onDecisionPicked);
  connect(comparePanel_, &ComparePanel::tensorPicked, this, &MainWindow::onTensorPicked);
  connect(comparePanel_, &ComparePanel::isolatedRequested, this, &MainWindow::startIsolatedCompare);
  connect(comparePanel_, &ComparePanel::perturbRequested, this, &MainWindow::applyPerturbation);
  connect(graphView_, &GraphView::tapRequested, this, &MainWindow::startTap);

  // Hidden until asked for (View > Code): generating CUDA C and PTX costs a
  // compile, which only a user looking at the code should pay.
  codePane_ = new CodePane(this);
  codeDock_ = new QDockWidget(tr("Code"), this);
  codeDock_->setObjectName("codeDock");
  codeDock_->setWidget(codePane_);
  addDockWidget(Qt::RightDockWidgetArea, codeDock_);
  codeDock_->hide();
  connect(codePane_, &CodePane::codeRequested, this, &MainWindow::startCode);
  connect(codePane_, &CodePane::originsPicked, this, &MainWindow::selectOps);
  connect(codeDock_, &QDockWidget::visibilityChanged, this, [this](bool visible) {
    if (visible && session_ && session_->lastReport()) codePane_->ensureCurrent();
  });
}

void MainWindow::startTap(const QString& tensor) {
  if (!session_) return;
  if (isBusy()) {
    showError(
        tr("Wait for the current run to finish, or cancel it, before tapping %1.").arg(tensor));
    return;
  }
  std::shared_ptr<Session> s = session_;
  Progress progress = progressSink();
  CancelToken cancel = cancel_;
  comparePanel_->setSession(nullptr);  // the worker adds to the session's taps
  comparePanel_->setStatusText(tr("tap %1: compiling its group's tapped variant...").arg(tensor));
  compareDock_->show();
  compareDock_->raise();
  start(Job::Tap, [s, name = tensor.toStdString(), progress, cancel] {
    JobResult r;
    auto inputs = s->randomInputs(s->seed);
    if (!inputs) {
      r.status = inputs.status();
      return r;
    }
    auto taps = s->compareTaps({name}, *inputs, s->compareOptions, progress, cancel);
    r.status = taps.status();
    if (taps) r.summary = taps->verdict();
    return r;
  });
}

void MainWindow::finishTap(const JobResult& r) {
  comparePanel_->setSession(session_.get());
  if (!r.status) {
    if (!cancel_.cancelled()) showError(QString::fromStdString(r.status.message()));
    return;
  }
  statusBar()->showMessage(QString::fromStdString(r.summary), kMessageMs);
}

void MainWindow::onDecisionPicked(const QString& producer, const QString& consumer) {
  const int found = graphView_->highlightNodes({producer, consumer});
  if (found < 2)
    statusBar()->showMessage(tr("%1 \u2192 %2 is not drawn in this step (%3 of 2 nodes found)")
                                 .arg(producer, consumer)
                                 .arg(found),
                             kMessageMs);
}

void MainWindow::onKernelPicked(const QString& kernelName) {
  const CompiledModule* module = session_ ? session_->compiled() : nullptr;
  if (!module) return;
  for (const KernelInfo& k : module->kernels()) {
    if (k.name != kernelName.toStdString() || k.outputs.empty()) continue;
    const Graph& g = session_->finalGraph();
    if (g.hasValue(k.outputs[0]))
      onTensorPicked(QString::fromStdString(g.value(k.outputs[0]).name));
    return;
  }
}

void MainWindow::onTensorPicked(const QString& valueName) {
  if (!graphView_->selectProducerOf(valueName))
    statusBar()->showMessage(tr("No node in this step produces %%1").arg(valueName), kMessageMs);
  // After the selection, which shows the node's first output: the pick may be another.
  tensorInspector_->showTensor(valueName);
}

// Searches every op, inside collapsed scopes too: the view opens the scopes
// above the hit and centres it. Return steps on; `step` -1 steps back.
void MainWindow::findNode(const QString& text, int step) {
  const QList<SearchHit> hits = graphView_->search(text);
  if (hits.isEmpty()) {
    statusBar()->showMessage(tr("No node matches \u201c%1\u201d").arg(text.trimmed()), kMessageMs);
    return;
  }
  const int n = int(hits.size());
  searchHit_ = text == lastSearch_ && searchHit_ >= 0 ? ((searchHit_ + step) % n + n) % n : 0;
  lastSearch_ = text;
  graphView_->revealNode(hits[searchHit_].name);
  statusBar()->showMessage(tr("%1 of %2: %3 (%4)")
                               .arg(searchHit_ + 1)
                               .arg(n)
                               .arg(hits[searchHit_].name, hits[searchHit_].op),
                           kMessageMs);
}

}  // namespace fuselens::viewer
