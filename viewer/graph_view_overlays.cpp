// GraphView's overlays: fusion decisions on edges, the divergence heat, the
// highlight rings, and finding nodes by name or op.
#include <QGraphicsScene>

#include "viewer/edge_decisions.h"
#include "viewer/graph_items.h"
#include "viewer/graph_layout.h"
#include "viewer/graph_view.h"
#include "viewer/heat_legend.h"

namespace fuselens::viewer {
namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

EdgeDecision toEdgeDecision(const FusionDecision& d) {
  return {d.accepted, qs(d.ruleId()), qs(d.reason), qs(d.hint), qs(d.passName), d.group};
}

QString heatNote(const std::string& value, const ValueHeat& h) {
  return QStringLiteral("%%1: max rel %2, max abs %3%4")
      .arg(qs(value))
      .arg(h.maxRel, 0, 'g', 2)
      .arg(h.maxAbs, 0, 'g', 2)
      .arg(h.within ? QString() : QStringLiteral(" (out of tolerance)"));
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

void GraphView::applyDecisions(const GraphLayout& layout, const std::vector<EdgeItem*>& edges) {
  if (!runningDecisions_ || runningDecisions_->empty()) return;
  const std::vector<FusionDecision>& decisions = *runningDecisions_;
  const std::vector<int> match = matchEdgeDecisions(layout, decisions);
  for (size_t i = 0; i < edges.size() && i < match.size(); ++i)
    if (match[i] >= 0)
      edges[i]->setDecision(toEdgeDecision(decisions[size_t(match[i])]), labelFont_);
}

void GraphView::setHeat(std::map<std::string, ValueHeat> heat) {
  heat_ = std::move(heat);
  applyHeat();
}

void GraphView::setHeatVisible(bool visible) {
  heatVisible_ = visible;
  applyHeat();
}

void GraphView::applyHeat() {
  const bool on = heatVisible_ && !heat_.empty();
  legend_->setVisible(on);
  placeLegend();
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

void GraphView::placeLegend() {
  legend_->adjustSize();
  const QRect vp = viewport()->geometry();
  legend_->move(vp.left() + 10, vp.bottom() - legend_->height() - 10);
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

QList<NodeItem*> GraphView::findNodes(const QString& text) const {
  const QString t = text.trimmed();
  QList<NodeItem*> out;
  if (t.isEmpty()) return out;
  for (NodeItem* n : nodeItems())
    if (n->name().contains(t, Qt::CaseInsensitive) || n->op().compare(t, Qt::CaseInsensitive) == 0)
      out.push_back(n);
  std::stable_sort(out.begin(), out.end(),
                   [](NodeItem* a, NodeItem* b) { return a->layout().box.y < b->layout().box.y; });
  return out;
}

void GraphView::selectAndCenter(NodeItem* node) {
  if (!node) return;
  scene()->clearSelection();
  node->setSelected(true);
  autoFit_ = false;
  centerOn(node);
}

}  // namespace fuselens::viewer
