// Typed graphics items of the graph view: op/input/output nodes, edges, and
// fused-group clusters. Each holds a copy of its layout record (ids and text),
// never a pointer back to a view, graph or session; qgraphicsitem_cast works
// through the Type enums.
#pragma once

#include <QColor>
#include <QFont>
#include <QGraphicsItem>
#include <QGraphicsPathItem>
#include <QString>

#include "viewer/graph_layout.h"

namespace fuselens::viewer {

// One color per fused group, cycling through a fixed palette.
QColor groupColor(int group);
// The graph view's background, which cluster labels blend with.
inline const QColor kBackground(250, 250, 250);

class NodeItem : public QGraphicsItem {
 public:
  enum { Type = UserType + 1 };
  NodeItem(LayoutNode node, const QFont& font);
  int type() const override { return Type; }
  QRectF boundingRect() const override;
  void paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

  const LayoutNode& layout() const { return node_; }
  NodeId nodeId() const { return node_.node; }
  int group() const { return node_.group; }
  QString op() const { return QString::fromStdString(node_.op); }

 private:
  LayoutNode node_;
  QFont font_;
};

class EdgeItem : public QGraphicsPathItem {
 public:
  enum { Type = UserType + 2 };
  explicit EdgeItem(const LayoutEdge& edge);
  int type() const override { return Type; }
  QRectF boundingRect() const override;
  void paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget* widget) override;
  int from() const { return from_; }
  int to() const { return to_; }

 private:
  QPolygonF arrowHead() const;
  int from_, to_;
  bool hasArrow_;
  QPointF tip_, base_;
};

class ClusterItem : public QGraphicsItem {
 public:
  enum { Type = UserType + 3 };
  ClusterItem(LayoutCluster cluster, const QFont& font);
  int type() const override { return Type; }
  QRectF boundingRect() const override;
  void paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

  int group() const { return cluster_.group; }
  QString kind() const { return QString::fromStdString(cluster_.kind); }
  QString label() const { return QString::fromStdString(cluster_.label); }
  NodeId nodeId() const { return cluster_.node; }

 private:
  LayoutCluster cluster_;
  QFont font_;
};

}  // namespace fuselens::viewer
