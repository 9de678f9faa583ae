// GraphView's scopes: opening and closing, depth, focus, breadcrumbs, search
// over the whole graph (revealing what a collapsed scope hides), and the
// anchor that keeps the same node under the viewport across layouts.
#include <QGraphicsScene>
#include <QKeyEvent>
#include <QLabel>
#include <QMouseEvent>
#include <algorithm>
#include <set>

#include "viewer/graph_items.h"
#include "viewer/graph_view.h"
#include "viewer/heat_legend.h"
#include "viewer/minimap.h"
#include "viewer/scope_item.h"

namespace fuselens::viewer {
namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

// By name (part of it), op, a tensor it makes (whole name), or an attribute:
// its key ("epsilon") or the start of "key=value" ("axis=-1", "perm=0,2").
bool matches(const LayoutNode& n, const QString& t) {
  if (qs(n.name).contains(t, Qt::CaseInsensitive) || qs(n.op).compare(t, Qt::CaseInsensitive) == 0)
    return true;
  const bool tensor = std::any_of(n.outputs.begin(), n.outputs.end(), [&](const std::string& v) {
    return qs(v).compare(t, Qt::CaseInsensitive) == 0;
  });
  return tensor || std::any_of(n.attrs.begin(), n.attrs.end(), [&](const std::string& a) {
           const QString entry = qs(a);
           return t.contains('=') ? entry.startsWith(t, Qt::CaseInsensitive)
                                  : entry.section('=', 0, 0).compare(t, Qt::CaseInsensitive) == 0;
         });
}

}  // namespace

void GraphView::setScopeOpen(const QString& path, bool open) {
  if (!tree_) return;
  const auto id = tree_->find(path.toStdString());
  if (!id || *id == tree_->root()) return;
  anchor_ = anchorOn(path.toStdString());
  if (open)
    graphview::reveal(*tree_, *id, expansion_, true);
  else
    expansion_.open.erase(path.toStdString());
  expansionSet_ = true;
  sinceRequest_.restart();
  requestLayout(false);
}

void GraphView::toggleScope(const QString& path) {
  setScopeOpen(path, !expansion_.open.count(path.toStdString()));
}

void GraphView::expandToDepth(int depth) {
  if (!tree_) return;
  expansion_ = graphview::expandToDepth(*tree_, depth);
  expansionSet_ = true;
  sinceRequest_.restart();
  requestLayout(false);
}

void GraphView::focusScope(const QString& path) {
  focus_ = path.toStdString();
  if (tree_ && !focus_.empty()) graphview::reveal(*tree_, *tree_->find(focus_), expansion_, true);
  autoFit_ = true;
  sinceRequest_.restart();
  requestLayout(false);
}

QStringList GraphView::openScopes() const {
  QStringList out;
  for (const std::string& p : expansion_.open) out << qs(p);
  return out;
}

QString GraphView::scopeOf(const QString& name) const {
  if (!tree_) return {};
  const int n = tree_->nodeNamed(name.toStdString());
  return n < 0 ? QString() : qs(tree_->scope(tree_->scopeOfNode(n)).path);
}

ScopeItem* GraphView::scopeNamed(const QString& path) const {
  for (ScopeItem* s : scopeItems())
    if (s->path() == path) return s;
  return nullptr;
}

QList<SearchHit> GraphView::search(const QString& text) const {
  const QString t = text.trimmed();
  QList<SearchHit> out;
  if (t.isEmpty() || !tree_) return out;
  for (const LayoutNode& n : tree_->flat().nodes)
    if (!n.name.empty() && matches(n, t)) out.push_back({qs(n.name), qs(n.op)});
  return out;
}

QList<NodeItem*> GraphView::findNodes(const QString& text) const {
  const QString t = text.trimmed();
  QList<NodeItem*> out;
  if (t.isEmpty()) return out;
  for (NodeItem* n : nodeItems())
    if (matches(n->layout(), t)) out.push_back(n);
  std::stable_sort(out.begin(), out.end(), [](NodeItem* a, NodeItem* b) {
    return a->data(0).toInt() < b->data(0).toInt();
  });
  return out;
}

bool GraphView::revealNode(const QString& name) {
  if (NodeItem* n = nodeNamed(name)) {
    selectAndCenter(n);
    return true;
  }
  if (!tree_) return false;
  const int flat = tree_->nodeNamed(name.toStdString());
  if (flat < 0) return false;
  const graphview::ScopeId home = tree_->scopeOfNode(flat);
  graphview::reveal(*tree_, home, expansion_, true);
  if (!focus_.empty()) {
    const auto focus = tree_->find(focus_);
    if (!focus || !tree_->contains(*focus, home)) focus_.clear();
  }
  expansionSet_ = true;
  selectAfterLayout_ = name.toStdString();
  sinceRequest_.restart();
  requestLayout(false);
  return true;
}

// --- anchors ---

GraphView::Anchor GraphView::anchorAtCenter() const {
  const QPointF center = mapToScene(viewport()->rect().center());
  const QRectF around(center - QPointF(300, 300), QSizeF(600, 600));
  Anchor best;
  double bestDist = 1e18;
  for (QGraphicsItem* item : scene_->items(around)) {
    auto* n = qgraphicsitem_cast<NodeItem*>(item);
    auto* s = qgraphicsitem_cast<ScopeItem*>(item);
    if ((!n || n->name().isEmpty()) && (!s || !s->isCollapsed())) continue;
    const QPointF c = item->sceneBoundingRect().center();
    const double d = QLineF(c, center).length();
    if (d >= bestDist) continue;
    bestDist = d;
    best = {};
    best.valid = true;
    if (n) best.node = n->name().toStdString(), best.origins = n->layout().origins;
    if (s) best.scope = s->path().toStdString();
    best.viewPos = mapFromScene(c);
  }
  return best;
}

