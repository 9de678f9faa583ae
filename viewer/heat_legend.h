// The divergence heat overlay's legend: the color scale from "agrees with
// eager" to "far off", labelled in error over expected error (log scale: 1 is
// what f32 rounding alone explains). It sits in a corner of
// the graph view, over the scene, and is shown with the overlay.
#pragma once

#include <QWidget>

namespace fuselens::viewer {

class HeatLegend : public QWidget {
  Q_OBJECT

 public:
  explicit HeatLegend(QWidget* parent = nullptr);
  QSize sizeHint() const override;

 protected:
  void paintEvent(QPaintEvent* event) override;
};

}  // namespace fuselens::viewer
