// GraphView: asynchronous layout, scene building from a GraphLayout, and the
// zoom/pan/fit behaviour. The overlays live in graph_view_overlays.cpp.
#include "viewer/graph_view.h"

#include <QFontMetricsF>
#include <QFutureWatcher>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QMouseEvent>
#include <QScrollBar>
#include <QWheelEvent>
#include <QtConcurrent/QtConcurrentRun>
#include <QtMath>
#include <algorithm>

#include "viewer/graph_items.h"
#include "viewer/graph_layout.h"
#include "viewer/heat_legend.h"

namespace fuselens::viewer {
namespace {

constexpr double kMinFitScale = 0.65;  // below this labels are unreadable: show the top instead
constexpr double kMaxFitScale = 1.0;   // small graphs should not look blown up
constexpr double kMinScale = 0.03, kMaxScale = 8.0;

double charWidth(const QFont& font) {
  QFontMetricsF fm(font);
  const QString sample = QStringLiteral("f32[1,128] MatMul_0 weight bias %12");
  return std::max(fm.averageCharWidth(), fm.horizontalAdvance(sample) / sample.size());
}

// Rejected decisions get a labelled edge, so dot leaves room for the rule chip.
LayoutOptions optionsFor(const QFont& font, const QFont& labelFont, const Decisions& decisions) {
  LayoutOptions opts;
  opts.charWidth = charWidth(font);
  opts.lineHeight = QFontMetricsF(font).height() + 2;
  opts.labelCharWidth = charWidth(labelFont) + 0.5;  // the chip's padding
  if (decisions)
    for (const FusionDecision& d : *decisions)
      if (!d.accepted) opts.edgeLabels[{d.producerName, d.consumerName}] = d.ruleId();
  return opts;
}

}  // namespace

GraphView::GraphView(QWidget* parent)
    : QGraphicsView(parent),
      scene_(new QGraphicsScene(this)),
      watcher_(new QFutureWatcher<LayoutResult>(this)),
      legend_(new HeatLegend(this)) {
  setScene(scene_);
  setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
  setDragMode(ScrollHandDrag);
  setTransformationAnchor(AnchorUnderMouse);
  setResizeAnchor(AnchorViewCenter);
  setViewportUpdateMode(BoundingRectViewportUpdate);
  setBackgroundBrush(kBackground);
  font_ = font();
  font_.setPointSizeF(9);
  labelFont_ = font_;
  labelFont_.setPointSizeF(7);
  legend_->hide();
  connect(watcher_, &QFutureWatcher<LayoutResult>::finished, this, &GraphView::onLayoutDone);
  connect(scene_, &QGraphicsScene::selectionChanged, this, &GraphView::onSelectionChanged);
}

GraphView::~GraphView() {
  // The scene outlives this class's part of the object: it must not call back.
  disconnect(scene_, nullptr, this, nullptr);
  // The task holds its own copy of the graph, but Graphviz must not be torn
  // down under it at exit.
  if (running_) watcher_->waitForFinished();
}

void GraphView::showGraph(const Graph& g, std::vector<FusionDecision> decisions) {
  pending_ = std::make_shared<const Graph>(g);
  pendingDecisions_ = std::make_shared<const std::vector<FusionDecision>>(std::move(decisions));
  ++generation_;
  if (!running_) startLayout();
}

void GraphView::clear() {
  ++generation_;
  pending_.reset();
  pendingDecisions_.reset();
  scene_->clear();
  scene_->setSceneRect(QRectF());
}

void GraphView::startLayout() {
  std::shared_ptr<const Graph> graph = std::move(pending_);
  pending_.reset();
  runningDecisions_ = std::move(pendingDecisions_);
  pendingDecisions_.reset();
  running_ = true;
  runningGeneration_ = generation_;
  const LayoutOptions opts = optionsFor(font_, labelFont_, runningDecisions_);
  watcher_->setFuture(QtConcurrent::run([graph, opts]() -> LayoutResult {
    return std::make_shared<const Expected<GraphLayout>>(layoutGraph(*graph, opts));
  }));
}

void GraphView::onLayoutDone() {
  running_ = false;
  const LayoutResult result = watcher_->result();
  if (pending_) {
    startLayout();  // superseded while it ran
    return;
  }
  if (runningGeneration_ != generation_) return;  // cleared while it ran
  if (!result->isOk()) {
    const QString message = QString::fromStdString(result->message());
    showMessage(message);
    emit layoutFailed(message);
    emit layoutFinished();
    return;
  }
  buildScene(result->value());
  emit layoutFinished();
}

void GraphView::buildScene(const GraphLayout& layout) {
  scene_->clear();
  for (const LayoutCluster& c : layout.clusters) scene_->addItem(new ClusterItem(c, font_));
  std::vector<EdgeItem*> edges;
  for (const LayoutEdge& e : layout.edges) {
    edges.push_back(new EdgeItem(e, QString::fromStdString(layout.nodes[size_t(e.from)].name),
                                 QString::fromStdString(layout.nodes[size_t(e.to)].name)));
    scene_->addItem(edges.back());
  }
  for (const LayoutNode& n : layout.nodes) scene_->addItem(new NodeItem(n, font_));
  applyDecisions(layout, edges);
  applyHeat();
  scene_->setSceneRect(QRectF(0, 0, layout.width, layout.height).adjusted(-20, -20, 20, 20));
  autoFit_ = true;
  fitGraph();
}

void GraphView::showMessage(const QString& text) {
  scene_->clear();
  QGraphicsSimpleTextItem* item = scene_->addSimpleText(text, font_);
  scene_->setSceneRect(item->boundingRect().adjusted(-20, -20, 20, 20));
  resetTransform();
}

void GraphView::fitGraph() {
  autoFit_ = true;
  const QRectF r = scene_->sceneRect();
  if (r.isEmpty() || viewport()->width() < 10) return;
  fitInView(r, Qt::KeepAspectRatio);
  const double s = transform().m11();
  if (s > kMaxFitScale || s < kMinFitScale) {
    const double target = std::clamp(s, kMinFitScale, kMaxFitScale);
    setTransform(QTransform::fromScale(target, target));
    if (s < kMinFitScale) {
      // Too big to read whole: show the top (the inputs) at a readable scale.
      const double visibleH = viewport()->height() / target;
      centerOn(r.center().x(), r.top() + visibleH / 2);
    } else {
      centerOn(r.center());
    }
  }
}

QList<NodeItem*> GraphView::nodeItems() const {
  QList<NodeItem*> out;
  for (QGraphicsItem* item : scene_->items(Qt::AscendingOrder))
    if (auto* n = qgraphicsitem_cast<NodeItem*>(item)) out.push_back(n);
  return out;
}

QList<ClusterItem*> GraphView::clusterItems() const {
  QList<ClusterItem*> out;
  for (QGraphicsItem* item : scene_->items(Qt::AscendingOrder))
    if (auto* c = qgraphicsitem_cast<ClusterItem*>(item)) out.push_back(c);
  return out;
}

QStringList GraphView::opsInGroup(int group) const {
  QStringList ops;
  for (NodeItem* n : nodeItems())
    if (n->group() == group) ops << n->op();
  return ops;
}

void GraphView::wheelEvent(QWheelEvent* event) {
  const double factor = std::pow(1.0015, event->angleDelta().y());
  const double s = transform().m11();
  const double clamped = std::clamp(s * factor, kMinScale, kMaxScale) / s;
  scale(clamped, clamped);
  autoFit_ = false;
  event->accept();
}

void GraphView::resizeEvent(QResizeEvent* event) {
  QGraphicsView::resizeEvent(event);
  placeLegend();
  if (autoFit_) fitGraph();
}

void GraphView::showEvent(QShowEvent* event) {
  QGraphicsView::showEvent(event);
  if (autoFit_) fitGraph();
}

void GraphView::mousePressEvent(QMouseEvent* event) {
  if (!itemAt(event->position().toPoint())) autoFit_ = false;  // starting a pan
  QGraphicsView::mousePressEvent(event);
}

void GraphView::onSelectionChanged() {
  for (QGraphicsItem* item : scene_->selectedItems()) {
    if (auto* n = qgraphicsitem_cast<NodeItem*>(item)) {
      if (n->nodeId().valid()) emit nodeSelected(n->nodeId());
      emit opSelected(n->name());
      return;
    }
  }
  emit opSelected(QString());
}

}  // namespace fuselens::viewer
