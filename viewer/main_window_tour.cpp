// MainWindow's guided navigation, where an op is shown once the jobs and the
// layout it waits for are done: Help > Tour (a dock with the chapter's text
// and one menu entry per chapter of docs/tour.md, viewer/tour.h; opening a
// chapter is opening a sample, the pass, view and op follow as jobs finish),
// and the ops a clicked line of generated code came from.
#include <QAction>
#include <QDockWidget>
#include <QMenuBar>
#include <QTabWidget>
#include <utility>

#include "session/pass_diff.h"
#include "session/pipeline_choice.h"
#include "session/session.h"
#include "viewer/code_pane.h"
#include "viewer/graph_view.h"
#include "viewer/main_window.h"
#include "viewer/pass_diff_pane.h"
#include "viewer/pass_list.h"
#include "viewer/tour.h"

namespace fuselens::viewer {

void MainWindow::buildTour() {
  chapters_ = std::make_shared<const QList<TourChapter>>(tourChapters());
  tourPanel_ = new TourPanel(this);
  tourDock_ = new QDockWidget(tr("Tour"), this);
  tourDock_->setObjectName("tourDock");
  tourDock_->setWidget(tourPanel_);
  addDockWidget(Qt::LeftDockWidgetArea, tourDock_);
  tourDock_->hide();
  connect(tourPanel_, &TourPanel::chapterRequested, this, &MainWindow::openTourChapter);

  QMenu* tour = menuBar()->addMenu(tr("&Help"))->addMenu(tr("&Tour"));
  tour->setObjectName("tourMenu");
  for (int i = 0; i < int(chapters_->size()); ++i) {
    QAction* act = tour->addAction((*chapters_)[i].title);
    connect(act, &QAction::triggered, this, [this, i] { openTourChapter(i); });
  }
  if (chapters_->isEmpty()) tour->addAction(tr("(no tour in this build)"))->setEnabled(false);
  connect(this, &MainWindow::pipelineFinished, this, &MainWindow::showTourPass);
  connect(this, &MainWindow::jobsFinished, this, &MainWindow::selectTourNode);
}

int MainWindow::tourChapterCount() const { return int(chapters_->size()); }

void MainWindow::openTourChapter(int index) {
  if (index < 0 || index >= tourChapterCount()) return;
  if (isBusy()) {
    showError(tr("Wait for the current run to finish, or cancel it, before the next chapter."));
    return;
  }
  const TourChapter& c = (*chapters_)[index];
  // The chapter's precision goes into the box (the menu follows it); the open below runs it.
  auto pipeline = replacePrecision(defaultPipeline(),
                                   c.precision.isEmpty() ? "f32" : c.precision.toStdString());
  setPipeline(QString::fromStdString(pipeline ? *pipeline : defaultPipeline()));
  setInputShapes(c.shape);
  tourPanel_->showChapter(index, c, tourChapterCount());
  tourDock_->show();
  tourPending_ = index;
  openFile(samplesDir() + "/" + c.sample);
  if (!isBusy()) tourPending_ = -1;  // the open was refused (and said why)
}

// The pipeline ran: show the chapter's pass and bring its view forward.
void MainWindow::showTourPass() {
  if (tourPending_ < 0 || !session_) return;
  const TourChapter& c = (*chapters_)[tourPending_];
  const auto& snaps = session_->snapshots();
  auto row = c.pass == "-1" ? Expected<size_t>(snaps.size() - 1)
                            : findSnapshot(snaps, c.pass.toStdString());
  selectSnapshot(row ? int(*row) : -1);
  const bool diff = c.view == "diff" || c.view == "side";
  irTabs_->setCurrentIndex(diff ? 1 : 0);
  if (diff) diffPane_->setSideBySide(c.view == "side");
  if (c.view == "code") {
    codeDock_->show();
    codePane_->setCurrentTab(CodePane::LoopIr);
  }
  if (c.view == "inspector") inspectorDock_->raise();
  if (c.view == "compare") {
    compareDock_->raise();
    setHeatVisible(true);
  }
}

// Every job is done (compare, and the code the view asked for): select the op.
void MainWindow::selectTourNode() {
  if (tourPending_ < 0 || !session_) return;
  const int index = std::exchange(tourPending_, -1);
  const TourChapter& c = (*chapters_)[index];
  auto select = [this, index, name = c.select] {
    if (!name.isEmpty()) findNode(name);
    emit tourChapterShown(index);
  };
  if (graphView_->isLayoutPending())
    connect(graphView_, &GraphView::layoutFinished, this, select, Qt::SingleShotConnection);
  else
    select();
}

// The code's kernels run the final graph's ops: show that snapshot, open the
// scopes above the first op, and ring them all once the layout has settled.
void MainWindow::selectOps(const QStringList& ops) {
  if (!session_ || ops.isEmpty() || session_->snapshots().empty()) return;
  const int last = int(session_->snapshots().size()) - 1;
  if (shownRow_ != last) selectSnapshot(last);
  auto ring = [this, ops] { graphView_->highlightNodes(ops); };
  auto reveal = [this, ops, ring] {
    graphView_->revealNode(ops.first());
    if (graphView_->isLayoutPending())
      connect(graphView_, &GraphView::layoutFinished, this, ring, Qt::SingleShotConnection);
    else
      ring();
  };
  if (graphView_->isLayoutPending())
    connect(graphView_, &GraphView::layoutFinished, this, reveal, Qt::SingleShotConnection);
  else
    reveal();
}

}  // namespace fuselens::viewer
