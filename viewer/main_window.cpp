// MainWindow: widgets, actions, and the worker jobs that drive the Session.
#include "viewer/main_window.h"

#include <QAction>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFutureWatcher>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QSplitter>
#include <QStatusBar>
#include <QTextCursor>
#include <QToolBar>
#include <QToolButton>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>

#include "core/ir/printer.h"
#include "core/session/session.h"
#include "viewer/compare_summary.h"
#include "viewer/graph_view.h"
#include "viewer/pass_list.h"

namespace fuselens::viewer {
namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

bool isOnnxPath(const QString& path) { return path.endsWith(".onnx", Qt::CaseInsensitive); }

}  // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent), watcher_(new QFutureWatcher<JobResult>(this)) {
  setWindowTitle(tr("FuseLens"));
  setAcceptDrops(true);
  buildLayout();
  buildActions();
  buildStatusBar();
  connect(watcher_, &QFutureWatcher<JobResult>::finished, this, &MainWindow::onJobDone);
  resize(1400, 860);
}

MainWindow::~MainWindow() {
  // The worker holds the session and posts progress to this window: stop it
  // and wait, so nothing runs against a window being destroyed.
  if (isBusy()) {
    cancel_.cancel();
    watcher_->waitForFinished();
  }
}

void MainWindow::buildLayout() {
  passList_ = new PassList(this);
  graphView_ = new GraphView(this);
  irPane_ = new QPlainTextEdit(this);
  irPane_->setReadOnly(true);
  irPane_->setLineWrapMode(QPlainTextEdit::NoWrap);
  irPane_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  irPane_->setPlaceholderText(tr("Open an ONNX model (File > Open, or drop it here)."));

  auto* splitter = new QSplitter(Qt::Horizontal, this);
  splitter->addWidget(passList_);
  splitter->addWidget(graphView_);
  splitter->addWidget(irPane_);
  splitter->setStretchFactor(0, 0);
  splitter->setStretchFactor(1, 1);
  splitter->setStretchFactor(2, 0);
  splitter->setSizes({250, 650, 500});
  setCentralWidget(splitter);

  connect(passList_, &PassList::snapshotSelected, this, &MainWindow::showSnapshot);
  connect(graphView_, &GraphView::nodeSelected, this, &MainWindow::onNodeSelected);
}

void MainWindow::buildActions() {
  openAct_ = new QAction(tr("&Open..."), this);
  openAct_->setShortcut(QKeySequence::Open);
  connect(openAct_, &QAction::triggered, this, &MainWindow::openWithDialog);
  auto* quitAct = new QAction(tr("&Quit"), this);
  quitAct->setShortcut(QKeySequence::Quit);
  connect(quitAct, &QAction::triggered, this, &QWidget::close);
  runAct_ = new QAction(tr("&Run"), this);
  runAct_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
  runAct_->setToolTip(tr("Run the pipeline, compile and compare with the eager reference"));
  connect(runAct_, &QAction::triggered, this, &MainWindow::runPipeline);
  auto* fitAct = new QAction(tr("&Fit graph"), this);
  fitAct->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
  connect(fitAct, &QAction::triggered, graphView_, &GraphView::fitGraph);

  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(openAct_);
  file->addSeparator();
  file->addAction(quitAct);
  QMenu* pipe = menuBar()->addMenu(tr("&Pipeline"));
  pipe->addAction(runAct_);
  pipe->addSeparator();
  pipe->addAction(passList_->stepBackAction());
  pipe->addAction(passList_->stepForwardAction());
  menuBar()->addMenu(tr("&View"))->addAction(fitAct);

  pipelineEdit_ = new QLineEdit(qs(defaultPipeline()), this);
  pipelineEdit_->setMinimumWidth(360);
  pipelineEdit_->setToolTip(tr("Pipeline: comma-separated passes, options in braces"));
  connect(pipelineEdit_, &QLineEdit::returnPressed, this, &MainWindow::runPipeline);

  QToolBar* bar = addToolBar(tr("Pipeline"));
  bar->setObjectName("pipelineToolBar");
  bar->setMovable(false);
  bar->addAction(openAct_);
  bar->addSeparator();
  bar->addWidget(new QLabel(tr(" Pipeline: "), bar));
  bar->addWidget(pipelineEdit_);
  bar->addAction(runAct_);
  bar->addSeparator();
  bar->addAction(passList_->stepBackAction());
  bar->addAction(passList_->stepForwardAction());
}

void MainWindow::buildStatusBar() {
  compareLabel_ = new QLabel(this);
  compareLabel_->setObjectName("compareLabel");
  compareLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  stageLabel_ = new QLabel(this);
  progress_ = new QProgressBar(this);
  progress_->setRange(0, 1000);
  progress_->setMaximumWidth(220);
  progress_->setTextVisible(false);
  cancelButton_ = new QToolButton(this);
  cancelButton_->setText(tr("Cancel"));
  connect(cancelButton_, &QToolButton::clicked, this, &MainWindow::cancel);
  statusBar()->addWidget(compareLabel_, 1);
  statusBar()->addPermanentWidget(stageLabel_);
  statusBar()->addPermanentWidget(progress_);
  statusBar()->addPermanentWidget(cancelButton_);
  setIdle();
}

QString MainWindow::compareText() const { return compareLabel_->text(); }

QString MainWindow::pipeline() const { return pipelineEdit_->text(); }

