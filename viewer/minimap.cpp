// Minimap: scene -> pixmap at layout time; viewport rectangle on paint.
#include "viewer/minimap.h"

#include <QGraphicsScene>
#include <QMouseEvent>
#include <QPainter>

namespace fuselens::viewer {

Minimap::Minimap(QWidget* parent) : QWidget(parent) {
  resize(sizeHint());
  setCursor(Qt::PointingHandCursor);
  setToolTip(tr("Minimap: click or drag to move the view"));
}

void Minimap::setScene(QGraphicsScene* scene) {
  sceneRect_ = scene ? scene->sceneRect() : QRectF();
  pixmap_ = QPixmap();
  if (sceneRect_.isEmpty()) {
    update();
    return;
  }
  const QSizeF room = QSizeF(size()) - QSizeF(8, 8);
  const QSizeF fit = sceneRect_.size().scaled(room, Qt::KeepAspectRatio);
  pixmap_ = QPixmap(std::max(1, int(fit.width())), std::max(1, int(fit.height())));
  pixmap_.fill(QColor(250, 250, 250));
  QPainter p(&pixmap_);
  scene->render(&p, QRectF(QPointF(), fit), sceneRect_);
  update();
}

void Minimap::setViewRect(const QRectF& sceneRect) {
  viewRect_ = sceneRect;
  update();
}

QRectF Minimap::picture() const {
  QRectF r(QPointF(), QSizeF(pixmap_.size()));
  r.moveCenter(QRectF(rect()).center());
  return r;
}

QPointF Minimap::toScene(const QPointF& pos) const {
  const QRectF pic = picture();
  if (pic.isEmpty()) return sceneRect_.center();
  return sceneRect_.topLeft() + QPointF((pos.x() - pic.left()) / pic.width() * sceneRect_.width(),
                                        (pos.y() - pic.top()) / pic.height() * sceneRect_.height());
}

void Minimap::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setPen(QColor(148, 163, 184));
  p.setBrush(QColor(255, 255, 255));
  p.drawRect(rect().adjusted(0, 0, -1, -1));
  if (pixmap_.isNull()) return;
  const QRectF pic = picture();
  p.drawPixmap(pic.topLeft(), pixmap_);
  const double sx = pic.width() / sceneRect_.width(), sy = pic.height() / sceneRect_.height();
  const QRectF v((viewRect_.left() - sceneRect_.left()) * sx + pic.left(),
                 (viewRect_.top() - sceneRect_.top()) * sy + pic.top(), viewRect_.width() * sx,
                 viewRect_.height() * sy);
  p.setPen(QPen(QColor(30, 111, 217), 1.5));
  p.setBrush(QColor(30, 111, 217, 40));
  p.drawRect(v.intersected(pic.adjusted(-1, -1, 1, 1)));
}

void Minimap::mousePressEvent(QMouseEvent* event) {
  emit centerRequested(toScene(event->position()));
}

void Minimap::mouseMoveEvent(QMouseEvent* event) {
  if (event->buttons() & Qt::LeftButton) emit centerRequested(toScene(event->position()));
}

}  // namespace fuselens::viewer
