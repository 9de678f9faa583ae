// MainWindow's worker jobs: open a model or a saved session, optimize,
// compare, save. Each runs on a QtConcurrent thread with a Progress sink and
// the window's cancel token; its result comes back through onJobDone.
#include <QAction>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QLabel>
#include <QMenu>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QStatusBar>
#include <QToolButton>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <utility>

#include "core/ir/printer.h"
#include "session/dim_suggest.h"
#include "session/input_shapes.h"
#include "session/saved_dims.h"
#include "session/session.h"
#include "viewer/bucket_panel.h"
#include "viewer/code_pane.h"
#include "viewer/compare_panel.h"
#include "viewer/engine_menu.h"
#include "viewer/fusion_inspector.h"
#include "viewer/graph_view.h"
#include "viewer/graphview_names.h"
#include "viewer/main_window.h"
#include "viewer/pass_diff_pane.h"
#include "viewer/pass_list.h"
#include "viewer/profile_panel.h"
#include "viewer/tensor_inspector.h"

namespace fuselens::viewer {
namespace {

constexpr int kWarningMs = 15000;
const char* const kSessionSuffix = ".fuselens.json";

QString qs(const std::string& s) { return QString::fromStdString(s); }

// A job's work on the session's seeded random inputs; failing to make them
// is the job's error.
JobResult onRandomInputs(
    Session& s,
    const std::function<Status(const std::map<std::string, TensorData>&, JobResult&)>& work) {
  JobResult r;
  auto inputs = s.randomInputs(s.seed);
  r.status = inputs ? work(*inputs, r) : inputs.status();
  return r;
}

QString sessionFilter() {
  return QObject::tr("FuseLens sessions (*.fuselens.json);;All files (*)");
}

}  // namespace

void MainWindow::openWithDialog() {
  const QString dir = session_ ? QFileInfo(qs(session_->modelPath())).absolutePath() : QString();
  const QString path = QFileDialog::getOpenFileName(this, tr("Open model"), dir,
                                                    tr("ONNX models (*.onnx);;All files (*)"));
  if (!path.isEmpty()) openFile(path);
}

void MainWindow::openSessionWithDialog() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Open session"), {}, sessionFilter());
  if (!path.isEmpty()) openSession(path);
}

void MainWindow::saveSessionWithDialog() {
  if (!session_) {
    showError(tr("Open a model before saving a session."));
    return;
  }
  const QFileInfo model(qs(session_->modelPath()));
  const QString suggested = qs(besideSessionPath(model.absoluteFilePath().toStdString()));
  const QString path =
      QFileDialog::getSaveFileName(this, tr("Save session"), suggested, sessionFilter());
  if (!path.isEmpty()) saveSession(path);
}

void MainWindow::openFile(const QString& path) {
  if (isBusy()) {
    showError(tr("Wait for the current run to finish, or cancel it, before opening %1.")
                  .arg(QFileInfo(path).fileName()));
    return;
  }
  if (!QFileInfo(path).isFile()) {
    showError(tr("%1: no such file.").arg(path));
    return;
  }
  const std::string file = path.toStdString(), pipe = pipeline().toStdString();
  auto shapes = parseInputShapes(inputShapes().toStdString());
  if (!shapes) {
    showError(qs(shapes.message()));
    return;
  }
  Progress progress = progressSink();
  CancelToken cancel = cancel_;
  const bool ask = dimsPrompt_ || modalErrors_;
  auto known = rememberedDims_.find(QFileInfo(path).absoluteFilePath().toStdString());
  std::map<std::string, int64_t> remembered;
  if (known != rememberedDims_.end()) remembered = known->second;
  start(Job::Open, [file, pipe, shapes = *shapes, ask, remembered, progress, cancel]() mutable {
    JobResult r;
    auto s = std::make_shared<Session>();
    r.status = s->open(OpenRequest{file, {}, shapes, ""}, progress, cancel);
    if (s->isOpen()) r.session = s;  // shown even when its shapes or pipeline then failed
    if (!r.status) return r;
    r.dims = suggestDims(s->original(), s->model().metadata);
    std::string from = "as this window last opened it";
    if (!r.dims.empty() && remembered.empty()) {  // a session saved beside the model
      remembered = savedDims(file, r.dims);
      from = "from " + besideSessionPath(file);
    }
    if (!r.dims.empty() && !remembered.empty()) {
      r.dimValues = remembered;
      r.summary = "Dims bound " + from + ":";
      for (const auto& [name, value] : remembered)
        r.summary += " " + name + "=" + std::to_string(value);
      auto bound = s->bindInputShapes(shapesForDims(s->original(), remembered));
      if (!bound) r.status = bound.status();
    } else if (!r.dims.empty() && ask) {
      r.needsDims = true;  // the pipeline waits for the dims dialog
      return r;
    }
    if (r.status) r.status = s->optimize(pipe, progress, cancel);
    return r;
  });
}

