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

#include "viewer/graphview_names.h"

namespace fuselens::viewer {

// One color per fused group, cycling through a fixed palette.
QColor groupColor(int group);
// The divergence heat scale: 0 (cool, agrees with eager) .. 1 (hot).
QColor heatColor(double fraction);
// Rejected fusion edges and their rule labels.
inline const QColor kRejected(214, 69, 65);
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
  QString name() const { return QString::fromStdString(node_.name); }
  bool produces(const QString& valueName) const;

  // The divergence overlay: fills the box with `fill` and appends `note` to
  // the tooltip; an invalid color clears it.
  void setHeat(const QColor& fill, const QString& note);
  QColor heat() const { return heat_; }
  // A highlight ring, for the fusion inspector's and the compare table's picks.
  void setHighlighted(bool on);
  bool isHighlighted() const { return highlighted_; }

 private:
  QString baseToolTip() const;

  LayoutNode node_;
  QFont font_;
  QColor heat_;
  bool highlighted_ = false;
};

// What an edge shows of the fusion decision about it.
struct EdgeDecision {
  bool accepted = false;
  QString rule, reason, hint, pass;
  int group = -1;
};

class EdgeItem : public QGraphicsPathItem {
 public:
  enum { Type = UserType + 2 };
  // `from`/`to`: the names of the nodes it joins (LayoutNode::name).
  EdgeItem(const LayoutEdge& edge, QString fromName = {}, QString toName = {});
  int type() const override { return Type; }
  QRectF boundingRect() const override;
  void paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget* widget) override;
  int from() const { return from_; }
  int to() const { return to_; }
  const QString& fromName() const { return fromName_; }
  const QString& toName() const { return toName_; }

  // Rejected: dashed red with the rule id on a chip (in `labelFont`, where
  // the layout left room, else mid-edge); accepted: tinted with the group's
  // color. The tooltip carries the reason and the hint.
  void setDecision(const EdgeDecision& decision, const QFont& labelFont);
  bool hasDecision() const { return hasDecision_; }
  const EdgeDecision& decision() const { return decision_; }
  void setHighlighted(bool on);
  bool isHighlighted() const { return highlighted_; }

 private:
  QPolygonF arrowHead() const;
  void paintRuleChip(QPainter* p) const;
  int from_, to_;
  QString fromName_, toName_;
  bool hasArrow_;
  QPointF tip_, base_;
  bool hasLabel_;
  QPointF labelCenter_;  // where dot left room for the rule chip, when hasLabel_
  bool hasDecision_ = false;
  bool highlighted_ = false;
  EdgeDecision decision_;
  QFont font_;
  QRectF chip_;  // the rule label's box, in item coordinates
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
