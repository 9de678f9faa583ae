// MainWindow: widgets, docks, actions, and the views' reactions to each
// other. The worker jobs are in main_window_jobs.cpp.
#include "viewer/main_window.h"

#include <QAction>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
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
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTextCursor>
#include <QToolBar>
#include <QToolButton>
#include <algorithm>

#include "core/ir/printer.h"
#include "session/session.h"
#include "viewer/code_pane.h"
#include "viewer/compare_panel.h"
#include "viewer/engine_menu.h"
#include "viewer/fusion_inspector.h"
#include "viewer/graph_items.h"
#include "viewer/graph_view.h"
#include "viewer/graphview_names.h"
#include "viewer/pass_diff_pane.h"
#include "viewer/pass_list.h"
#include "viewer/precision_menu.h"
#include "viewer/profile_panel.h"
#include "viewer/tensor_inspector.h"

namespace fuselens::viewer {
namespace {

constexpr int kMaxRecentFiles = 8;
const char* const kRecentKey = "recentFiles";

QString qs(const std::string& s) { return QString::fromStdString(s); }

bool isSessionPath(const QString& path) {
  return path.endsWith(".fuselens.json", Qt::CaseInsensitive);
}

bool isOpenablePath(const QString& path) {
  return path.endsWith(".onnx", Qt::CaseInsensitive) || isSessionPath(path);
}

}  // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent), watcher_(new QFutureWatcher<JobResult>(this)) {
  setWindowTitle(tr("FuseLens"));
  setAcceptDrops(true);
  buildLayout();
  buildDocks();
  buildActions();
  buildStatusBar();
  buildTour();
  connect(watcher_, &QFutureWatcher<JobResult>::finished, this, &MainWindow::onJobDone);
  resize(1400, 900);
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
  diffPane_ = new PassDiffPane(this);
  irTabs_ = new QTabWidget(this);
  irTabs_->setObjectName("irTabs");
  irTabs_->addTab(irPane_, tr("IR"));
  irTabs_->addTab(diffPane_, tr("Pass diff"));

  auto* splitter = new QSplitter(Qt::Horizontal, this);
  splitter->addWidget(passList_);
  splitter->addWidget(graphView_);
  splitter->addWidget(irTabs_);
  splitter->setStretchFactor(0, 0);
  splitter->setStretchFactor(1, 1);
  splitter->setStretchFactor(2, 0);
  splitter->setSizes({250, 700, 450});
  setCentralWidget(splitter);

  connect(passList_, &PassList::snapshotSelected, this, &MainWindow::showSnapshot);
  connect(diffPane_, &PassDiffPane::pairPicked, this, &MainWindow::showSnapshotPair);
  connect(graphView_, &GraphView::nodeSelected, this, &MainWindow::onNodeSelected);
}

