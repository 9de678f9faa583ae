// The main window: pass timeline (left), graph (center), IR text and pass diff (right), the
// fusion inspector and compare docks (bottom), a toolbar with the pipeline
// string and node search, and a status bar with progress, Cancel and the last
// compare result. It holds the Session; the widgets observe it.
//
// Long work runs on a worker thread, one job at a time:
//   open:     a fresh Session imports the model (or restores a saved session)
//             and runs the pipeline; the old session stays on screen meanwhile.
//             A model with unbound dims stops before the pipeline: the dims
//             dialog asks for them, and a second open job binds them and runs it;
//   optimize: Run re-runs the pipeline on the held session; the views that
//             read its snapshots are detached while the worker rewrites them;
//   compare:  compiles and compares with the eager run on the session's seed
//             and tolerance. It writes only the compiled module and the report,
//             so only the compare dock is detached meanwhile;
//   save:     writes the session file (hashing the model can take a while).
#pragma once

#include <QMainWindow>
#include <QString>
#include <QStringList>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/ids.h"
#include "core/support/cancel.h"
#include "core/support/status.h"
#include "session/dim_suggest.h"
#include "session/provenance.h"

class QAction;
class QDockWidget;
class QLabel;
class QLineEdit;
class QMenu;
class QPlainTextEdit;
class QProgressBar;
class QTabWidget;
class QToolButton;
template <typename T>
class QFutureWatcher;

namespace fuselens {
class Graph;
class Session;
}  // namespace fuselens

namespace fuselens::viewer {

class BucketPanel;
class CodePane;
class ComparePanel;
class ProfilePanel;
class TensorInspector;
class FusionInspector;
class GraphView;
class PassDiffPane;
class TourPanel;
struct TourChapter;
class PassList;

struct JobResult {
  Status status;
  std::shared_ptr<Session> session;  // the open job's new session, once imported
  std::string summary;               // the compare job's status line
  std::vector<Diagnostic> warnings;  // a restored session's warnings
  std::string path;                  // the session file saved or restored
  int codeTab = -1;                  // the code job's tab (its text in `summary`)
  std::vector<CodeSpan> spans;       // the code job's kernels, by line
  // open: the model's symbolic input dims and the values they were bound to;
  // needsDims: none bound yet, so the pipeline waits for the user's answer.
  std::vector<DimSuggestion> dims;
  std::map<std::string, int64_t> dimValues;
  bool needsDims = false;
};

// Asks for a model's unbound dims; nullopt is Cancel (the model is not opened).
using DimsPrompt = std::function<std::optional<std::map<std::string, int64_t>>(
    const QString& modelName, const std::vector<DimSuggestion>& dims)>;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  void openFile(const QString& path);     // imports, optimizes, then compares
  void openSession(const QString& path);  // restores a *.fuselens.json, then compares
  void saveSession(const QString& path);  // adds the .fuselens.json suffix if missing
  void runPipeline();                     // re-optimizes with the toolbar's pipeline
  void setPipeline(const QString& pipeline);
  QString pipeline() const;
  // The Input shapes box: "x=1x3x224x224; mask=1x128", fixing dynamic input dims
  // when a model is opened or rerun (a dim once fixed stays: reopen to change it).
  void setInputShapes(const QString& shapes);
  QString inputShapes() const;
  void selectSnapshot(int row);  // -1 selects the last
  // Shows snapshot `b` (selected in the pass list) with the graph diffed
  // against snapshot `a` and the Pass diff tab on a against b.
  void showSnapshotPair(int a, int b);
  void cancel();
  // Selects and centers the next node whose name contains `text` or whose op
  // is `text`; repeating the same text steps through the matches.
  void findNode(const QString& text, int step = 1);
  void setHeatVisible(bool visible);
  // Shows the last snapshot and rings these ops (a code line's origins),
  // opening the scopes above the first.
  void selectOps(const QStringList& ops);

  // main_window_tour.cpp: Help > Tour (viewer/tour.h). Opens chapter `index`'s
  // sample with the default pipeline, shows its pass and view, and selects its
  // op once every job is done; tourChapterShown says when.
  void openTourChapter(int index);
  int tourChapterCount() const;
  bool isTourPending() const { return tourPending_ >= 0; }
  TourPanel* tourPanel() const { return tourPanel_; }
  QDockWidget* tourDock() const { return tourDock_; }

  // Off: errors go only to errorShown, no modal box (tests, --screenshot), and
  // a model with unbound dims opens with them symbolic unless a prompt is set.
  void setModalErrors(bool modal) { modalErrors_ = modal; }
  // Replaces the unbound-dims dialog (viewer/dims_dialog.h), e.g. in tests. An
  // answer is remembered per model path for this window; a saved session keeps it.
  void setDimsPrompt(DimsPrompt prompt) { dimsPrompt_ = std::move(prompt); }
  bool isBusy() const { return job_ != Job::None; }
  QString compareText() const;
  const Session* session() const { return session_.get(); }
  GraphView* graphView() const { return graphView_; }
  PassList* passList() const { return passList_; }
  QPlainTextEdit* irPane() const { return irPane_; }
  PassDiffPane* diffPane() const { return diffPane_; }
  QTabWidget* irTabs() const { return irTabs_; }  // "IR" and "Pass diff"
  FusionInspector* fusionInspector() const { return inspector_; }
  ComparePanel* comparePanel() const { return comparePanel_; }
  CodePane* codePane() const { return codePane_; }
  QDockWidget* codeDock() const { return codeDock_; }
  QDockWidget* inspectorDock() const { return inspectorDock_; }
  QDockWidget* compareDock() const { return compareDock_; }
  QDockWidget* profileDock() const { return profileDock_; }
  ProfilePanel* profilePanel() const { return profilePanel_; }
  TensorInspector* tensorInspector() const { return tensorInspector_; }
  QDockWidget* tensorDock() const { return tensorDock_; }
  BucketPanel* bucketPanel() const { return bucketPanel_; }
  QDockWidget* bucketDock() const { return bucketDock_; }
  QLineEdit* searchBox() const { return searchEdit_; }
  QAction* heatAction() const { return heatAct_; }
  QAction* diffAction() const { return diffAct_; }
  QStringList recentFiles() const;

