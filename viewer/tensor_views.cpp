// The histogram widget and slice images (tensor_views.h).
#include "viewer/tensor_views.h"

#include <QPainter>
#include <algorithm>
#include <cmath>

namespace fuselens::viewer {

HistogramWidget::HistogramWidget(QWidget* parent) : QWidget(parent) {
  setMinimumSize(160, 90);
  setObjectName("tensorHistogram");
}

void HistogramWidget::setHistogram(const Histogram& h) {
  hist_ = h;
  update();
}

void HistogramWidget::clear() { setHistogram({}); }

void HistogramWidget::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  const int labelH = fontMetrics().height() + 2;
  const QRect plot = rect().adjusted(4, 4, -4, -labelH - 2);
  if (hist_.counts.empty() || plot.width() <= 0 || plot.height() <= 0) {
    p.setPen(palette().color(QPalette::PlaceholderText));
    p.drawText(rect(), Qt::AlignCenter, tr("no finite values"));
    return;
  }
  const int64_t most = *std::max_element(hist_.counts.begin(), hist_.counts.end());
  const double barW = double(plot.width()) / double(hist_.counts.size());
  p.setPen(Qt::NoPen);
  p.setBrush(palette().color(QPalette::Highlight));
  for (size_t i = 0; i < hist_.counts.size(); ++i) {
    // A bin holding anything gets at least one pixel, so rare outliers stay visible.
    const double h = most > 0 ? double(hist_.counts[i]) / double(most) * plot.height() : 0;
    const double shown = hist_.counts[i] > 0 ? std::max(h, 1.0) : 0;
    p.drawRect(QRectF(plot.left() + barW * double(i), plot.bottom() - shown + 1,
                      std::max(barW - 1, 1.0), shown));
  }
  p.setPen(palette().color(QPalette::Text));
  const QRect labels(plot.left(), plot.bottom() + 2, plot.width(), labelH);
  p.drawText(labels, Qt::AlignLeft | Qt::AlignVCenter, QString::number(hist_.lo, 'g', 4));
  p.drawText(labels, Qt::AlignRight | Qt::AlignVCenter, QString::number(hist_.hi, 'g', 4));
  if (hist_.ignored > 0)
    p.drawText(labels, Qt::AlignHCenter | Qt::AlignVCenter,
               tr("%1 NaN/Inf ignored").arg(hist_.ignored));
}

namespace {

QRgb mix(QRgb a, QRgb b, double t) {
  t = std::clamp(t, 0.0, 1.0);
  auto ch = [t](int x, int y) { return int(std::lround(x + (y - x) * t)); };
  return qRgb(ch(qRed(a), qRed(b)), ch(qGreen(a), qGreen(b)), ch(qBlue(a), qBlue(b)));
}

}  // namespace

QImage sliceImage(const TensorData& slice, ColorMap map, double center) {
  const int rows = slice.shape.size() == 2 ? int(slice.shape[0]) : 0;
  const int cols = slice.shape.size() == 2 ? int(slice.shape[1]) : 0;
  QImage img(std::max(cols, 1), std::max(rows, 1), QImage::Format_RGB32);
  img.fill(Qt::lightGray);
  const TensorStats s = tensorStats(slice);
  const QRgb white = qRgb(255, 255, 255), blue = qRgb(33, 102, 172), red = qRgb(178, 24, 43);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const double v = slice.at(int64_t(r) * cols + c);
      QRgb px;
      if (!std::isfinite(v)) {
        px = qRgb(255, 0, 255);
      } else if (map == ColorMap::Gray) {
        const int g = s.max > s.min ? int(std::lround(255 * (v - s.min) / (s.max - s.min))) : 128;
        px = qRgb(g, g, g);
      } else if (v >= center) {
        px = mix(white, red, s.max > center ? (v - center) / (s.max - center) : 0);
      } else {
        px = mix(white, blue, s.min < center ? (center - v) / (center - s.min) : 0);
      }
      img.setPixel(c, r, px);
    }
  return img;
}

}  // namespace fuselens::viewer