void MainWindow::buildActions() {
  openAct_ = new QAction(tr("&Open Model..."), this);
  openAct_->setShortcut(QKeySequence::Open);
  connect(openAct_, &QAction::triggered, this, &MainWindow::openWithDialog);
  openSessionAct_ = new QAction(tr("Open &Session..."), this);
  openSessionAct_->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
  connect(openSessionAct_, &QAction::triggered, this, &MainWindow::openSessionWithDialog);
  saveSessionAct_ = new QAction(tr("&Save Session..."), this);
  saveSessionAct_->setShortcut(QKeySequence::Save);
  connect(saveSessionAct_, &QAction::triggered, this, &MainWindow::saveSessionWithDialog);
  runAct_ = new QAction(tr("&Run"), this);
  runAct_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
  runAct_->setToolTip(tr("Run the pipeline, compile and compare with the eager reference"));
  connect(runAct_, &QAction::triggered, this, &MainWindow::runPipeline);
  buildFileMenu();

  QMenu* pipe = menuBar()->addMenu(tr("&Pipeline"));
  pipe->addAction(runAct_);
  pipe->addSeparator();
  pipe->addAction(passList_->stepBackAction());
  pipe->addAction(passList_->stepForwardAction());
  pipe->addAction(passList_->hideUnchangedAction());
  QMenu* precisionParent = pipe;  // filled once the pipeline box exists, below

  auto* fitAct = new QAction(tr("&Fit graph"), this);
  fitAct->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
  connect(fitAct, &QAction::triggered, graphView_, &GraphView::fitGraph);
  heatAct_ = new QAction(tr("Divergence &heat"), this);
  heatAct_->setCheckable(true);
  heatAct_->setToolTip(
      tr("Color nodes by their outputs' error over the error f32 rounding alone explains"));
  connect(heatAct_, &QAction::toggled, graphView_, &GraphView::setHeatVisible);
  auto* findAct = new QAction(tr("&Find node"), this);
  findAct->setShortcut(QKeySequence::Find);
  QMenu* view = menuBar()->addMenu(tr("&View"));
  view->addAction(fitAct);
  view->addAction(findAct);
  view->addAction(heatAct_);
  view->addSeparator();
  // Scopes: depth 0 closes all; double-click and +/- work on one scope.
  for (int depth = 0; depth <= 3; ++depth) {
    auto* act = new QAction(tr("Expand scopes to depth %1").arg(depth), this);
    connect(act, &QAction::triggered, this, [this, depth] { graphView_->expandToDepth(depth); });
    view->addAction(act);
  }
  diffAct_ = new QAction(tr("&Diff with the previous step"), this);
  diffAct_->setCheckable(true);
  diffAct_->setToolTip(
      tr("Mark ops the pass added or changed, count them per scope, dim the rest "
         "(against snapshot A when it is picked in the Pass diff tab)"));
  connect(diffAct_, &QAction::toggled, this,
          [this] { showSnapshotPair(diffPane_->snapshotA(), shownRow_); });
  view->addAction(diffAct_);
  auto* unfocusAct = new QAction(tr("Show the whole graph"), this);
  connect(unfocusAct, &QAction::triggered, this, [this] { graphView_->focusScope(QString()); });
  view->addAction(unfocusAct);
  auto* findPrevAct = new QAction(tr("Find previous"), this);
  findPrevAct->setShortcut(QKeySequence::FindPrevious);
  connect(findPrevAct, &QAction::triggered, this, [this] { findNode(searchEdit_->text(), -1); });
  auto* findNextAct = new QAction(tr("Find next"), this);
  findNextAct->setShortcut(QKeySequence::FindNext);
  connect(findNextAct, &QAction::triggered, this, [this] { findNode(searchEdit_->text()); });
  view->addAction(findNextAct);
  view->addAction(findPrevAct);
  view->addSeparator();
  view->addAction(inspectorDock_->toggleViewAction());
  view->addAction(compareDock_->toggleViewAction());
  view->addAction(profileDock_->toggleViewAction());
  view->addAction(bucketDock_->toggleViewAction());
  view->addAction(codeDock_->toggleViewAction());

  pipelineEdit_ = new QLineEdit(qs(defaultPipeline()), this);
  pipelineEdit_->setMinimumWidth(360);
  pipelineEdit_->setToolTip(tr("Pipeline: comma-separated passes, options in braces"));
  connect(pipelineEdit_, &QLineEdit::returnPressed, this, &MainWindow::runPipeline);
  precisionParent->addSeparator();
  addPrecisionMenu(
      precisionParent, pipelineEdit_,
      [this] {
        if (session_) runPipeline();
      },
      [this](const QString& why) { showError(why); });
  addEngineMenu(precisionParent, [this] {
    if (session_ && !isBusy() && !session_->snapshots().empty()) startCompare();
  });
  shapesEdit_ = new QLineEdit(this);
  shapesEdit_->setObjectName("inputShapes");
  shapesEdit_->setPlaceholderText(tr("input shapes, e.g. x=1x3x224x224"));
  shapesEdit_->setToolTip(
      tr("Shapes for inputs with dynamic dims (name=AxBxC; separated by ';'): "
         "compiling and comparing need static shapes. Applied when a model is "
         "opened or the pipeline reruns."));
  shapesEdit_->setMaximumWidth(220);
  connect(shapesEdit_, &QLineEdit::returnPressed, this, &MainWindow::runPipeline);
  searchEdit_ = new QLineEdit(this);
  searchEdit_->setObjectName("searchBox");
  searchEdit_->setPlaceholderText(tr("Find node (name, op, tensor, attr=value)"));
  searchEdit_->setClearButtonEnabled(true);
  searchEdit_->setMaximumWidth(240);
  connect(searchEdit_, &QLineEdit::returnPressed, this, [this] { findNode(searchEdit_->text()); });
  connect(findAct, &QAction::triggered, this, [this] {
    searchEdit_->setFocus();
    searchEdit_->selectAll();
  });

  QToolBar* bar = addToolBar(tr("Pipeline"));
  bar->setObjectName("pipelineToolBar");
  bar->setMovable(false);
  bar->addAction(openAct_);
  bar->addSeparator();
  bar->addWidget(new QLabel(tr(" Pipeline: "), bar));
  bar->addWidget(pipelineEdit_);
  bar->addWidget(shapesEdit_);
  bar->addAction(runAct_);
  bar->addSeparator();
  bar->addAction(passList_->stepBackAction());
  bar->addAction(passList_->stepForwardAction());
  bar->addSeparator();
  bar->addAction(heatAct_);
  bar->addWidget(searchEdit_);
}

