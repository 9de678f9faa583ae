// GraphView's overlays: fusion decisions on edges, the divergence heat, the
// highlight rings, and finding nodes by name or op.
#include <QGraphicsScene>

#include "viewer/graph_items.h"
#include "viewer/graph_view.h"
#include "viewer/graphview_names.h"
#include "viewer/heat_legend.h"
#include "viewer/kernel_time_item.h"

namespace fuselens::viewer {
namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

EdgeDecision toEdgeDecision(const FusionDecision& d) {
  return {d.accepted, qs(d.ruleId()), qs(d.reason), qs(d.hint), qs(d.passName), d.group};
}

QString heatNote(const std::string& value, const ValueHeat& h) {
  // The compare table's status words (rowStatus), so the tooltip and the CLI agree.
  return QStringLiteral("%%1: %2, max abs %3, max rel %4")
      .arg(qs(value))
      .arg(qs(h.status))
      .arg(h.maxAbs, 0, 'g', 2)
      .arg(h.maxRel, 0, 'g', 2);
}

}  // namespace

QList<EdgeItem*> GraphView::edgeItems() const {
  QList<EdgeItem*> out;
  for (QGraphicsItem* item : scene()->items(Qt::AscendingOrder))
    if (auto* e = qgraphicsitem_cast<EdgeItem*>(item)) out.push_back(e);
  return out;
}

NodeItem* GraphView::nodeNamed(const QString& name) const {
  if (name.isEmpty()) return nullptr;
  for (NodeItem* n : nodeItems())
    if (n->name() == name) return n;
  return nullptr;
}

// Decisions key on (producer name, consumer name), as the edges between two
// drawn ops carry them; edges that end at a scope box have none. The few
// hundred drawn edges are indexed, not the graph's thousands of decisions, so
// a layout costs the same on a 10,000-op graph as on a small one.
void GraphView::applyDecisions() {
  if (!decisions_ || decisions_->empty()) return;
  struct Drawn {
    std::vector<EdgeItem*> edges;
    const FusionDecision* decision = nullptr;
  };
  std::map<std::pair<std::string, std::string>, Drawn> drawn;
  for (EdgeItem* e : edgeItems())
    if (!e->fromName().isEmpty())
      drawn[{e->fromName().toStdString(), e->toName().toStdString()}].edges.push_back(e);
  if (drawn.empty()) return;
  std::pair<std::string, std::string> key;
  for (const FusionDecision& d : *decisions_) {  // the last decision on an edge wins
    key.first = d.producerName;
    key.second = d.consumerName;
    if (auto it = drawn.find(key); it != drawn.end()) it->second.decision = &d;
  }
  for (const auto& [names, edge] : drawn)
    for (EdgeItem* e : edge.edges)
      if (edge.decision) e->setDecision(toEdgeDecision(*edge.decision), labelFont_);
}

// Collapsed boxes show their worst heat in their labels: those need a new layout.
void GraphView::setHeat(std::map<std::string, ValueHeat> heat) {
  heat_ = std::move(heat);
  applyHeat();
  if (drawnCollapsed_ > 0 && heatVisible_) requestLayout(false);
}

void GraphView::setKernelTimes(std::map<std::string, double> seconds) {
  if (seconds == seconds_) return;
  seconds_ = std::move(seconds);
  applyKernelTimes(*scene_, seconds_, labelFont_);  // ops and clusters: no new layout
  if (drawnCollapsed_ > 0) requestLayout(false);
}

void GraphView::setHeatVisible(bool visible) {
  heatVisible_ = visible;
  applyHeat();
  if (drawnCollapsed_ > 0 && !heat_.empty()) requestLayout(false);
}

void GraphView::applyHeat() {
  const bool on = heatVisible_ && !heat_.empty();
  legend_->setVisible(on);
  placeOverlays();
  for (NodeItem* n : nodeItems()) {
    const ValueHeat* worst = nullptr;
    std::string worstName;
    for (const std::string& v : n->layout().outputs) {
      auto it = heat_.find(v);
      if (it == heat_.end()) continue;
      if (!worst || heatFraction(it->second) > heatFraction(*worst)) {
        worst = &it->second;
        worstName = v;
      }
    }
    if (on && worst)
      n->setHeat(heatColor(heatFraction(*worst)), heatNote(worstName, *worst));
    else
      n->setHeat(QColor(), QString());
  }
}

int GraphView::highlightNodes(const QStringList& names) {
  QList<NodeItem*> found;
  for (NodeItem* n : nodeItems()) {
    const bool on = !n->name().isEmpty() && names.contains(n->name());
    n->setHighlighted(on);
    if (on) found.push_back(n);
  }
  for (EdgeItem* e : edgeItems()) {
    const bool on = names.size() >= 2 && !e->fromName().isEmpty() && e->fromName() == names[0] &&
                    e->toName() == names[1];
    e->setHighlighted(on);
  }
  if (found.isEmpty()) return 0;
  QRectF area;
  for (NodeItem* n : found) area |= n->sceneBoundingRect();
  autoFit_ = false;
  centerOn(area.center());
  return static_cast<int>(found.size());
}

bool GraphView::selectProducerOf(const QString& valueName) {
  for (NodeItem* n : nodeItems()) {
    if (n->layout().kind == LayoutNodeKind::Output) continue;  // the op, not the sink
    if (n->produces(valueName)) {
      selectAndCenter(n);
      return true;
    }
  }
  return false;
}

void GraphView::selectAndCenter(NodeItem* node) {
  if (!node) return;
  scene()->clearSelection();
  node->setSelected(true);
  autoFit_ = false;
  centerOn(node);
}

}  // namespace fuselens::viewer