void MainWindow::openSession(const QString& path) {
  if (isBusy()) {
    showError(tr("Wait for the current run to finish, or cancel it, before opening %1.")
                  .arg(QFileInfo(path).fileName()));
    return;
  }
  const std::string file = path.toStdString();
  Progress progress = progressSink();
  CancelToken cancel = cancel_;
  const bool ask = dimsPrompt_ || modalErrors_;
  start(Job::Open, [file, ask, progress, cancel] {
    JobResult r;
    r.path = file;
    auto s = std::make_shared<Session>();
    auto warnings = s->restore(file, progress, cancel);
    r.status = warnings.status();
    if (warnings) r.warnings = *warnings;
    if (warnings && !s->boundInputShapes().empty()) {  // the dims it was saved with
      auto dims = suggestDimsOfFile(s->modelPath());
      if (dims) r.dims = *dims;
      r.dimValues = dimsFromShapes(r.dims, s->boundInputShapes());
    }
    if (warnings && s->isOpen()) {  // saved with dims unbound: ask for them now
      std::vector<DimSuggestion> unbound = suggestDims(s->original(), s->model().metadata);
      r.needsDims = ask && !unbound.empty();
      if (!unbound.empty()) r.dims = std::move(unbound);
    }
    // The model may have opened even if its pipeline then failed: show it.
    if (s->isOpen()) r.session = s;
    return r;
  });
}

void MainWindow::saveSession(const QString& path) {
  if (isBusy() || !session_) {
    showError(isBusy() ? tr("Wait for the current run to finish before saving the session.")
                       : tr("Open a model before saving a session."));
    return;
  }
  QString file = path;
  if (!file.endsWith(kSessionSuffix, Qt::CaseInsensitive)) {
    if (file.endsWith(".json", Qt::CaseInsensitive)) file.chop(5);
    file += kSessionSuffix;
  }
  std::shared_ptr<const Session> s = session_;
  start(Job::Save, [s, f = file.toStdString()] {
    JobResult r;
    r.path = f;
    r.status = s->save(f);
    return r;
  });
}

void MainWindow::runPipeline() {
  if (isBusy()) return;
  if (!session_) {
    openWithDialog();
    return;
  }
  auto shapes = parseInputShapes(inputShapes().toStdString());
  if (!shapes) {
    showError(qs(shapes.message()));
    return;
  }
  detachViews();  // the worker rewrites the snapshots and drops the report
  std::shared_ptr<Session> s = session_;
  const std::string pipe = pipeline().toStdString();
  Progress progress = progressSink();
  CancelToken cancel = cancel_;
  start(Job::Optimize, [s, pipe, shapes = *shapes, progress, cancel] {
    JobResult r;
    if (auto bound = s->bindInputShapes(shapes); !bound) {
      r.status = bound.status();
      return r;
    }
    r.status = s->optimize(pipe, progress, cancel);
    return r;
  });
}

void MainWindow::startCompare() {
  std::shared_ptr<Session> s = session_;
  Progress progress = progressSink();
  CancelToken cancel = cancel_;
  const QMenu* engines = findChild<QMenu*>("engineMenu");
  const bool cuda = engineChoice(engines) == "cuda";
  const std::string library = cudaLibraryChoice(engines).toStdString();
  compareLabel_->setText(cuda ? tr("compare (CUDA): running...") : tr("compare: running..."));
  comparePanel_->setSession(nullptr);     // the worker writes the report
  tensorInspector_->setSession(nullptr);  // and the tensors it keeps
  comparePanel_->setStatusText(compareLabel_->text());
  start(Job::Compare, [s, progress, cancel, cuda, library] {
    s->cudaRun.library = library;  // the worker owns the session now
    return onRandomInputs(*s, [&](const auto& inputs, JobResult& r) {
      auto report = cuda ? s->compareCuda(inputs, s->compareOptions, progress, cancel)
                         : s->compare(inputs, s->compareOptions, progress, cancel);
      if (report) r.summary = report->verdict();
      return report.status();
    });
  });
}

