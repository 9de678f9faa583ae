// GraphView: asynchronous layout requests, scene building from a SceneLayout,
// and the zoom/pan/fit behaviour. Scopes, search and anchors live in
// graph_view_scopes.cpp, the overlays in graph_view_overlays.cpp.
#include "viewer/graph_view.h"

#include <QFontMetricsF>
#include <QFutureWatcher>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QLabel>
#include <QMouseEvent>
#include <QScrollBar>
#include <QWheelEvent>
#include <QtConcurrent/QtConcurrentRun>
#include <QtMath>
#include <algorithm>

#include "viewer/graph_items.h"
#include "viewer/graph_view_job.h"
#include "viewer/heat_legend.h"
#include "viewer/kernel_time_item.h"
#include "viewer/minimap.h"
#include "viewer/scope_item.h"

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

LayoutEdge toLayoutEdge(const graphview::SceneEdge& e) {
  LayoutEdge le;
  le.from = e.from.node;
  le.to = e.to.node;
  le.value = e.value;
  le.points = e.path.points;
  le.hasArrow = e.path.hasArrow;
  le.arrowTip = e.path.arrowTip;
  le.hasLabel = e.path.hasLabel;
  le.labelCenter = e.path.labelCenter;
  return le;
}

}  // namespace

GraphView::GraphView(QWidget* parent)
    : QGraphicsView(parent),
      scene_(new QGraphicsScene(this)),
      watcher_(new QFutureWatcher<LayoutResult>(this)),
      cache_(std::make_shared<graphview::LayoutCache>()),
      legend_(new HeatLegend(this)),
      minimap_(new Minimap(this)),
      crumbs_(new QLabel(this)) {
  setScene(scene_);
  // The index costs more to keep than it saves: a few hundred items, rebuilt per layout.
  scene_->setItemIndexMethod(QGraphicsScene::NoIndex);
  setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
  setDragMode(ScrollHandDrag);
  setTransformationAnchor(AnchorUnderMouse);
  setResizeAnchor(AnchorViewCenter);
  setViewportUpdateMode(SmartViewportUpdate);
  setBackgroundBrush(kBackground);
  font_ = font();
  font_.setPointSizeF(9);
  labelFont_ = font_;
  labelFont_.setPointSizeF(7);
  legend_->hide();
  minimap_->hide();
  crumbs_->setTextFormat(Qt::RichText);
  crumbs_->setStyleSheet(
      "QLabel { background: rgba(255,255,255,220); border: 1px solid #cbd5e1; padding: 2px 6px; }");
  crumbs_->hide();
  connect(crumbs_, &QLabel::linkActivated, this,
          [this](const QString& link) { focusScope(link == "@" ? QString() : link); });
  connect(minimap_, &Minimap::centerRequested, this, [this](QPointF p) {
    autoFit_ = false;
    centerOn(p);
  });
  connect(watcher_, &QFutureWatcher<LayoutResult>::finished, this, &GraphView::onLayoutDone);
  connect(scene_, &QGraphicsScene::selectionChanged, this, &GraphView::onSelectionChanged);
}

GraphView::~GraphView() {
  // The scene outlives this class's part of the object: it must not call back.
  disconnect(scene_, nullptr, this, nullptr);
  runningCancel_.cancel();  // the dot children are killed; the task returns soon
  if (running_) watcher_->waitForFinished();
}

void GraphView::showGraph(const Graph& g, std::vector<FusionDecision> decisions) {
  graph_ = std::make_shared<const Graph>(g);
  decisions_ = std::make_shared<const std::vector<FusionDecision>>(std::move(decisions));
  sinceRequest_.restart();
  requestLayout(true);
}

void GraphView::setDiffBase(const Graph* before) {
  diffBase_ = before ? std::make_shared<const Graph>(*before) : nullptr;
}

void GraphView::clear() {
  ++generation_;
  pending_.reset();
  runningCancel_.cancel();
  graph_.reset();
  tree_.reset();
  expansion_ = {};
  expansionSet_ = false;
  focus_.clear();
  cache_->clear();
  anchor_ = {};
  selectAfterLayout_.clear();
  scene_->clear();
  scene_->setSceneRect(QRectF());
  minimap_->hide();
  crumbs_->hide();
}

void GraphView::cancelLayout() {
  ++generation_;
  pending_.reset();
  runningCancel_.cancel();
}

void GraphView::requestLayout(bool newGraph) {
  if (!graph_) return;
  auto job = std::make_shared<ViewJob>();
  job->graph = graph_;
  job->before = diffBase_;
  if (!newGraph && tree_) job->tree = tree_;
  job->expansion = expansion_;
  job->initialCollapse = !expansionSet_;
  job->focus = focus_;
  job->decisions = decisions_;
  job->heat = heatFractions();
  job->seconds = seconds_;
  job->text = optionsFor(font_, labelFont_, decisions_);
  job->cache = cache_;
  pending_ = std::move(job);
  ++generation_;
  if (running_)
    runningCancel_.cancel();  // superseded: stop its dot runs, start this one when it returns
  else
    startLayout();
}

void GraphView::startLayout() {
  std::shared_ptr<ViewJob> job = std::move(pending_);
  pending_.reset();
  running_ = true;
  runningGeneration_ = generation_;
  runningCancel_ = job->cancel;
  watcher_->setFuture(QtConcurrent::run(
      [job]() -> LayoutResult { return std::make_shared<const ViewResult>(runViewJob(*job)); }));
}

