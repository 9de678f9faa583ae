// The graph view: shows one Graph (a snapshot) laid out by Graphviz. Layout
// runs on a worker thread; a newer showGraph() supersedes one still waiting,
// and a finished layout that has been superseded is dropped. Wheel zooms
// around the cursor, dragging the background pans, clicking a node selects it.
//
// Overlays, all keyed by names that survive passes (node names, value names):
// the fusion decisions given with the graph are drawn on its edges; the
// divergence heat colors each node by the worst compared tensor it produces;
// highlightNodes() rings the nodes a dock picked; findNodes() serves search.
#pragma once

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
#include "core/support/status.h"
#include "session/explain_report.h"
#include "viewer/divergence_heat.h"

template <typename T>
class QFutureWatcher;

Q_DECLARE_METATYPE(fuselens::NodeId)

namespace fuselens::viewer {

class ClusterItem;
class EdgeItem;
class HeatLegend;
class NodeItem;
struct GraphLayout;
using Decisions = std::shared_ptr<const std::vector<FusionDecision>>;
using LayoutResult = std::shared_ptr<const Expected<GraphLayout>>;

class GraphView : public QGraphicsView {
  Q_OBJECT

 public:
  explicit GraphView(QWidget* parent = nullptr);
  ~GraphView() override;

  // Copies the graph (constants are shared, not copied) and lays it out;
  // `decisions` (see decisionsUpTo) are drawn on the edges they name.
  void showGraph(const Graph& g, std::vector<FusionDecision> decisions = {});
  void clear();
  bool isLayoutPending() const { return running_ || pending_ != nullptr; }

  // Scales so the whole graph fits (within readable limits) and turns
  // fit-on-resize back on.
  void fitGraph();

  QList<NodeItem*> nodeItems() const;
  QList<ClusterItem*> clusterItems() const;
  int clusterCount() const { return static_cast<int>(clusterItems().size()); }
  // The ops drawn inside the cluster of `group`, in layout order.
  QStringList opsInGroup(int group) const;
  QList<EdgeItem*> edgeItems() const;
  NodeItem* nodeNamed(const QString& name) const;

  // Divergence heat by value name (see heatByValue); empty clears it. The
  // heat is kept across snapshots and shown while the overlay is visible.
  void setHeat(std::map<std::string, ValueHeat> heat);
  void setHeatVisible(bool visible);
  bool isHeatVisible() const { return heatVisible_; }
  bool hasHeat() const { return !heat_.empty(); }
  HeatLegend* heatLegend() const { return legend_; }

  // Rings the nodes with these names (and the edge between the first two),
  // clearing earlier rings, and centers on them; returns how many were found.
  int highlightNodes(const QStringList& names);
  // Selects and centers the node that produces `valueName`; false if none.
  bool selectProducerOf(const QString& valueName);
  // Nodes whose name contains `text` or whose op is `text` (no case), in
  // layout order (top to bottom).
  QList<NodeItem*> findNodes(const QString& text) const;
  void selectAndCenter(NodeItem* node);

 signals:
  void nodeSelected(fuselens::NodeId node);
  // The same click, naming the op drawn (a body op inside a fused group).
  void opSelected(const QString& name);
  void layoutFinished();
  void layoutFailed(const QString& message);

 protected:
  void wheelEvent(QWheelEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void showEvent(QShowEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;

 private:
  void startLayout();
  void onLayoutDone();
  void buildScene(const GraphLayout& layout);
  void showMessage(const QString& text);
  void onSelectionChanged();
  void applyDecisions(const GraphLayout& layout, const std::vector<EdgeItem*>& edges);
  void applyHeat();
  void placeLegend();

  QGraphicsScene* scene_;
  QFutureWatcher<LayoutResult>* watcher_;
  QFont font_;
  QFont labelFont_;  // edge chips: a little smaller
  std::shared_ptr<const Graph> pending_;
  Decisions pendingDecisions_, runningDecisions_;
  std::map<std::string, ValueHeat> heat_;
  bool heatVisible_ = false;
  HeatLegend* legend_;
  bool running_ = false;
  unsigned generation_ = 0;         // bumped by every request and clear()
  unsigned runningGeneration_ = 0;  // the request the running layout serves
  bool autoFit_ = true;             // until the user zooms or pans
};

}  // namespace fuselens::viewer
