// The pass timeline: one row per snapshot of the session's pipeline ("import",
// then one per pass with "(unchanged)", node count before -> after, and time).
// The model reads the Session it is given and keeps no copy of its state.
#pragma once

#include <QAbstractListModel>
#include <QListView>

namespace fuselens {
class Session;
struct Snapshot;
}  // namespace fuselens

class QAction;

namespace fuselens::viewer {

class PassListModel : public QAbstractListModel {
  Q_OBJECT

 public:
  // Data role: whether the row's pass changed the graph (true for the import row).
  enum Role { ChangedRole = Qt::UserRole + 1 };

  explicit PassListModel(QObject* parent = nullptr);
  // Resets the model over `session`'s snapshots; nullptr detaches it (while a
  // worker thread is rewriting the session).
  void setSession(const Session* session);
  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;

  // Two lines: "import" / "3 nodes"; "dce (unchanged)" / "3 → 3 nodes  ·  0.01 ms"
  static QString rowText(const Snapshot& s, int row);

 private:
  const Session* session_ = nullptr;
};

class PassList : public QListView {
  Q_OBJECT

 public:
  explicit PassList(QWidget* parent = nullptr);
  PassListModel* passModel() const { return model_; }
  void setSession(const Session* session);  // see PassListModel::setSession

  int currentSnapshot() const;  // -1 when none
  void selectSnapshot(int row);
  void stepForward();
  void stepBack();
  QAction* stepForwardAction() const { return forward_; }
  QAction* stepBackAction() const { return back_; }
  // Checkable: hides the rows of passes that changed nothing (the import row
  // stays); stepping skips hidden rows.
  QAction* hideUnchangedAction() const { return hideUnchanged_; }

 signals:
  void snapshotSelected(int row);

 private:
  void updateActions();
  void applyHidden();
  int nextShown(int row, int step) const;  // -1 when none

  PassListModel* model_;
  QAction* forward_;
  QAction* back_;
  QAction* hideUnchanged_;
};

}  // namespace fuselens::viewer
