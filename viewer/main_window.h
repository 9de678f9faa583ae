// The main window: pass timeline (left), graph (center), IR text (right), a
// toolbar with the pipeline string, and a status bar with progress, Cancel and
// the last compare result. It holds the Session; the widgets observe it.
//
// Long work runs on a worker thread in up to two jobs:
//   open:     a fresh Session imports the model and runs the pipeline (the old
//             session stays on screen meanwhile, untouched);
//   optimize: Run re-runs the pipeline on the held session; the pass list is
//             detached from it while the worker rewrites its snapshots;
//   compare:  compiles and compares with the eager run on randomInputs(0).
//             Compile/compare write only the session's compiled module and
//             report, so the widgets keep reading its snapshots meanwhile.
#pragma once

#include <QMainWindow>
#include <QString>
#include <functional>
#include <memory>
#include <string>

#include "core/ir/ids.h"
#include "core/support/cancel.h"
#include "core/support/status.h"

class QAction;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QToolButton;
template <typename T>
class QFutureWatcher;

namespace fuselens {
class Graph;
class Session;
}  // namespace fuselens

namespace fuselens::viewer {

class GraphView;
class PassList;

struct JobResult {
  Status status;
  std::shared_ptr<Session> session;  // the open job's new session, once imported
  std::string summary;               // the compare job's status line
};

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  void openFile(const QString& path);  // imports, optimizes, then compares
  void runPipeline();                  // re-optimizes with the toolbar's pipeline
  void setPipeline(const QString& pipeline);
  QString pipeline() const;
  void selectSnapshot(int row);  // -1 selects the last
  void cancel();

  // Off: errors go only to errorShown, no modal box (tests, --screenshot).
  void setModalErrors(bool modal) { modalErrors_ = modal; }
  bool isBusy() const { return job_ != Job::None; }
  QString compareText() const;
  const Session* session() const { return session_.get(); }
  GraphView* graphView() const { return graphView_; }
  PassList* passList() const { return passList_; }
  QPlainTextEdit* irPane() const { return irPane_; }

 signals:
  void modelOpened(const QString& path);
  void pipelineFinished();  // the session's snapshots are ready
  void compareFinished(const QString& summary);
  void errorShown(const QString& message);
  void jobsFinished();  // no work left running

 protected:
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  enum class Job { None, Open, Optimize, Compare };

  void buildActions();
  void buildLayout();
  void buildStatusBar();
  void openWithDialog();
  void start(Job job, std::function<JobResult()> work);
  Progress progressSink();
  void onProgress(double fraction, const QString& stage);
  void onJobDone();
  void finishOpen(const JobResult& r);
  void finishOptimize(const JobResult& r);
  void finishCompare(const JobResult& r);
  void startCompare();
  void showSnapshot(int row);
  void onNodeSelected(NodeId node);
  void showError(const QString& message);
  void setIdle();

  std::shared_ptr<Session> session_;
  CancelToken cancel_;
  Job job_ = Job::None;
  QFutureWatcher<JobResult>* watcher_;
  bool modalErrors_ = true;
  const Graph* shown_ = nullptr;  // the graph on screen, owned by session_

  PassList* passList_ = nullptr;
  GraphView* graphView_ = nullptr;
  QPlainTextEdit* irPane_ = nullptr;
  QLineEdit* pipelineEdit_ = nullptr;
  QAction* openAct_ = nullptr;
  QAction* runAct_ = nullptr;
  QLabel* compareLabel_ = nullptr;
  QLabel* stageLabel_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QToolButton* cancelButton_ = nullptr;
};

}  // namespace fuselens::viewer
