// Paints the heat scale with log-spaced tick labels.
#include "viewer/heat_legend.h"

#include <QFontMetrics>
#include <QLinearGradient>
#include <QPainter>
#include <algorithm>
#include <cmath>

#include "viewer/graph_items.h"
#include "viewer/graphview_names.h"

namespace fuselens::viewer {
namespace {

constexpr int kBarWidth = 180, kBarHeight = 10, kPad = 8;

}  // namespace

HeatLegend::HeatLegend(QWidget* parent) : QWidget(parent) {
  setAttribute(Qt::WA_TransparentForMouseEvents);
  setObjectName("heatLegend");
}

QSize HeatLegend::sizeHint() const {
  const QFontMetrics fm(font());
  return QSize(std::max(kBarWidth + 2 * kPad + fm.horizontalAdvance("1e4"),
                        2 * kPad + fm.horizontalAdvance(tr("error ÷ expected error (log scale)"))),
               2 * fm.height() + kBarHeight + 2 * kPad + 4);
}

void HeatLegend::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  p.setPen(QColor(200, 200, 200));
  p.setBrush(QColor(255, 255, 255, 230));
  p.drawRoundedRect(rect().adjusted(0, 0, -1, -1), 5, 5);

  const QFontMetrics fm(font());
  p.setPen(QColor(60, 60, 60));
  p.drawText(kPad, kPad + fm.ascent(), tr("error ÷ expected error (log scale)"));
  // Tick labels are centered on their ticks: the bar leaves half a label each side.
  const int inset = kPad + fm.horizontalAdvance("1e4") / 2;
  const QRect bar(inset, kPad + fm.height() + 2, kBarWidth, kBarHeight);
  QLinearGradient g(bar.topLeft(), bar.topRight());
  for (int i = 0; i <= 10; ++i) g.setColorAt(i / 10.0, heatColor(i / 10.0));
  p.setPen(QColor(150, 150, 150));
  p.setBrush(g);
  p.drawRect(bar);

  const int lo = static_cast<int>(std::lround(std::log10(kHeatLow)));
  const int hi = static_cast<int>(std::lround(std::log10(kHeatHigh)));
  p.setPen(QColor(80, 80, 80));
  for (int e = lo; e <= hi; ++e) {
    const double x = bar.left() + bar.width() * double(e - lo) / double(hi - lo);
    const QString label = e < 0    ? QStringLiteral("0.1")
                          : e <= 2 ? QString::number(std::pow(10, e))
                                   : QStringLiteral("1e%1").arg(e);
    p.drawLine(QPointF(x, bar.bottom()), QPointF(x, bar.bottom() + 3));
    p.drawText(QPointF(x - fm.horizontalAdvance(label) / 2.0, bar.bottom() + 4 + fm.ascent()),
               label);
  }
}

}  // namespace fuselens::viewer