GraphView::Anchor GraphView::anchorOn(const std::string& scope) const {
  Anchor a;
  if (ScopeItem* s = scopeNamed(qs(scope))) {
    a.valid = true;
    a.scope = scope;
    a.viewPos = mapFromScene(s->sceneBoundingRect().topLeft());
  }
  return a;
}

// The drawn item that shows op `opName`: its node, or the collapsed scope holding it.
QGraphicsItem* GraphView::itemShowing(const std::string& opName) const {
  if (NodeItem* n = nodeNamed(qs(opName))) return n;
  if (!tree_) return nullptr;
  const int flat = tree_->nodeNamed(opName);
  if (flat < 0) return nullptr;
  for (graphview::ScopeId s : tree_->chain(tree_->scopeOfNode(flat)))
    if (ScopeItem* item = scopeNamed(qs(tree_->scope(s).path)); item && item->isCollapsed())
      return item;
  return nullptr;
}

// The op of the shown tree that carries one of `origins`: the anchor's op
// under the name a pass gave it. Empty when none.
std::string GraphView::opWithOrigin(const std::vector<int32_t>& origins) const {
  if (!tree_ || origins.empty()) return {};
  const std::set<int32_t> wanted(origins.begin(), origins.end());
  for (const graphview::LayoutNode& n : tree_->flat().nodes)
    for (int32_t o : n.origins)
      if (wanted.count(o)) return n.name;
  return {};
}

bool GraphView::restoreAnchor(const Anchor& a) {
  QPointF target;
  if (!a.node.empty()) {
    QGraphicsItem* item = itemShowing(a.node);
    if (!item) item = itemShowing(opWithOrigin(a.origins));
    if (!item) return false;
    target = item->sceneBoundingRect().center();
  } else {
    ScopeItem* item = scopeNamed(qs(a.scope));
    if (!item) return false;
    target = item->sceneBoundingRect().topLeft();
  }
  const double s = transform().m11();
  const QPointF offset = (QPointF(viewport()->rect().center()) - a.viewPos) / s;
  autoFit_ = false;
  centerOn(target + offset);
  return true;
}

// --- input ---

void GraphView::mouseDoubleClickEvent(QMouseEvent* event) {
  QGraphicsItem* item = itemAt(event->position().toPoint());
  if (auto* s = qgraphicsitem_cast<ScopeItem*>(item)) {
    toggleScope(s->path());
    event->accept();
    return;
  }
  QGraphicsView::mouseDoubleClickEvent(event);
}

void GraphView::keyPressEvent(QKeyEvent* event) {
  const QString key = event->text();
  if (key.compare("f", Qt::CaseInsensitive) == 0) {  // focus on the selected scope (or op's)
    for (QGraphicsItem* item : scene_->selectedItems()) {
      if (auto* s = qgraphicsitem_cast<ScopeItem*>(item)) return focusScope(s->path());
      if (auto* n = qgraphicsitem_cast<NodeItem*>(item)) return focusScope(scopeOf(n->name()));
    }
    return;
  }
  if (key != "+" && key != "=" && key != "-") {
    QGraphicsView::keyPressEvent(event);
    return;
  }
  const bool open = key != "-";
  for (QGraphicsItem* item : scene_->selectedItems()) {
    if (auto* s = qgraphicsitem_cast<ScopeItem*>(item)) {
      setScopeOpen(s->path(), open);
      return;
    }
    if (auto* n = qgraphicsitem_cast<NodeItem*>(item); n && !open) {
      const QString scope = scopeOf(n->name());
      if (!scope.isEmpty()) setScopeOpen(scope, false);
      return;
    }
  }
}

// --- breadcrumbs and overlays ---

void GraphView::updateCrumbs() {
  if (!tree_ || tree_->scopes().size() <= 1) {
    crumbs_->hide();
    return;
  }
  std::string current = focus_;
  for (QGraphicsItem* item : scene_->selectedItems()) {
    if (auto* n = qgraphicsitem_cast<NodeItem*>(item)) current = scopeOf(n->name()).toStdString();
    if (auto* s = qgraphicsitem_cast<ScopeItem*>(item)) current = s->path().toStdString();
  }
  QString html = QStringLiteral("<a href=\"@\">top</a>");
  if (const auto id = tree_->find(current))
    for (graphview::ScopeId s : tree_->chain(*id)) {
      if (s == tree_->root()) continue;
      const graphview::Scope& sc = tree_->scope(s);
      html += QStringLiteral(" \u203a <a href=\"%1\">%2</a>")
                  .arg(qs(sc.path).toHtmlEscaped(), qs(sc.name).toHtmlEscaped());
    }
  if (!focus_.empty())
    html += QStringLiteral("  <i>(focused: %1)</i>").arg(qs(focus_).toHtmlEscaped());
  crumbs_->setText(html);
  crumbs_->adjustSize();
  crumbs_->show();
  placeOverlays();
}

void GraphView::placeOverlays() {
  legend_->adjustSize();
  const QRect vp = viewport()->geometry();
  legend_->move(vp.left() + 10, vp.bottom() - legend_->height() - 10);
  minimap_->move(vp.right() - minimap_->width() - 10, vp.bottom() - minimap_->height() - 10);
  crumbs_->move(vp.left() + 8, vp.top() + 8);
}

std::map<std::string, double> GraphView::heatFractions() const {
  std::map<std::string, double> out;
  if (!heatVisible_) return out;
  for (const auto& [name, h] : heat_) out[name] = heatFraction(h);
  return out;
}

}  // namespace fuselens::viewer
