// EdgeItem: a dot spline with an arrowhead, and the fusion decision about the
// edge, when there is one: rejected edges dashed red with their rule id on a
// small chip at the middle, accepted ones tinted with their group's color.
#include <QFontMetricsF>
#include <QPainter>
#include <QStyleOptionGraphicsItem>
#include <QtMath>

#include "viewer/graph_items.h"

namespace fuselens::viewer {
namespace {

constexpr double kTextLod = 0.3;     // as for the nodes: below this zoom, no text
constexpr double kSimpleLod = 0.15;  // below this, straight lines
const QColor kPlain(110, 110, 110);
const QColor kHighlight(234, 138, 0);

QString decisionToolTip(const EdgeDecision& d) {
  QString tip = QStringLiteral("%1 (%2)").arg(
      d.accepted ? QStringLiteral("fused") : QStringLiteral("not fused"), d.rule);
  if (!d.pass.isEmpty()) tip += QStringLiteral(" \u00b7 %1").arg(d.pass);
  tip += "\n" + d.reason;
  if (!d.hint.isEmpty()) tip += QStringLiteral("\nhint: %1").arg(d.hint);
  return tip;
}

}  // namespace

EdgeItem::EdgeItem(const LayoutEdge& edge, QString fromName, QString toName)
    : from_(edge.from),
      to_(edge.to),
      fromName_(std::move(fromName)),
      toName_(std::move(toName)),
      hasArrow_(edge.hasArrow),
      hasLabel_(edge.hasLabel),
      labelCenter_(edge.labelCenter.x, edge.labelCenter.y) {
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
  setPen(QPen(kPlain, 1.2));
  setZValue(1);
}

void EdgeItem::setDecision(const EdgeDecision& decision, const QFont& labelFont) {
  prepareGeometryChange();
  hasDecision_ = true;
  decision_ = decision;
  font_ = labelFont;
  if (decision.accepted) {
    setPen(QPen(groupColor(decision.group).darker(130), 1.6));
    chip_ = QRectF();
  } else {
    setPen(QPen(kRejected, 1.6, Qt::DashLine));
    const QSizeF size = QFontMetricsF(font_).size(Qt::TextSingleLine, decision.rule);
    const QPointF mid = path().isEmpty() ? QPointF() : path().pointAtPercent(0.5);
    chip_ = QRectF(QPointF(), size + QSizeF(6, 2));
    chip_.moveCenter(hasLabel_ ? labelCenter_ : mid);
    setZValue(1.6);  // the chip above cluster fills, below nodes
  }
  setToolTip(decisionToolTip(decision));
}

void EdgeItem::setHighlighted(bool on) {
  if (highlighted_ == on) return;
  highlighted_ = on;
  update();
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
  if (!chip_.isNull()) r = r.united(chip_);
  return r.adjusted(-3, -3, 3, 3);
}

void EdgeItem::paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget*) {
  const double lod = option->levelOfDetailFromTransform(p->worldTransform());
  if (lod < kSimpleLod && !path().isEmpty()) {
    // Zoomed far out: a straight line per edge, no curves, arrows or chips.
    p->setRenderHint(QPainter::Antialiasing, false);
    p->setPen(QPen(pen().color(), 0));
    p->drawLine(path().elementAt(0), path().currentPosition());
    return;
  }
  p->setRenderHint(QPainter::Antialiasing);
  QPen line = pen();
  if (highlighted_) line = QPen(kHighlight, 3.0, line.style());
  p->setPen(line);
  p->setBrush(Qt::NoBrush);
  p->drawPath(path());
  if (hasArrow_) {
    p->setPen(QPen(line.color(), 1.2));
    p->setBrush(line.color());
    p->drawPolygon(arrowHead());
  }
  if (!chip_.isNull() && lod >= kTextLod) paintRuleChip(p);
}

void EdgeItem::paintRuleChip(QPainter* p) const {
  p->setPen(QPen(kRejected, 0.8));
  p->setBrush(QColor(255, 241, 240));
  p->drawRoundedRect(chip_, 3, 3);
  p->setFont(font_);
  p->setPen(kRejected.darker(140));
  p->drawText(chip_, Qt::AlignCenter, decision_.rule);
}

}  // namespace fuselens::viewer