 signals:
  void modelOpened(const QString& path);
  void pipelineFinished();  // the session's snapshots are ready
  void compareFinished(const QString& summary);
  void sessionSaved(const QString& path);
  void errorShown(const QString& message);
  void jobsFinished();  // no work left running
  void tourChapterShown(int index);

 protected:
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  static constexpr int kMessageMs = 8000;  // how long a status-bar message stays
  enum class Job { None, Open, Optimize, Compare, Isolated, Code, Save, Profile, Tap };

  // main_window.cpp: widgets and views
  void buildActions();
  void buildFileMenu();
  void buildLayout();
  void buildDocks();
  void buildStatusBar();
  void buildTour();
  void showTourPass();    // on pipelineFinished
  void selectTourNode();  // on jobsFinished
  void showSnapshot(int row);
  void onNodeSelected(NodeId node);
  void onDecisionPicked(const QString& producer, const QString& consumer);
  void onTensorPicked(const QString& valueName);
  void showError(const QString& message);
  void attachViews();
  void detachViews();
  void addRecentFile(const QString& path);
  void fillRecentMenu();
  void openAny(const QString& path);

  // main_window_jobs.cpp: the worker jobs
  void openWithDialog();
  void openSessionWithDialog();
  void saveSessionWithDialog();
  void start(Job job, std::function<JobResult()> work);
  Progress progressSink();
  void onProgress(double fraction, const QString& stage);
  void onJobDone();
  void finishOpen(const JobResult& r);
  // main_window_dims.cpp: asks for the dims an opened model left unbound, then
  // binds them and runs the pipeline (a second open job).
  void askDims(const JobResult& r);
  void finishOptimize(const JobResult& r);
  void finishCompare(const JobResult& r);
  void finishSave(const JobResult& r);
  void startCompare();
  void startIsolatedCompare();
  // The compare dock's perturb field: sets Session::perturbations, compares again.
  void applyPerturbation(const QString& spec);
  void startCode(int tab);
  void startProfile();
  // main_window_docks.cpp: the graph's "Tap <tensor>": Session::compareTaps on
  // the worker, its rows added to the compare dock.
  void startTap(const QString& tensor);
  void finishTap(const JobResult& r);
  // A row of the profile dock: selects the node that kernel runs.
  void onKernelPicked(const QString& kernelName);
  void setIdle();

  std::shared_ptr<Session> session_;
  CancelToken cancel_;
  Job job_ = Job::None;
  QFutureWatcher<JobResult>* watcher_;
  bool modalErrors_ = true;
  DimsPrompt dimsPrompt_;
  std::map<std::string, std::map<std::string, int64_t>> rememberedDims_;  // by model path
  const Graph* shown_ = nullptr;  // the graph on screen, owned by session_
  QString lastSearch_;
  int searchHit_ = -1;

  PassList* passList_ = nullptr;
  GraphView* graphView_ = nullptr;
  QPlainTextEdit* irPane_ = nullptr;
  PassDiffPane* diffPane_ = nullptr;
  QTabWidget* irTabs_ = nullptr;
  FusionInspector* inspector_ = nullptr;
  ComparePanel* comparePanel_ = nullptr;
  CodePane* codePane_ = nullptr;
  QDockWidget* codeDock_ = nullptr;
  int pendingCodeTab_ = -1;  // asked for while another job ran
  QDockWidget* inspectorDock_ = nullptr;
  QDockWidget* compareDock_ = nullptr;
  ProfilePanel* profilePanel_ = nullptr;
  QDockWidget* profileDock_ = nullptr;
  TensorInspector* tensorInspector_ = nullptr;
  QDockWidget* tensorDock_ = nullptr;
  BucketPanel* bucketPanel_ = nullptr;
  QDockWidget* bucketDock_ = nullptr;
  QDockWidget* tourDock_ = nullptr;
  TourPanel* tourPanel_ = nullptr;
  std::shared_ptr<const QList<TourChapter>> chapters_;
  int tourPending_ = -1;  // the chapter being opened
  QLineEdit* pipelineEdit_ = nullptr;
  QLineEdit* shapesEdit_ = nullptr;
  QLineEdit* searchEdit_ = nullptr;
  QAction* openAct_ = nullptr;
  QAction* openSessionAct_ = nullptr;
  QAction* saveSessionAct_ = nullptr;
  QAction* runAct_ = nullptr;
  QAction* heatAct_ = nullptr;
  QAction* diffAct_ = nullptr;
  int shownRow_ = -1;  // the snapshot the graph view shows
  QMenu* recentMenu_ = nullptr;
  QLabel* compareLabel_ = nullptr;
  QLabel* stageLabel_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QToolButton* cancelButton_ = nullptr;
};

}  // namespace fuselens::viewer