void MainWindow::startIsolatedCompare() {
  if (!session_ || isBusy()) return;
  std::shared_ptr<Session> s = session_;
  Progress progress = progressSink();
  CancelToken cancel = cancel_;
  comparePanel_->setSession(nullptr);     // the worker writes the report
  tensorInspector_->setSession(nullptr);  // and the tensors it keeps
  comparePanel_->setStatusText(tr("alone: compiling every kernel on its own..."));
  start(Job::Isolated, [s, progress, cancel] {
    return onRandomInputs(*s, [&](const auto& inputs, JobResult&) {
      return s->compareIsolated(inputs, s->compareOptions, progress, cancel).status();
    });
  });
}

void MainWindow::startProfile() {
  if (!session_ || isBusy()) return;
  std::shared_ptr<Session> s = session_;
  Progress progress = progressSink();
  CancelToken cancel = cancel_;
  profilePanel_->setReport(nullptr);
  profilePanel_->setStatusText(tr("profile: timing every kernel..."));
  profileDock_->show();
  profileDock_->raise();
  start(Job::Profile, [s, progress, cancel] {
    return onRandomInputs(*s, [&](const auto& inputs, JobResult&) {
      return s->profile(inputs, ProfileRequest{}, progress, cancel).status();
    });
  });
}

void MainWindow::applyPerturbation(const QString& spec) {
  if (!session_ || isBusy()) return;
  Perturbations p;
  for (const QString& part : spec.split(',', Qt::SkipEmptyParts)) {
    auto parsed = parsePerturbation(part.trimmed().toStdString());
    if (!parsed) {
      showError(qs(parsed.message()));
      return;
    }
    p[parsed->first] = parsed->second;
  }
  session_->perturbations = std::move(p);
  startCompare();
}

void MainWindow::startCode(int tab) {
  if (!session_) return;
  if (isBusy()) {
    pendingCodeTab_ = tab;
    return;
  }
  std::shared_ptr<Session> s = session_;
  Progress progress = progressSink();
  CancelToken cancel = cancel_;
  start(Job::Code, [s, tab, progress, cancel] {
    static const Session::CodeKind kinds[] = {Session::CodeKind::LoopIr, Session::CodeKind::LlvmIr,
                                              Session::CodeKind::Asm, Session::CodeKind::CudaC,
                                              Session::CodeKind::Ptx};
    JobResult r;
    r.codeTab = tab;
    auto code = s->annotatedCode(kinds[tab], progress, cancel);
    if (code) {
      r.summary = std::move(code->text);
      r.spans = std::move(code->spans);
    } else {
      r.status = code.status();
    }
    return r;
  });
}

void MainWindow::start(Job job, std::function<JobResult()> work) {
  job_ = job;
  cancel_.reset();
  for (QAction* act : {openAct_, openSessionAct_, saveSessionAct_, runAct_}) act->setEnabled(false);
  progress_->setValue(0);
  progress_->show();
  stageLabel_->setText(job == Job::Save ? tr("saving...") : QString());
  stageLabel_->show();
  cancelButton_->setVisible(job != Job::Save);
  watcher_->setFuture(QtConcurrent::run(std::move(work)));
}

Progress MainWindow::progressSink() {
  // Called on the worker thread; the window outlives the job (see ~MainWindow).
  return [this](double fraction, const std::string& stage) {
    QMetaObject::invokeMethod(
        this, [this, fraction, s = qs(stage)] { onProgress(fraction, s); }, Qt::QueuedConnection);
  };
}

void MainWindow::onProgress(double fraction, const QString& stage) {
  if (!isBusy()) return;
  progress_->setValue(static_cast<int>(std::clamp(fraction, 0.0, 1.0) * 1000));
  stageLabel_->setText(stage);
}

void MainWindow::onJobDone() {
  const Job job = job_;
  const JobResult r = watcher_->result();
  setIdle();
  switch (job) {
    case Job::Open:
      finishOpen(r);
      break;
    case Job::Optimize:
      finishOptimize(r);
      break;
    case Job::Compare:
      finishCompare(r);
      break;
    case Job::Code:
      codePane_->setCode(r.codeTab, qs(r.status ? r.summary : r.status.message()), !r.status,
                         r.spans);
      break;
    case Job::Isolated:
      comparePanel_->setSession(session_.get());
      tensorInspector_->setSession(session_.get());
      if (!r.status && !cancel_.cancelled()) showError(qs(r.status.message()));
      break;
    case Job::Save:
      finishSave(r);
      break;
    case Job::Tap:
      finishTap(r);
      break;
    case Job::Profile:
      if (session_ && session_->lastProfile()) {
        profilePanel_->setReport(&*session_->lastProfile());
        graphView_->setKernelTimes(session_->kernelSecondsByValue());
      } else {
        profilePanel_->setStatusText(cancel_.cancelled()
                                         ? tr("profile: cancelled")
                                         : tr("profile: failed (%1)").arg(qs(r.status.message())));
        if (!r.status && !cancel_.cancelled()) showError(qs(r.status.message()));
      }
      break;
    case Job::None:
      break;
  }
  if (!isBusy() && pendingCodeTab_ >= 0) {
    const int tab = std::exchange(pendingCodeTab_, -1);
    startCode(tab);
  }
  if (!isBusy()) emit jobsFinished();
}

