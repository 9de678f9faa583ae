// The graph view: one Graph (a snapshot) as a hierarchy of name scopes
// (session/graphview/scope_tree.h), collapsed on open so about 200 boxes show,
// each open scope laid out alone and composed (scoped_layout.h). Layout runs
// on a worker thread; dot runs in child processes that a newer request
// cancels. Double-click or +/- opens and closes scopes, F shows the selected
// one alone; breadcrumbs name the current scope and focus on one; a minimap
// shows where the viewport is.
// Stepping to another snapshot keeps the open scopes and keeps the node under
// the viewport centre in place (matched by name, which passes keep).
//
// Overlays, all keyed by names that survive passes (node names, value names):
// the fusion decisions given with the graph are drawn on its edges; the
// divergence heat colors each node (and each collapsed scope, by its worst);
// highlightNodes() rings the nodes a dock picked; search() finds ops anywhere,
// collapsed or not, and revealNode() opens the scopes above one and centres it.
#pragma once

#include <QElapsedTimer>
#include <QFont>
#include <QGraphicsView>
#include <QList>
#include <QMetaType>
#include <QStringList>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/support/cancel.h"
#include "core/support/status.h"
#include "session/explain_report.h"
#include "session/graphview/scope_tree.h"
#include "viewer/graphview_names.h"

template <typename T>
class QFutureWatcher;
class QLabel;
class QMenu;

Q_DECLARE_METATYPE(fuselens::NodeId)

namespace fuselens::graphview {
class LayoutCache;
}

namespace fuselens::viewer {

class ClusterItem;
class EdgeItem;
class HeatLegend;
class Minimap;
class NodeItem;
class ScopeItem;
struct ViewJob;
struct ViewResult;
using Decisions = std::shared_ptr<const std::vector<FusionDecision>>;
using LayoutResult = std::shared_ptr<const ViewResult>;

struct SearchHit {
  QString name, op;
};

class GraphView : public QGraphicsView {
  Q_OBJECT

 public:
  explicit GraphView(QWidget* parent = nullptr);
  ~GraphView() override;

  // Copies the graph (constants are shared, not copied) and lays it out with
  // the open scopes kept; `decisions` (see decisionsUpTo) are drawn on the
  // edges they name.
  void showGraph(const Graph& g, std::vector<FusionDecision> decisions = {});
  void clear();
  // Diff mode: the next showGraph marks ops added and changed since `before`
  // (by name), counts them per scope and dims what the pass left alone;
  // null turns it off. The graph is copied.
  void setDiffBase(const Graph* before);
  bool isDiffShown() const { return diffShown_; }
  bool isLayoutPending() const { return running_ || pending_ != nullptr; }
  // Stops the layout under way (its dot processes are killed); the scene
  // keeps what it showed.
  void cancelLayout();

  // Scales so the whole graph fits (within readable limits) and turns
  // fit-on-resize back on.
  void fitGraph();

  QList<NodeItem*> nodeItems() const;
  QList<ClusterItem*> clusterItems() const;
  QList<ScopeItem*> scopeItems() const;
  int clusterCount() const { return static_cast<int>(clusterItems().size()); }
  // The ops drawn inside the cluster of `group`, in layout order.
  QStringList opsInGroup(int group) const;
  QList<EdgeItem*> edgeItems() const;
  NodeItem* nodeNamed(const QString& name) const;
  ScopeItem* scopeNamed(const QString& path) const;

  // --- scopes ---
  void setScopeOpen(const QString& path, bool open);
  void toggleScope(const QString& path);
  // Opens every scope down to `depth` levels below the top, closes the rest.
  void expandToDepth(int depth);
  // Draws this scope alone; empty: the whole graph again.
  void focusScope(const QString& path);
  QString focusedScope() const { return QString::fromStdString(focus_); }
  QStringList openScopes() const;
  // The scope path of the op named `name` in the shown graph; empty when none.
  QString scopeOf(const QString& name) const;

  // "drawn: 184 boxes (37 scopes collapsed), 212 edges, layout 140 ms, first paint 420 ms"
  QString drawnSummary() const;
  int drawnBoxes() const { return drawnBoxes_; }
  double lastLayoutMs() const { return layoutMs_; }
  double firstPaintMs() const { return firstPaintMs_; }

