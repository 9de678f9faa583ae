// GraphView's context menu: on an op drawn inside a fused cluster, one "Tap
// <tensor>" entry per tensor it makes. The window runs the tap compare
// (Session::compareTaps); the view only names the tensor.
#include <QContextMenuEvent>
#include <QMenu>
#include <set>

#include "viewer/graph_items.h"
#include "viewer/graph_view.h"

namespace fuselens::viewer {

QMenu* GraphView::contextMenuFor(const NodeItem* node, QWidget* parent) {
  // Only body ops of a group make values that compare cannot see: the rest are
  // kernel boundaries, already rows of the compare table.
  if (!node || node->group() < 0 || !node->layout().bodyNode.valid()) return nullptr;
  // The group's own outputs leave its kernel: compare already has them.
  std::set<std::string> boundary;
  if (graph_ && graph_->hasNode(node->nodeId()))
    for (ValueId v : graph_->node(node->nodeId()).outputs) boundary.insert(graph_->value(v).name);
  auto* menu = new QMenu(parent);
  for (const std::string& out : node->layout().outputs) {
    const QString name = QString::fromStdString(out);
    if (boundary.count(out)) {
      menu->addAction(tr("%1 leaves the group: see its compare row").arg(name))->setEnabled(false);
      continue;
    }
    QAction* act = menu->addAction(tr("Tap %1").arg(name));
    act->setToolTip(tr("Compare %1 with eager through a tapped variant of group %2")
                        .arg(name)
                        .arg(node->group()));
    connect(act, &QAction::triggered, this, [this, name] { emit tapRequested(name); });
  }
  return menu;
}

void GraphView::contextMenuEvent(QContextMenuEvent* event) {
  auto* node = qgraphicsitem_cast<NodeItem*>(itemAt(event->pos()));
  QMenu* menu = contextMenuFor(node, this);
  if (!menu) {
    QGraphicsView::contextMenuEvent(event);
    return;
  }
  menu->setAttribute(Qt::WA_DeleteOnClose);
  menu->popup(event->globalPos());
}

}  // namespace fuselens::viewer
