// Painting of the graph view's items. Text is skipped when zoomed far out
// (level of detail), where it would be unreadable anyway.
#include "viewer/graph_items.h"

#include <QPainter>
#include <QStyleOptionGraphicsItem>
#include <QtMath>
#include <array>

namespace fuselens::viewer {
namespace {

constexpr double kTextLod = 0.3;  // below this zoom, boxes only
const QColor kSelected(30, 111, 217);

QColor blend(const QColor& under, const QColor& over, double alpha) {
  auto mix = [&](int a, int b) { return static_cast<int>(a * (1 - alpha) + b * alpha); };
  return QColor(mix(under.red(), over.red()), mix(under.green(), over.green()),
                mix(under.blue(), over.blue()));
}

double lod(const QPainter* p, const QStyleOptionGraphicsItem* option) {
  return option->levelOfDetailFromTransform(p->worldTransform());
}

QRectF toRect(const LayoutBox& b) { return QRectF(0, 0, b.width, b.height); }

}  // namespace

QColor groupColor(int group) {
  static const std::array<QColor, 8> palette = {
      QColor(59, 130, 246), QColor(245, 158, 11), QColor(16, 185, 129), QColor(139, 92, 246),
      QColor(239, 68, 68),  QColor(20, 184, 166), QColor(236, 72, 153), QColor(132, 204, 22)};
  if (group < 0) return QColor(120, 120, 120);
  return palette[static_cast<size_t>(group) % palette.size()];
}

// --- NodeItem ---

NodeItem::NodeItem(LayoutNode node, const QFont& font) : node_(std::move(node)), font_(font) {
  setPos(node_.box.x, node_.box.y);
  setFlag(ItemIsSelectable);
  setZValue(2);
  setAcceptHoverEvents(false);
  QString tip = QString::fromStdString(node_.op);
  for (const std::string& line : node_.lines) tip += "\n" + QString::fromStdString(line);
  setToolTip(tip);
}

QRectF NodeItem::boundingRect() const { return toRect(node_.box).adjusted(-2, -2, 2, 2); }

void NodeItem::paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget*) {
  const QRectF r = toRect(node_.box);
  const bool selected = option->state & QStyle::State_Selected;
  QColor fill = Qt::white, border(96, 96, 96);
  if (node_.kind == LayoutNodeKind::Input) fill = QColor(219, 234, 254);
  if (node_.kind == LayoutNodeKind::Output) fill = QColor(220, 252, 231);
  if (node_.group >= 0) border = groupColor(node_.group).darker(140);
  p->setRenderHint(QPainter::Antialiasing);
  p->setPen(QPen(selected ? kSelected : border, selected ? 2.5 : 1.2));
  p->setBrush(fill);
  if (node_.kind == LayoutNodeKind::Op)
    p->drawRoundedRect(r, 4, 4);
  else
    p->drawEllipse(r);
  if (lod(p, option) < kTextLod) return;

  const double lineH = r.height() / (1 + node_.lines.size()) - 0.01;
  QFont bold = font_;
  bold.setBold(true);
  p->setFont(bold);
  p->setPen(Qt::black);
  QRectF line(r.left(), r.top() + (r.height() - lineH * (1 + node_.lines.size())) / 2, r.width(),
              lineH);
  p->drawText(line, Qt::AlignCenter, QString::fromStdString(node_.op));
  p->setFont(font_);
  p->setPen(QColor(85, 85, 85));
  for (const std::string& text : node_.lines) {
    line.translate(0, lineH);
    p->drawText(line, Qt::AlignCenter, QString::fromStdString(text));
  }
}

// --- EdgeItem ---

EdgeItem::EdgeItem(const LayoutEdge& edge)
    : from_(edge.from), to_(edge.to), hasArrow_(edge.hasArrow) {
  QPainterPath path;
  const auto& pts = edge.points;
  if (!pts.empty()) {
    path.moveTo(pts[0].x, pts[0].y);
    for (size_t i = 1; i + 2 < pts.size(); i += 3)
      path.cubicTo(pts[i].x, pts[i].y, pts[i + 1].x, pts[i + 1].y, pts[i + 2].x, pts[i + 2].y);
    base_ = QPointF(pts.back().x, pts.back().y);
  }
  tip_ = QPointF(edge.arrowTip.x, edge.arrowTip.y);
  setPath(path);
  setPen(QPen(QColor(110, 110, 110), 1.2));
  setZValue(1);
}

QPolygonF EdgeItem::arrowHead() const {
  QPointF d = tip_ - base_;
  const double len = std::hypot(d.x(), d.y());
  if (len < 1e-6) return {};
  const QPointF n(-d.y() / len * 3.5, d.x() / len * 3.5);
  return QPolygonF({tip_, base_ + n, base_ - n});
}

QRectF EdgeItem::boundingRect() const {
  QRectF r = QGraphicsPathItem::boundingRect();
  if (hasArrow_) r = r.united(arrowHead().boundingRect());
  return r.adjusted(-2, -2, 2, 2);
}

void EdgeItem::paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) {
  p->setRenderHint(QPainter::Antialiasing);
  p->setPen(pen());
  p->setBrush(Qt::NoBrush);
  p->drawPath(path());
  if (!hasArrow_) return;
  p->setBrush(pen().color());
  p->drawPolygon(arrowHead());
}

// --- ClusterItem ---

ClusterItem::ClusterItem(LayoutCluster cluster, const QFont& font)
    : cluster_(std::move(cluster)), font_(font) {
  setPos(cluster_.box.x, cluster_.box.y);
  setZValue(1.5);  // above edges (its label chip hides them), below nodes
  setToolTip(QString::fromStdString(cluster_.label));
}

QRectF ClusterItem::boundingRect() const { return toRect(cluster_.box).adjusted(-1, -1, 1, 1); }

void ClusterItem::paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget*) {
  const QColor c = groupColor(cluster_.group);
  QColor fill = c;
  fill.setAlpha(40);
  QColor border = c.darker(120);
  border.setAlpha(200);
  p->setRenderHint(QPainter::Antialiasing);
  p->setPen(QPen(border, 1.5));
  p->setBrush(fill);
  p->drawRoundedRect(toRect(cluster_.box), 8, 8);
  if (lod(p, option) < kTextLod) return;
  QFont bold = font_;
  bold.setBold(true);
  p->setFont(bold);
  // The label sits on an opaque chip of the cluster's tint, so edges entering
  // the group pass under it instead of through the text.
  const QString text = QString::fromStdString(cluster_.label);
  QRectF chip = p->boundingRect(toRect(cluster_.box).adjusted(6, 3, -6, 0),
                                Qt::AlignLeft | Qt::AlignTop, text);
  chip.adjust(-3, 0, 3, 0);
  p->setPen(Qt::NoPen);
  p->setBrush(blend(kBackground, c, fill.alphaF()));
  p->drawRoundedRect(chip, 3, 3);
  p->setPen(c.darker(170));
  p->drawText(chip, Qt::AlignCenter, text);
}

}  // namespace fuselens::viewer
