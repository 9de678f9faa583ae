// A profile's kernel time on the op or fused cluster that runs the kernel: a
// small chip across the item's top-right corner ("0.31 ms"), a child of that
// item so it moves and hides with it. Plain ops show their own kernel's time,
// clusters the sum over their members (session/graphview/kernel_times.h);
// collapsed scopes carry theirs in their badges already.
#pragma once

#include <QFont>
#include <QGraphicsItem>
#include <QList>
#include <QString>
#include <map>
#include <string>

class QGraphicsScene;

namespace fuselens::viewer {

class KernelTimeItem : public QGraphicsItem {
 public:
  enum { Type = UserType + 5 };
  // `corner`: the parent's top-right corner, in the parent's coordinates.
  KernelTimeItem(QGraphicsItem* parent, QPointF corner, const QFont& font);
  int type() const override { return Type; }
  QRectF boundingRect() const override;
  void paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

  void setSeconds(double seconds);
  QString text() const { return text_; }

 private:
  QPointF corner_;
  QFont font_;
  QString text_;
  QRectF chip_;
};

// Gives every drawn op and cluster of `scene` the time its kernels took
// (`seconds`: by the value each kernel writes first), hiding the chips of
// those without one; an empty map hides them all.
void applyKernelTimes(QGraphicsScene& scene, const std::map<std::string, double>& seconds,
                      const QFont& font);
// The chips shown, for tests.
QList<KernelTimeItem*> kernelTimeItems(const QGraphicsScene& scene);

}  // namespace fuselens::viewer
