// The lazy values table (tensor_slice_model.h).
#include "viewer/tensor_slice_model.h"

#include <QColor>
#include <cmath>

namespace fuselens::viewer {

void TensorSliceModel::setSlice(std::shared_ptr<const TensorData> tensor, const SliceSpec& slice) {
  beginResetModel();
  tensor_ = std::move(tensor);
  slice_ = slice;
  rows_ = cols_ = 0;
  if (tensor_ && checkSlice(slice_, tensor_->shape)) {
    // A view shows at most INT_MAX rows; no axis of a tensor that fits in memory is longer.
    rows_ = int(sliceRows(slice_, tensor_->shape));
    cols_ = int(sliceCols(slice_, tensor_->shape));
  }
  endResetModel();
}

int TensorSliceModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : rows_;
}

int TensorSliceModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : cols_;
}

QVariant TensorSliceModel::data(const QModelIndex& index, int role) const {
  if (!tensor_ || !index.isValid()) return {};
  const double v = tensor_->at(sliceElement(slice_, tensor_->shape, index.row(), index.column()));
  switch (role) {
    case Qt::DisplayRole:
      return isFloat(tensor_->dtype) ? QString::number(v, 'g', 6) : QString::number(v, 'f', 0);
    case Qt::UserRole:
      return v;
    case Qt::TextAlignmentRole:
      return int(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::ForegroundRole:
      if (!std::isfinite(v)) return QColor(Qt::red);
      return {};
    default:
      return {};
  }
}

QVariant TensorSliceModel::headerData(int section, Qt::Orientation o, int role) const {
  if (role != Qt::DisplayRole) return {};
  // Headers are the index along the shown axis, as numpy would print it.
  if (o == Qt::Horizontal && slice_.colAxis < 0) return QString();
  return QString::number(section);
}

}  // namespace fuselens::viewer
