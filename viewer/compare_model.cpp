// CompareModel: report rows as table cells.
#include "viewer/compare_model.h"

#include <QBrush>
#include <QColor>
#include <QFont>

#include "session/session.h"

namespace fuselens::viewer {
namespace {

QString number(double v) { return QString::number(v, 'g', 3); }
QString qs(const std::string& s) { return QString::fromStdString(s); }

// The isolated row for the same tensor, when the isolated check ran.
const IsolatedRow* isolatedRow(const Session& s, const CompareRow& row) {
  if (!s.lastIsolated()) return nullptr;
  for (const IsolatedRow& r : s.lastIsolated()->rows)
    if (r.value == row.value) return &r;
  return nullptr;
}

}  // namespace

CompareModel::CompareModel(QObject* parent) : QAbstractTableModel(parent) {}

void CompareModel::setSession(const Session* session) {
  beginResetModel();
  session_ = session;
  endResetModel();
}

int CompareModel::reportRows() const {
  return session_ && session_->lastReport() ? int(session_->lastReport()->rows.size()) : 0;
}

const TapRow* CompareModel::tapAt(int row) const {
  const int t = row - reportRows();
  if (t < 0 || !session_ || !session_->lastTaps()) return nullptr;
  const auto& taps = session_->lastTaps()->rows;
  return t < int(taps.size()) ? &taps[size_t(t)] : nullptr;
}

const CompareRow* CompareModel::rowAt(int row) const {
  if (row < 0) return nullptr;
  if (row < reportRows()) return &session_->lastReport()->rows[static_cast<size_t>(row)];
  const TapRow* tap = tapAt(row);
  return tap ? &tap->row : nullptr;
}

int CompareModel::firstDivergentRow() const {
  if (!session_ || !session_->lastReport()) return -1;
  const CompareReport& report = *session_->lastReport();
  const CompareRow* first = report.firstDivergent();
  return first ? static_cast<int>(first - report.rows.data()) : -1;
}

int CompareModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() || !session_) return 0;
  const int taps = session_->lastTaps() ? int(session_->lastTaps()->rows.size()) : 0;
  return reportRows() + taps;
}

int CompareModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QString CompareModel::statusText(const CompareRow& row) {
  return QString::fromStdString(rowStatus(row));  // the CLI table's words
}

QVariant CompareModel::display(const CompareRow& row, int column, const TapRow* tap) const {
  const TensorMetrics& m = row.metrics;
  switch (column) {
    case TensorColumn:
      return QString::fromStdString(row.name);
    case KernelColumn:
      if (tap) return tr("tap inside group %1 (%2)").arg(tap->group).arg(qs(tap->kernel));
      return QString::fromStdString(producerLabel(row, session_->finalGraph()));
    case MaxAbsColumn:
      return number(m.maxAbs);
    case MaxRelColumn:
      return number(m.maxRel);
    case RmseColumn:
      return number(m.rmse);
    case CosineColumn:
      return QString::number(m.cosine, 'g', 6);
    case AloneColumn: {
      const IsolatedRow* iso = isolatedRow(*session_, row);
      if (!iso) return {};
      if (iso->verdict == IsolatedVerdict::Skipped) return tr("skipped");
      // Rounding mode: the kernel's own error over its own expected error.
      if (iso->own) return number(iso->own->ratio) + QStringLiteral("×");
      return number(iso->isolated.maxAbs);
    }
    case StatusColumn: {
      if (tap && !tap->outputsIdentical) return statusText(row) + " — " + qs(tap->outputsNote);
      const IsolatedRow* iso = isolatedRow(*session_, row);
      if (iso && iso->verdict != IsolatedVerdict::Ok && iso->verdict != IsolatedVerdict::Skipped)
        return statusText(row) + " — " + QString::fromUtf8(verdictName(iso->verdict));
      return statusText(row);
    }
  }
  return {};
}

QVariant CompareModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const CompareRow* row = rowAt(index.row());
  if (!row) return {};
  const bool within = row->verdict == NumericVerdict::WithinRounding;
  const bool first = index.row() == firstDivergentRow();
  switch (role) {
    case Qt::DisplayRole:
      return display(*row, index.column(), tapAt(index.row()));
    case Qt::TextAlignmentRole:
      if (index.column() >= MaxAbsColumn && index.column() <= AloneColumn)
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
      return {};
    case Qt::ForegroundRole:
      return within ? QVariant() : QBrush(QColor(170, 30, 30));
    case Qt::BackgroundRole:
      return first ? QBrush(QColor(254, 215, 215)) : QVariant();
    case Qt::FontRole:
      if (!first) return {};
      {
        QFont bold;
        bold.setBold(true);
        return bold;
      }
    case Qt::ToolTipRole:
      return first ? tr("The first tensor beyond rounding (out of tolerance), in topological order")
                   : QVariant();
    case ValueNameRole:
      return QString::fromStdString(row->name);
    case WithinToleranceRole:
      return within;
    case FirstDivergentRole:
      return first;
  }
  return {};
}

QVariant CompareModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case TensorColumn:
      return tr("Tensor");
    case KernelColumn:
      return tr("Kernel");
    case MaxAbsColumn:
      return tr("Max abs");
    case MaxRelColumn:
      return tr("Max rel");
    case RmseColumn:
      return tr("RMSE");
    case CosineColumn:
      return tr("Cosine");
    case AloneColumn:
      return tr("Alone");
    case StatusColumn:
      return tr("Status");
  }
  return {};
}

}  // namespace fuselens::viewer
