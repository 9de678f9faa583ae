// Painting of scope boxes and frames; text only when it is readable (the
// same level-of-detail cut as the nodes).
#include "viewer/scope_item.h"

#include <QPainter>
#include <QStyleOptionGraphicsItem>

#include "viewer/graph_items.h"

namespace fuselens::viewer {
namespace {

constexpr double kTextLod = 0.3;
const QColor kScopeFill(226, 232, 240), kChunkFill(238, 242, 255), kFrameFill(241, 245, 249);
const QColor kScopeBorder(100, 116, 139), kSelected(30, 111, 217);

QRectF rectOf(const graphview::LayoutBox& b) { return QRectF(0, 0, b.width, b.height); }

QString qs(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

ScopeItem::ScopeItem(graphview::SceneScope scope, const QFont& font, bool heatVisible)
    : scope_(std::move(scope)), font_(font), heatVisible_(heatVisible) {
  setPos(scope_.box.x, scope_.box.y);
  setZValue(scope_.collapsed ? 2 : 0.5);  // frames under everything they hold
  if (scope_.collapsed) setFlag(ItemIsSelectable);
  if (scope_.stats.unchanged()) setOpacity(0.4);  // diff mode: the pass left it alone
  QString tip = qs(scope_.path.empty() ? std::string("(top)") : scope_.path);
  for (const std::string& line : graphview::collapsedLines(scope_)) tip += "\n" + qs(line);
  if (!scope_.note.empty()) tip += "\n" + qs(scope_.note);
  tip += scope_.collapsed ? "\nDouble-click or + to open, F to show it alone"
                          : "\nDouble-click or - to close";
  setToolTip(tip);
}

QRectF ScopeItem::boundingRect() const { return rectOf(scope_.box).adjusted(-3, -3, 3, 3); }

void ScopeItem::paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget*) {
  const double lod = option->levelOfDetailFromTransform(p->worldTransform());
  if (scope_.collapsed)
    paintCollapsed(p, lod);
  else
    paintFrame(p, lod);
}

void ScopeItem::paintCollapsed(QPainter* p, double lod) const {
  const QRectF r = rectOf(scope_.box);
  QColor fill = scope_.chunk ? kChunkFill : kScopeFill;
  if (heatVisible_ && scope_.stats.worstHeat >= 0) fill = heatColor(scope_.stats.worstHeat);
  const bool selected = isSelected();
  p->setRenderHint(QPainter::Antialiasing, lod >= kTextLod);
  p->setPen(QPen(selected ? kSelected : (scope_.stats.rejected > 0 ? kRejected : kScopeBorder),
                 selected ? 2.5 : 1.6));
  p->setBrush(fill);
  p->drawRoundedRect(r, 6, 6);
  if (lod < kTextLod) return;
  // A second edge under the box: a stack of what is folded inside.
  p->setPen(QPen(kScopeBorder.lighter(130), 1));
  p->drawLine(r.bottomLeft() + QPointF(4, 3), r.bottomRight() + QPointF(-4, 3));
  const std::vector<std::string> lines = graphview::collapsedLines(scope_);
  const double lineH = (r.height() - 10) / double(lines.size());
  QFont bold = font_;
  bold.setBold(true);
  for (size_t i = 0; i < lines.size(); ++i) {
    p->setFont(i == 0 ? bold : font_);
    p->setPen(i == 0 ? QColor(Qt::black) : (i == 2 ? kRejected.darker(130) : QColor(71, 85, 105)));
    const QRectF line(r.left(), r.top() + 5 + lineH * double(i), r.width(), lineH);
    p->drawText(line, Qt::AlignCenter, qs(lines[i]));
  }
}

void ScopeItem::paintFrame(QPainter* p, double lod) const {
  const QRectF r = rectOf(scope_.box);
  p->setRenderHint(QPainter::Antialiasing, lod >= kTextLod);
  p->setPen(QPen(QColor(148, 163, 184), 1.2));
  QColor fill = kFrameFill;
  fill.setAlpha(150);
  p->setBrush(fill);
  p->drawRoundedRect(r, 8, 8);
  if (lod < kTextLod) return;
  QFont bold = font_;
  bold.setBold(true);
  p->setFont(bold);
  p->setPen(QColor(71, 85, 105));
  const QString title = QStringLiteral("\u25be ") + qs(graphview::frameTitle(scope_));
  p->drawText(r.adjusted(8, 3, -8, 0), Qt::AlignLeft | Qt::AlignTop, title);
}

}  // namespace fuselens::viewer