void GraphView::onLayoutDone() {
  running_ = false;
  const LayoutResult result = watcher_->result();
  if (pending_) {
    // A snapshot's tree is worth keeping even when its layout was superseded.
    if (result->tree && result->graph == graph_ && !pending_->tree) pending_->tree = result->tree;
    startLayout();
    return;
  }
  if (runningGeneration_ != generation_) {
    emit layoutFinished();  // cancelled or cleared while it ran
    return;
  }
  tree_ = result->tree;
  if (!result->scene.isOk()) {
    const QString message = QString::fromStdString(result->scene.message());
    showMessage(message);
    emit layoutFailed(message);
    emit layoutFinished();
    return;
  }
  expansion_ = result->expansion;
  expansionSet_ = true;
  focus_ = result->focus;
  layoutMs_ = result->ms;
  diffShown_ = result->diff;
  buildScene(*result);
  emit layoutFinished();
}

void GraphView::buildScene(const ViewResult& result) {
  const graphview::SceneLayout& layout = result.scene.value();
  const bool hadContent = !scene_->items().isEmpty();
  Anchor anchor = anchor_.valid ? anchor_ : (hadContent && !autoFit_ ? anchorAtCenter() : Anchor{});
  anchor_ = {};
  scene_->clear();
  const bool heatOn = heatVisible_ && !heat_.empty();
  for (const graphview::SceneScope& s : layout.scopes)
    scene_->addItem(new ScopeItem(s, font_, heatOn));
  for (const LayoutCluster& c : layout.clusters) scene_->addItem(new ClusterItem(c, font_));
  for (const graphview::SceneEdge& e : layout.edges) {
    auto* item = new EdgeItem(toLayoutEdge(e), QString::fromStdString(e.fromName),
                              QString::fromStdString(e.toName));
    scene_->addItem(item);
  }
  for (size_t i = 0; i < layout.nodes.size(); ++i) {
    auto* item = new NodeItem(layout.nodes[i], font_);
    item->setData(0, layout.flatIndex[i]);
    if (result.diff && layout.nodes[i].diff == 0 && layout.nodes[i].kind == LayoutNodeKind::Op)
      item->setOpacity(0.45);  // diff mode: unchanged by the pass
    scene_->addItem(item);
  }
  applyDecisions();
  applyHeat();
  applyKernelTimes(*scene_, seconds_, labelFont_);
  drawnBoxes_ = int(layout.nodes.size() + layout.collapsed);
  drawnCollapsed_ = int(layout.collapsed);
  drawnEdges_ = int(layout.edges.size());
  scene_->setSceneRect(QRectF(0, 0, layout.width, layout.height).adjusted(-20, -20, 20, 20));
  // A tall scene (a long chain of layers) gets a tall minimap, not a sliver.
  const bool tall = layout.height > 3 * layout.width;
  minimap_->resize(tall ? QSize(110, std::max(140, viewport()->height() - 60)) : QSize(180, 140));
  minimap_->setScene(scene_);
  minimap_->setVisible(layout.nodes.size() + layout.scopes.size() > 12);
  if (!selectAfterLayout_.empty()) {
    NodeItem* n = nodeNamed(QString::fromStdString(selectAfterLayout_));
    selectAfterLayout_.clear();
    if (n) selectAndCenter(n);
  } else if (!anchor.valid || !restoreAnchor(anchor)) {
    autoFit_ = true;
    fitGraph();
  }
  placeOverlays();
  updateCrumbs();
  updateMinimapView();
  paintPending_ = true;
  viewport()->update();
}

void GraphView::showMessage(const QString& text) {
  scene_->clear();
  QGraphicsSimpleTextItem* item = scene_->addSimpleText(text, font_);
  scene_->setSceneRect(item->boundingRect().adjusted(-20, -20, 20, 20));
  resetTransform();
  minimap_->hide();
}

QString GraphView::drawnSummary() const {
  return QStringLiteral(
             "drawn: %1 boxes (%2 scopes collapsed), %3 edges, layout %4 ms, first "
             "paint %5 ms")
      .arg(drawnBoxes_)
      .arg(drawnCollapsed_)
      .arg(drawnEdges_)
      .arg(qRound(layoutMs_))
      .arg(qRound(firstPaintMs_));
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
  updateMinimapView();
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

QList<ScopeItem*> GraphView::scopeItems() const {
  QList<ScopeItem*> out;
  for (QGraphicsItem* item : scene_->items(Qt::AscendingOrder))
    if (auto* s = qgraphicsitem_cast<ScopeItem*>(item)) out.push_back(s);
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
  updateMinimapView();
  event->accept();
}

void GraphView::resizeEvent(QResizeEvent* event) {
  QGraphicsView::resizeEvent(event);
  placeOverlays();
  if (autoFit_) fitGraph();
  updateMinimapView();
}

void GraphView::showEvent(QShowEvent* event) {
  QGraphicsView::showEvent(event);
  if (autoFit_) fitGraph();
}

void GraphView::paintEvent(QPaintEvent* event) {
  QGraphicsView::paintEvent(event);
  if (!paintPending_) return;
  paintPending_ = false;
  firstPaintMs_ = double(sinceRequest_.elapsed());
}

void GraphView::scrollContentsBy(int dx, int dy) {
  QGraphicsView::scrollContentsBy(dx, dy);
  updateMinimapView();
}

void GraphView::updateMinimapView() {
  if (minimap_->isVisible()) minimap_->setViewRect(mapToScene(viewport()->rect()).boundingRect());
}

void GraphView::mousePressEvent(QMouseEvent* event) {
  if (!itemAt(event->position().toPoint())) autoFit_ = false;  // starting a pan
  QGraphicsView::mousePressEvent(event);
}

void GraphView::onSelectionChanged() {
  updateCrumbs();
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
