// The tensor inspector's values table: a 2-D slice of an N-D tensor as a
// lazy table model. data() reads one element through sliceElement
// (session/tensor_inspect.h), so a large tensor is never copied or formatted
// beyond the cells on screen. A 1-D tensor is one column.
#pragma once

#include <QAbstractTableModel>
#include <memory>

#include "session/tensor_inspect.h"

namespace fuselens::viewer {

class TensorSliceModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  using QAbstractTableModel::QAbstractTableModel;
  // Shows `slice` of `tensor`; a null tensor or a slice that does not fit empties the table.
  void setSlice(std::shared_ptr<const TensorData> tensor, const SliceSpec& slice);
  const SliceSpec& slice() const { return slice_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

 private:
  std::shared_ptr<const TensorData> tensor_;
  SliceSpec slice_;
  int rows_ = 0, cols_ = 0;
};

}  // namespace fuselens::viewer
