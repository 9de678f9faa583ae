// Kernel-time chips on the graph view's ops and clusters: see kernel_time_item.h.
#include "viewer/kernel_time_item.h"

#include <QFontMetricsF>
#include <QGraphicsScene>
#include <QPainter>
#include <QStyleOptionGraphicsItem>
#include <algorithm>
#include <vector>

#include "session/graphview/kernel_times.h"
#include "viewer/graph_items.h"

namespace fuselens::viewer {
namespace {

constexpr double kTextLod = 0.3;  // as the items it sits on: below this zoom, no text

KernelTimeItem* chipOf(QGraphicsItem* item) {
  for (QGraphicsItem* child : item->childItems())
    if (auto* chip = qgraphicsitem_cast<KernelTimeItem*>(child)) return chip;
  return nullptr;
}

// Shows `seconds` on `item` (creating its chip once), or hides the chip when negative.
void show(QGraphicsItem* item, double width, double seconds, const QFont& font) {
  KernelTimeItem* chip = chipOf(item);
  if (seconds < 0) {
    if (chip) chip->hide();
    return;
  }
  if (!chip) chip = new KernelTimeItem(item, QPointF(width, 0), font);  // owned by `item`
  chip->setSeconds(seconds);
  chip->show();
}

}  // namespace

KernelTimeItem::KernelTimeItem(QGraphicsItem* parent, QPointF corner, const QFont& font)
    : QGraphicsItem(parent), corner_(corner), font_(font) {
  if (font.pointSizeF() > 0)  // a little smaller than the labels, never unreadable
    font_.setPointSizeF(std::max(6.0, font.pointSizeF() * 0.8));
  else if (font.pixelSize() > 0)
    font_.setPixelSize(std::max(8, font.pixelSize() * 4 / 5));
  setZValue(4);                           // above the edges and rings around its parent
  setAcceptedMouseButtons(Qt::NoButton);  // clicks select the op under it
}

void KernelTimeItem::setSeconds(double seconds) {
  prepareGeometryChange();
  text_ = QString::fromStdString(graphview::formatSeconds(seconds));
  const QFontMetricsF m(font_);
  const QSizeF size(m.horizontalAdvance(text_) + 8, m.height() + 2);
  chip_ = QRectF(corner_ + QPointF(4 - size.width(), -size.height() / 2 - 1), size);
  setToolTip(QStringLiteral("kernel time %1 (profile medians)").arg(text_));
  update();
}

QRectF KernelTimeItem::boundingRect() const { return chip_.adjusted(-1, -1, 1, 1); }

void KernelTimeItem::paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget*) {
  p->setRenderHint(QPainter::Antialiasing);
  p->setPen(QPen(QColor(180, 83, 9), 0.8));
  p->setBrush(QColor(254, 243, 199));
  p->drawRoundedRect(chip_, 3, 3);
  if (option->levelOfDetailFromTransform(p->worldTransform()) < kTextLod) return;
  p->setFont(font_);
  p->setPen(QColor(120, 53, 15));
  p->drawText(chip_, Qt::AlignCenter, text_);
}

void applyKernelTimes(QGraphicsScene& scene, const std::map<std::string, double>& seconds,
                      const QFont& font) {
  std::vector<LayoutNode> drawn;
  std::vector<NodeItem*> nodes;
  std::vector<ClusterItem*> clusters;
  for (QGraphicsItem* item : scene.items()) {
    if (auto* n = qgraphicsitem_cast<NodeItem*>(item)) {
      nodes.push_back(n);
      drawn.push_back(n->layout());
    } else if (auto* c = qgraphicsitem_cast<ClusterItem*>(item)) {
      clusters.push_back(c);
    }
  }
  // A fused op's kernel is its cluster's: the chip goes on the cluster.
  for (NodeItem* n : nodes)
    show(n, n->layout().box.width, n->group() < 0 ? graphview::secondsOf(n->layout(), seconds) : -1,
         font);
  const std::map<int, double> byGroup = graphview::secondsByGroup(drawn, seconds);
  for (ClusterItem* c : clusters) {
    auto it = byGroup.find(c->group());
    show(c, c->boundingRect().width() - 2, it == byGroup.end() ? -1 : it->second, font);
  }
}

QList<KernelTimeItem*> kernelTimeItems(const QGraphicsScene& scene) {
  QList<KernelTimeItem*> out;
  for (QGraphicsItem* item : scene.items())
    if (auto* chip = qgraphicsitem_cast<KernelTimeItem*>(item); chip && chip->isVisible())
      out.push_back(chip);
  return out;
}

}  // namespace fuselens::viewer
