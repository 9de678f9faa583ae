// The compare dock's model: one row per tensor of the session's last compare
// report (tensor, producing kernel, max abs, max rel, RMSE, cosine, status), in
// topological order, the first divergent row marked; then one row per tap
// (Session::lastTaps), its kernel column naming the group it looked inside. It reads the Session it
// is given and keeps no copy.
#pragma once

#include <QAbstractTableModel>

namespace fuselens {
class Session;
struct CompareRow;
struct TapRow;
}  // namespace fuselens

namespace fuselens::viewer {

class CompareModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    TensorColumn,
    KernelColumn,
    MaxAbsColumn,
    MaxRelColumn,
    RmseColumn,
    CosineColumn,
    AloneColumn,  // max abs of the kernel alone, fed eager inputs (after "Check kernels alone")
    StatusColumn,
    ColumnCount
  };
  enum Role { ValueNameRole = Qt::UserRole + 1, WithinToleranceRole, FirstDivergentRole };

  explicit CompareModel(QObject* parent = nullptr);
  // nullptr detaches (while a worker writes a new report).
  void setSession(const Session* session);
  // The first row out of tolerance, or -1.
  int firstDivergentRow() const;

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  int columnCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

  // "ok", "3/64 out of tolerance", "shape mismatch", "2 NaN/Inf mismatches".
  static QString statusText(const CompareRow& row);

 private:
  int reportRows() const;
  const TapRow* tapAt(int row) const;  // nullptr for a compare report's row
  const CompareRow* rowAt(int row) const;
  QVariant display(const CompareRow& row, int column, const TapRow* tap) const;

  const Session* session_ = nullptr;
};

}  // namespace fuselens::viewer
