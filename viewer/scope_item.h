// A name scope in the graph view: collapsed, a box with the scope's name, its
// op and fused-group counts and badges (rejected fusions, worst divergence);
// open, a light frame around what it holds, titled with its path. Holds a copy
// of its SceneScope, never a pointer back to the view.
#pragma once

#include <QFont>
#include <QGraphicsItem>
#include <QString>

#include "session/graphview/scoped_layout.h"

namespace fuselens::viewer {

class ScopeItem : public QGraphicsItem {
 public:
  enum { Type = UserType + 4 };
  ScopeItem(graphview::SceneScope scope, const QFont& font, bool heatVisible);
  int type() const override { return Type; }
  QRectF boundingRect() const override;
  void paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

  const graphview::SceneScope& scope() const { return scope_; }
  QString path() const { return QString::fromStdString(scope_.path); }
  bool isCollapsed() const { return scope_.collapsed; }

 private:
  void paintCollapsed(QPainter* p, double lod) const;
  void paintFrame(QPainter* p, double lod) const;
  graphview::SceneScope scope_;
  QFont font_;
  bool heatVisible_;
};

}  // namespace fuselens::viewer
