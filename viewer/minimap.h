// The graph view's minimap: a small picture of the whole scene, drawn once per
// layout, with the viewport's rectangle on top; a click or drag centres the
// view there. No per-frame work proportional to the graph: moving the view
// repaints a cached pixmap and one rectangle.
#pragma once

#include <QPixmap>
#include <QWidget>

class QGraphicsScene;

namespace fuselens::viewer {

class Minimap : public QWidget {
  Q_OBJECT

 public:
  explicit Minimap(QWidget* parent = nullptr);
  // Renders `scene` (its sceneRect) into the cached picture.
  void setScene(QGraphicsScene* scene);
  void setViewRect(const QRectF& sceneRect);
  QSize sizeHint() const override { return {180, 140}; }

 signals:
  void centerRequested(QPointF scenePos);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;

 private:
  QRectF picture() const;  // where the pixmap sits inside the widget
  QPointF toScene(const QPointF& widgetPos) const;
  QPixmap pixmap_;
  QRectF sceneRect_, viewRect_;
};

}  // namespace fuselens::viewer
