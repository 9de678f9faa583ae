// The tensor inspector's two pictures: a histogram drawn with QPainter and a
// 2-D slice as an image (grayscale for values, a diverging map for errors).
#pragma once

#include <QImage>
#include <QWidget>

#include "session/tensor_inspect.h"

namespace fuselens::viewer {

class HistogramWidget : public QWidget {
  Q_OBJECT

 public:
  explicit HistogramWidget(QWidget* parent = nullptr);
  void setHistogram(const Histogram& h);
  void clear();
  const Histogram& histogram() const { return hist_; }
  QSize sizeHint() const override { return {260, 140}; }

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  Histogram hist_;
};

// How a slice's numbers become colours.
enum class ColorMap {
  Gray,       // min..max of the finite values, black to white: values
  Diverging,  // `center` white, below it blue, above it red, each side scaled to its extreme
};
// One pixel per element of `slice` (a [rows, cols] tensor); NaN and Inf are magenta.
QImage sliceImage(const TensorData& slice, ColorMap map, double center = 0);

}  // namespace fuselens::viewer