  // Divergence heat by value name (see heatByValue); empty clears it. The
  // heat is kept across snapshots and shown while the overlay is visible.
  void setHeat(std::map<std::string, ValueHeat> heat);
  void setHeatVisible(bool visible);
  bool isHeatVisible() const { return heatVisible_; }
  // A profile's kernel times by the value each kernel writes first
  // (Session::kernelSecondsByValue): each collapsed scope shows the sum of
  // the kernels made inside it, an expanded fused cluster the sum of its
  // members' kernels and a single-op kernel's op its own time, as a chip at
  // its corner (viewer/kernel_time_item.h). Empty clears them.
  void setKernelTimes(std::map<std::string, double> seconds);
  bool hasKernelTimes() const { return !seconds_.empty(); }
  bool hasHeat() const { return !heat_.empty(); }
  HeatLegend* heatLegend() const { return legend_; }
  Minimap* minimap() const { return minimap_; }
  QLabel* breadcrumbs() const { return crumbs_; }

  // Rings the nodes with these names (and the edge between the first two),
  // clearing earlier rings, and centers on them; returns how many were found.
  int highlightNodes(const QStringList& names);
  // Selects and centers the node that produces `valueName`; false if none.
  bool selectProducerOf(const QString& valueName);
  // Drawn nodes whose name contains `text`, whose op is `text` or that make a
  // tensor named `text` (no case), in topological order.
  QList<NodeItem*> findNodes(const QString& text) const;
  // The same match over every op of the graph, drawn or inside a collapsed scope.
  QList<SearchHit> search(const QString& text) const;
  // Selects and centres the op named `name`, opening the scopes above it first
  // (then after the layout that needs); false when the graph has no such op.
  bool revealNode(const QString& name);
  void selectAndCenter(NodeItem* node);
  // The context menu of an op inside a fused cluster ("Tap <tensor>" per
  // output, each emitting tapRequested); nullptr for any other item.
  QMenu* contextMenuFor(const NodeItem* node, QWidget* parent);

 signals:
  void nodeSelected(fuselens::NodeId node);
  // The same click, naming the op drawn (a body op inside a fused group).
  void opSelected(const QString& name);
  void layoutFinished();
  void layoutFailed(const QString& message);
  // "Tap <tensor>" in an op's context menu: compare that tensor, computed
  // inside its fused group, with eager (Session::compareTaps).
  void tapRequested(const QString& tensor);

 protected:
  void wheelEvent(QWheelEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void showEvent(QShowEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void contextMenuEvent(QContextMenuEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void paintEvent(QPaintEvent* event) override;
  void scrollContentsBy(int dx, int dy) override;

 private:
  // What to keep under the viewport across a new layout.
  struct Anchor {
    std::string node;              // an op name, or
    std::string scope;             // a scope path
    std::vector<int32_t> origins;  // the op's origins: found by them when a pass renamed it
    QPointF viewPos;               // where it was in the viewport
    bool valid = false;
  };
  void requestLayout(bool newGraph);
  void startLayout();
  void onLayoutDone();
  void buildScene(const ViewResult& result);
  void showMessage(const QString& text);
  void onSelectionChanged();
  void applyDecisions();
  void applyHeat();
  void placeOverlays();
  void updateMinimapView();
  void updateCrumbs();
  Anchor anchorAtCenter() const;
  Anchor anchorOn(const std::string& scope) const;
  std::string opWithOrigin(const std::vector<int32_t>& origins) const;
  bool restoreAnchor(const Anchor& a);
  QGraphicsItem* itemShowing(const std::string& opName) const;
  std::map<std::string, double> heatFractions() const;

  QGraphicsScene* scene_;
  QFutureWatcher<LayoutResult>* watcher_;
  QFont font_;
  QFont labelFont_;  // edge chips: a little smaller
  std::shared_ptr<ViewJob> pending_;
  std::shared_ptr<const Graph> graph_;  // the graph shown (or being laid out)
  std::shared_ptr<const Graph> diffBase_;
  bool diffShown_ = false;
  std::shared_ptr<const graphview::ScopeTree> tree_;
  std::shared_ptr<graphview::LayoutCache> cache_;
  graphview::Expansion expansion_;
  bool expansionSet_ = false;  // false: the next tree gets the initial collapse
  std::string focus_;
  Decisions decisions_;
  std::map<std::string, ValueHeat> heat_;
  std::map<std::string, double> seconds_;
  bool heatVisible_ = false;
  HeatLegend* legend_;
  Minimap* minimap_;
  QLabel* crumbs_;
  CancelToken runningCancel_;
  bool running_ = false;
  unsigned generation_ = 0;         // bumped by every request and clear()
  unsigned runningGeneration_ = 0;  // the request the running layout serves
  bool autoFit_ = true;             // until the user zooms or pans
  Anchor anchor_;                   // for the layout under way
  std::string selectAfterLayout_;   // revealNode's op, once it is drawn
  QElapsedTimer sinceRequest_;
  bool paintPending_ = false;
  int drawnBoxes_ = 0, drawnCollapsed_ = 0, drawnEdges_ = 0;
  double layoutMs_ = 0, firstPaintMs_ = 0;
};

}  // namespace fuselens::viewer
