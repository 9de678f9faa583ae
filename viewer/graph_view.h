// The graph view: shows one Graph (a snapshot) laid out by Graphviz. Layout
// runs on a worker thread; a newer showGraph() supersedes one still waiting,
// and a finished layout that has been superseded is dropped. Wheel zooms
// around the cursor, dragging the background pans, clicking a node selects it.
#pragma once

#include <QFont>
#include <QGraphicsView>
#include <QList>
#include <QMetaType>
#include <QStringList>
#include <memory>

#include "core/ir/graph.h"
#include "core/support/status.h"

template <typename T>
class QFutureWatcher;

Q_DECLARE_METATYPE(fuselens::NodeId)

namespace fuselens::viewer {

class ClusterItem;
class NodeItem;
struct GraphLayout;
using LayoutResult = std::shared_ptr<const Expected<GraphLayout>>;

class GraphView : public QGraphicsView {
  Q_OBJECT

 public:
  explicit GraphView(QWidget* parent = nullptr);
  ~GraphView() override;

  // Copies the graph (constants are shared, not copied) and lays it out.
  void showGraph(const Graph& g);
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

 signals:
  void nodeSelected(fuselens::NodeId node);
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

  QGraphicsScene* scene_;
  QFutureWatcher<LayoutResult>* watcher_;
  QFont font_;
  std::shared_ptr<const Graph> pending_;
  bool running_ = false;
  unsigned generation_ = 0;         // bumped by every request and clear()
  unsigned runningGeneration_ = 0;  // the request the running layout serves
  bool autoFit_ = true;             // until the user zooms or pans
};

}  // namespace fuselens::viewer