void MainWindow::buildFileMenu() {
  auto* quitAct = new QAction(tr("&Quit"), this);
  quitAct->setShortcut(QKeySequence::Quit);
  connect(quitAct, &QAction::triggered, this, &QWidget::close);
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(openAct_);
  file->addAction(openSessionAct_);
  recentMenu_ = file->addMenu(tr("Open &Recent"));
  connect(recentMenu_, &QMenu::aboutToShow, this, &MainWindow::fillRecentMenu);
  file->addAction(saveSessionAct_);
  file->addSeparator();
  file->addAction(quitAct);
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

void MainWindow::setInputShapes(const QString& shapes) { shapesEdit_->setText(shapes); }

QString MainWindow::inputShapes() const { return shapesEdit_->text(); }

void MainWindow::setHeatVisible(bool visible) { heatAct_->setChecked(visible); }

void MainWindow::cancel() {
  cancel_.cancel();
  stageLabel_->setText(tr("cancelling..."));
}

// --- views ---

void MainWindow::attachViews() {
  passList_->setSession(session_.get());
  diffPane_->setSession(session_.get());
  inspector_->setSession(session_.get());
  comparePanel_->setSession(session_.get());
  tensorInspector_->setSession(session_.get());
}

void MainWindow::detachViews() {
  passList_->setSession(nullptr);
  diffPane_->setSession(nullptr);
  inspector_->setSession(nullptr);
  comparePanel_->setSession(nullptr);
  tensorInspector_->setSession(nullptr);
  profilePanel_->setReport(nullptr);  // the profile was of the compiled module now dropped
  profilePanel_->setStatusText(
      tr("No profile yet: Profile times every kernel of the compiled model."));
  graphView_->setHeat({});
  graphView_->setKernelTimes({});
  shown_ = nullptr;
}

void MainWindow::selectSnapshot(int row) {
  const int rows = passList_->passModel()->rowCount();
  passList_->selectSnapshot(row < 0 ? rows - 1 : row);
}

void MainWindow::showSnapshot(int row) { showSnapshotPair(row - 1, row); }

void MainWindow::showSnapshotPair(int a, int b) {
  const int count = session_ ? static_cast<int>(session_->snapshots().size()) : 0;
  if (b < 0 || b >= count || a >= count) return;
  if (passList_->currentSnapshot() != b) {
    const QSignalBlocker quiet(passList_);  // this call shows it, with its own A
    passList_->selectSnapshot(b);
  }
  const auto& snaps = session_->snapshots();
  shown_ = &snaps[static_cast<size_t>(b)].graph();
  shownRow_ = b;
  const bool diff = diffAct_->isChecked() && a >= 0 && a != b;
  graphView_->setDiffBase(diff ? &snaps[static_cast<size_t>(a)].graph() : nullptr);
  graphView_->showGraph(*shown_, decisionsUpTo(snaps, b));
  irPane_->setPlainText(qs(printGraph(*shown_)));
  diffPane_->showPair(std::max(a, 0), b);
  inspector_->setSnapshot(b);
  searchHit_ = -1;
}

void MainWindow::onNodeSelected(NodeId node) {
  if (!shown_ || !shown_->hasNode(node)) return;
  const Node& n = shown_->node(node);
  if (session_ && shown_ == &session_->finalGraph())
    codePane_->showKernel(qs(session_->kernelNameOf(node)));
  if (n.outputs.empty()) return;
  tensorInspector_->showTensor(qs(shown_->value(n.outputs[0]).name));
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

// --- files ---

QStringList MainWindow::recentFiles() const { return QSettings().value(kRecentKey).toStringList(); }

void MainWindow::addRecentFile(const QString& path) {
  QStringList files = recentFiles();
  const QString abs = QFileInfo(path).absoluteFilePath();
  files.removeAll(abs);
  files.prepend(abs);
  while (files.size() > kMaxRecentFiles) files.removeLast();
  QSettings().setValue(kRecentKey, files);
}

void MainWindow::fillRecentMenu() {
  recentMenu_->clear();
  for (const QString& path : recentFiles()) {
    QAction* act = recentMenu_->addAction(QFileInfo(path).fileName());
    act->setToolTip(path);
    act->setEnabled(!isBusy() && QFileInfo::exists(path));
    connect(act, &QAction::triggered, this, [this, path] { openAny(path); });
  }
  if (recentMenu_->isEmpty()) recentMenu_->addAction(tr("(none)"))->setEnabled(false);
}

void MainWindow::openAny(const QString& path) {
  if (isSessionPath(path))
    openSession(path);
  else
    openFile(path);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  const QList<QUrl> urls = event->mimeData()->urls();
  if (urls.size() == 1 && urls[0].isLocalFile() && isOpenablePath(urls[0].toLocalFile()))
    event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  const QList<QUrl> urls = event->mimeData()->urls();
  if (urls.isEmpty()) return;
  event->acceptProposedAction();
  openAny(urls[0].toLocalFile());
}

}  // namespace fuselens::viewer
