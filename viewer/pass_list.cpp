// The pass timeline model and its list view, with step forward/back actions.
#include "viewer/pass_list.h"

#include <QAction>
#include <QBrush>
#include <QColor>
#include <QKeySequence>

#include "session/session.h"

namespace fuselens::viewer {

// --- PassListModel ---

PassListModel::PassListModel(QObject* parent) : QAbstractListModel(parent) {}

void PassListModel::setSession(const Session* session) {
  beginResetModel();
  session_ = session;
  endResetModel();
}

int PassListModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() || !session_) return 0;
  return static_cast<int>(session_->snapshots().size());
}

QString PassListModel::rowText(const Snapshot& s, int row) {
  if (row == 0)
    return QString::fromStdString(s.label) +
           QStringLiteral("\n%1 nodes").arg(s.graph().nodeCount());
  const PassRecord& r = s.record;
  QString text = QString::fromStdString(r.pass.empty() ? s.label : r.pass);
  if (!r.changed) text += QStringLiteral(" (unchanged)");
  text += QStringLiteral("\n%1 \u2192 %2 nodes  \u00b7  %3 ms")
              .arg(r.nodesBefore)
              .arg(r.nodesAfter)
              .arg(r.millis, 0, 'f', r.millis < 10 ? 2 : 1);
  return text;
}

QVariant PassListModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid) ||
      !session_)
    return {};
  const int row = index.row();
  const Snapshot& s = session_->snapshots()[static_cast<size_t>(row)];
  switch (role) {
    case Qt::DisplayRole:
      return rowText(s, row);
    case ChangedRole:
      return row == 0 || s.record.changed;
    case Qt::ForegroundRole:
      if (row > 0 && !s.record.changed) return QBrush(QColor(130, 130, 130));
      return {};
    case Qt::ToolTipRole: {
      QStringList lines{QString::fromStdString(s.label)};
      for (const auto& [name, value] : s.record.stats)
        lines << QStringLiteral("%1: %2").arg(QString::fromStdString(name)).arg(value);
      for (const Diagnostic& d : s.record.diagnostics) lines << QString::fromStdString(d.str());
      if (!s.record.decisions.empty())
        lines << QStringLiteral("%1 fusion decisions").arg(s.record.decisions.size());
      return lines.join('\n');
    }
    default:
      return {};
  }
}

// --- PassList ---

PassList::PassList(QWidget* parent)
    : QListView(parent),
      model_(new PassListModel(this)),
      forward_(new QAction(tr("Step forward"), this)),
      back_(new QAction(tr("Step back"), this)),
      hideUnchanged_(new QAction(tr("Hide passes that changed nothing"), this)) {
  setModel(model_);
  setSelectionMode(SingleSelection);
  setEditTriggers(NoEditTriggers);
  setUniformItemSizes(true);  // every row has two lines
  setSpacing(2);
  forward_->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Down));
  back_->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Up));
  forward_->setToolTip(tr("Show the snapshot after the next pass (Alt+Down)"));
  back_->setToolTip(tr("Show the snapshot before this pass (Alt+Up)"));
  hideUnchanged_->setCheckable(true);
  hideUnchanged_->setObjectName("hideUnchanged");
  addAction(back_);
  addAction(forward_);
  addAction(hideUnchanged_);
  setContextMenuPolicy(Qt::ActionsContextMenu);
  connect(forward_, &QAction::triggered, this, &PassList::stepForward);
  connect(back_, &QAction::triggered, this, &PassList::stepBack);
  connect(selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) {
            updateActions();
            if (current.isValid()) emit snapshotSelected(current.row());
          });
  connect(hideUnchanged_, &QAction::toggled, this, &PassList::applyHidden);
  connect(model_, &QAbstractItemModel::modelReset, this, [this] {
    applyHidden();
    updateActions();
  });
  updateActions();
}

void PassList::setSession(const Session* session) { model_->setSession(session); }

int PassList::currentSnapshot() const {
  const QModelIndex i = currentIndex();
  return i.isValid() ? i.row() : -1;
}

void PassList::selectSnapshot(int row) {
  if (row < 0 || row >= model_->rowCount()) return;
  setCurrentIndex(model_->index(row));
}

void PassList::stepForward() { selectSnapshot(nextShown(currentSnapshot(), 1)); }

void PassList::stepBack() { selectSnapshot(nextShown(currentSnapshot(), -1)); }

int PassList::nextShown(int row, int step) const {
  for (int r = row + step; r >= 0 && r < model_->rowCount(); r += step)
    if (!isRowHidden(r)) return r;
  return -1;
}

void PassList::applyHidden() {
  const bool hide = hideUnchanged_->isChecked();
  for (int r = 0; r < model_->rowCount(); ++r) {
    setRowHidden(r, hide && !model_->index(r).data(PassListModel::ChangedRole).toBool());
  }
  updateActions();
}

void PassList::updateActions() {
  const int row = currentSnapshot();
  forward_->setEnabled(nextShown(row, 1) >= 0);
  back_->setEnabled(row > 0 && nextShown(row, -1) >= 0);
}

}  // namespace fuselens::viewer