void MainWindow::setPipeline(const QString& pipeline) { pipelineEdit_->setText(pipeline); }

void MainWindow::cancel() {
  cancel_.cancel();
  stageLabel_->setText(tr("cancelling..."));
}

// --- jobs ---

void MainWindow::openWithDialog() {
  const QString dir = session_ ? QFileInfo(qs(session_->modelPath())).absolutePath() : QString();
  const QString path = QFileDialog::getOpenFileName(this, tr("Open model"), dir,
                                                    tr("ONNX models (*.onnx);;All files (*)"));
  if (!path.isEmpty()) openFile(path);
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
  Progress progress = progressSink();
  CancelToken cancel = cancel_;
  start(Job::Open, [file, pipe, progress, cancel] {
    JobResult r;
    auto s = std::make_shared<Session>();
    r.status = s->open(file, progress, cancel);
    if (!r.status) return r;
    r.session = s;
    r.status = s->optimize(pipe, progress, cancel);
    return r;
  });
}

void MainWindow::runPipeline() {
  if (isBusy()) return;
  if (!session_) {
    openWithDialog();
    return;
  }
  passList_->setSession(nullptr);  // the worker rewrites the snapshots
  shown_ = nullptr;
  std::shared_ptr<Session> s = session_;
  const std::string pipe = pipeline().toStdString();
  Progress progress = progressSink();
  CancelToken cancel = cancel_;
  start(Job::Optimize, [s, pipe, progress, cancel] {
    JobResult r;
    r.status = s->optimize(pipe, progress, cancel);
    return r;
  });
}

void MainWindow::startCompare() {
  std::shared_ptr<Session> s = session_;
  Progress progress = progressSink();
  CancelToken cancel = cancel_;
  compareLabel_->setText(tr("compare: running..."));
  start(Job::Compare, [s, progress, cancel] {
    JobResult r;
    auto inputs = s->randomInputs(0);
    if (!inputs) {
      r.status = inputs.status();
      return r;
    }
    auto report = s->compare(*inputs, Tolerance{}, progress, cancel);
    if (!report) {
      r.status = report.status();
      return r;
    }
    r.summary = compareSummary(*report, s->finalGraph());
    return r;
  });
}

void MainWindow::start(Job job, std::function<JobResult()> work) {
  job_ = job;
  cancel_.reset();
  openAct_->setEnabled(false);
  runAct_->setEnabled(false);
  progress_->setValue(0);
  progress_->show();
  stageLabel_->show();
  cancelButton_->show();
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
    case Job::None:
      break;
  }
  if (!isBusy()) emit jobsFinished();
}

void MainWindow::setIdle() {
  job_ = Job::None;
  openAct_->setEnabled(true);
  runAct_->setEnabled(true);
  progress_->hide();
  stageLabel_->hide();
  cancelButton_->hide();
}

void MainWindow::finishOpen(const JobResult& r) {
  if (!r.session) {  // the import failed: keep what was open before
    if (!cancel_.cancelled()) showError(qs(r.status.message()));
    return;
  }
  passList_->setSession(nullptr);
  session_ = r.session;
  shown_ = nullptr;
  const QString path = qs(session_->modelPath());
  setWindowTitle(tr("FuseLens \u2014 %1").arg(QFileInfo(path).fileName()));
  compareLabel_->clear();
  emit modelOpened(path);
  finishOptimize(r);
}

void MainWindow::finishOptimize(const JobResult& r) {
  passList_->setSession(session_.get());
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
  if (!r.status) {
    compareLabel_->setText(cancel_.cancelled()
                               ? tr("compare: cancelled")
                               : tr("compare: failed (%1)").arg(qs(r.status.message())));
    if (!cancel_.cancelled()) showError(qs(r.status.message()));
    return;
  }
  compareLabel_->setText(qs(r.summary));
  emit compareFinished(compareLabel_->text());
}

// --- views ---

void MainWindow::selectSnapshot(int row) {
  const int rows = passList_->passModel()->rowCount();
  passList_->selectSnapshot(row < 0 ? rows - 1 : row);
}

void MainWindow::showSnapshot(int row) {
  if (!session_ || row < 0 || row >= static_cast<int>(session_->snapshots().size())) return;
  shown_ = &session_->snapshots()[static_cast<size_t>(row)].graph;
  graphView_->showGraph(*shown_);
  irPane_->setPlainText(qs(printGraph(*shown_)));
}

void MainWindow::onNodeSelected(NodeId node) {
  if (!shown_ || !shown_->hasNode(node)) return;
  const Node& n = shown_->node(node);
  if (n.outputs.empty()) return;
  // Scroll the IR pane to the line that defines the node's first output.
  const QString def = "%" + qs(shown_->value(n.outputs[0]).name) + " =";
  QTextCursor found = irPane_->document()->find(def);
  if (found.isNull()) return;
  irPane_->setTextCursor(found);
  irPane_->centerCursor();
}

void MainWindow::showError(const QString& message) {
  emit errorShown(message);
  if (modalErrors_) QMessageBox::warning(this, tr("FuseLens"), message);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  const QList<QUrl> urls = event->mimeData()->urls();
  if (urls.size() == 1 && urls[0].isLocalFile() && isOnnxPath(urls[0].toLocalFile()))
    event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  const QList<QUrl> urls = event->mimeData()->urls();
  if (urls.isEmpty()) return;
  event->acceptProposedAction();
  openFile(urls[0].toLocalFile());
}

}  // namespace fuselens::viewer
