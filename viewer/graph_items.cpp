// Painting of the graph view's items. Text is skipped when zoomed far out
// (level of detail), where it would be unreadable anyway.
#include "viewer/graph_items.h"

#include <QPainter>
#include <QStyleOptionGraphicsItem>
#include <QtMath>
#include <algorithm>
#include <array>

namespace fuselens::viewer {
namespace {

constexpr double kTextLod = 0.3;  // below this zoom, boxes only
const QColor kSelected(30, 111, 217);
const QColor kHighlight(234, 138, 0);

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

QColor heatColor(double fraction) {
  // Pastel green -> yellow -> red, light enough for black text on top. The
  // lower half eases in, so rounding noise stays green and yellow means near
  // the default tolerance (1e-4 sits mid-scale).
  static const QColor cool(187, 247, 208), warm(254, 240, 138), hot(248, 113, 113);
  const double f = std::clamp(fraction, 0.0, 1.0);
  return f < 0.5 ? blend(cool, warm, (f * 2) * (f * 2)) : blend(warm, hot, (f - 0.5) * 2);
}

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
  setToolTip(baseToolTip());
}

QString NodeItem::baseToolTip() const {
  QString tip = QString::fromStdString(node_.op);
  if (node_.kind == LayoutNodeKind::Op && !node_.name.empty())
    tip += "  " + QString::fromStdString(node_.name);
  for (const std::string& line : node_.lines) tip += "\n" + QString::fromStdString(line);
  return tip;
}

bool NodeItem::produces(const QString& valueName) const {
  const std::string v = valueName.toStdString();
  return std::find(node_.outputs.begin(), node_.outputs.end(), v) != node_.outputs.end();
}

void NodeItem::setHeat(const QColor& fill, const QString& note) {
  heat_ = fill;
  setToolTip(fill.isValid() && !note.isEmpty() ? baseToolTip() + "\n" + note : baseToolTip());
  update();
}

void NodeItem::setHighlighted(bool on) {
  if (highlighted_ == on) return;
  highlighted_ = on;
  setZValue(on ? 3 : 2);
  update();
}

QRectF NodeItem::boundingRect() const { return toRect(node_.box).adjusted(-6, -6, 6, 6); }

void NodeItem::paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget*) {
  const QRectF r = toRect(node_.box);
  const bool selected = option->state & QStyle::State_Selected;
  QColor fill = Qt::white, border(96, 96, 96);
  if (node_.kind == LayoutNodeKind::Input) fill = QColor(219, 234, 254);
  if (node_.kind == LayoutNodeKind::Output) fill = QColor(220, 252, 231);
  if (node_.group >= 0) border = groupColor(node_.group).darker(140);
  if (heat_.isValid()) fill = heat_;
  p->setRenderHint(QPainter::Antialiasing);
  if (node_.diff != 0) {  // diff mode: added green, changed violet
    p->setPen(QPen(node_.diff == 1 ? QColor(22, 163, 74) : QColor(147, 51, 234), 3));
    p->setBrush(Qt::NoBrush);
    p->drawRoundedRect(r.adjusted(-3, -3, 3, 3), 6, 6);
  }
  if (highlighted_) {
    p->setPen(QPen(kHighlight, 3.5));
    p->setBrush(Qt::NoBrush);
    p->drawRoundedRect(r.adjusted(-4, -4, 4, 4), 6, 6);
  }
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