void MainWindow::setIdle() {
  job_ = Job::None;
  for (QAction* act : {openAct_, openSessionAct_, runAct_}) act->setEnabled(true);
  saveSessionAct_->setEnabled(session_ != nullptr);
  progress_->hide();
  stageLabel_->hide();
  cancelButton_->hide();
}

void MainWindow::finishOpen(const JobResult& r) {
  if (!r.session) {  // the import failed: keep what was open before
    if (!cancel_.cancelled()) showError(qs(r.status.message()));
    return;
  }
  if (r.needsDims) {  // still not shown: the old session stays until the answer
    askDims(r);
    return;
  }
  detachViews();
  session_ = r.session;
  saveSessionAct_->setEnabled(true);
  const QString path = qs(session_->modelPath());
  setWindowTitle(tr("FuseLens \u2014 %1").arg(QFileInfo(path).fileName()));
  compareLabel_->clear();
  if (!session_->pipeline().empty()) setPipeline(qs(session_->pipeline()));
  if (!session_->boundInputShapes().empty()) {  // a restored session's, or the box's own
    QStringList items;
    for (const auto& [name, dims] : session_->boundInputShapes()) {
      QStringList ds;
      for (int64_t d : dims) ds << QString::number(d);
      items << qs(name) + "=" + ds.join('x');
    }
    setInputShapes(items.join("; "));
  }
  addRecentFile(r.path.empty() ? path : qs(r.path));
  bucketPanel_->setModel(path, r.dims, r.dimValues);
  emit modelOpened(path);
  if (!r.summary.empty()) statusBar()->showMessage(qs(r.summary), kWarningMs);
  if (!r.warnings.empty()) {
    QStringList lines;
    for (const Diagnostic& d : r.warnings) lines << qs(d.str());
    statusBar()->showMessage(tr("Session restored with warnings: %1").arg(lines.join("; ")),
                             kWarningMs);
  }
  finishOptimize(r);
}

void MainWindow::finishOptimize(const JobResult& r) {
  bucketPanel_->setPipeline(qs(session_->pipeline()));  // a sweep runs what the window ran
  passList_->setSession(session_.get());
  diffPane_->setSession(session_.get());
  inspector_->setSession(session_.get());
  if (!r.status) {
    compareLabel_->setText(cancel_.cancelled() ? tr("pipeline cancelled") : tr("pipeline failed"));
    shown_ = &session_->original();
    graphView_->showGraph(*shown_);
    irPane_->setPlainText(qs(printGraph(*shown_)));
    if (!cancel_.cancelled()) showError(qs(r.status.message()));
    return;
  }
  emit pipelineFinished();
  if (passList_->currentSnapshot() < 0) selectSnapshot(-1);
  startCompare();
}

void MainWindow::finishCompare(const JobResult& r) {
  tensorInspector_->setSession(session_.get());  // a failed compare keeps the last tensors
  if (!r.status) {
    compareLabel_->setText(cancel_.cancelled()
                               ? tr("compare: cancelled")
                               : tr("compare: failed (%1)").arg(qs(r.status.message())));
    comparePanel_->setStatusText(compareLabel_->text());
    if (!cancel_.cancelled()) showError(qs(r.status.message()));
    return;
  }
  compareLabel_->setText(qs(r.summary));
  comparePanel_->setSession(session_.get());
  if (session_->lastReport()) graphView_->setHeat(heatByValue(*session_->lastReport()));
  if (codeDock_->isVisible()) codePane_->invalidate();
  emit compareFinished(compareLabel_->text());
}

void MainWindow::finishSave(const JobResult& r) {
  if (!r.status) {
    showError(tr("Could not save the session: %1").arg(qs(r.status.message())));
    return;
  }
  const QString path = qs(r.path);
  addRecentFile(path);
  statusBar()->showMessage(tr("Saved session to %1").arg(path), kWarningMs);
  emit sessionSaved(path);
}

}  // namespace fuselens::viewer
