// The tensor inspector dock: one tensor of the last compare (the selected
// node's output, or a row of the compare dock) as a header (name, shape,
// dtype, layout), the stats lines `fuselens-cli tensor` prints, a histogram,
// a lazy values table over a 2-D slice with spin boxes for the other axes, an
// image of the same slice, a side selector (Eager | Compiled | Exact | Error |
// Error / expected), "Side by side" (the slice's image as eager | compiled |
// error next to each other) and "Save as .npy…". Every number comes from Session
// (session/tensor_inspect.h); the widget only draws. Stats of tensors over
// kWorkerElements are computed on a worker thread.
#pragma once

#include <QWidget>
#include <memory>

#include "core/support/status.h"
#include "session/tensor_inspect.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;
class QSpinBox;
class QTableView;
template <typename T>
class QFutureWatcher;

namespace fuselens {
class Session;
}

namespace fuselens::viewer {

class HistogramWidget;
class TensorSliceModel;

class TensorInspector : public QWidget {
  Q_OBJECT

 public:
  static constexpr int64_t kWorkerElements = 1 << 20;

  explicit TensorInspector(QWidget* parent = nullptr);
  ~TensorInspector() override;
  // Reads tensors from `session`'s last compare; nullptr detaches (while a
  // compare rewrites them). Re-shows the current tensor when attached.
  void setSession(const Session* session);
  // Shows the value named `name`; a sentence in the header when it has no tensor.
  void showTensor(const QString& name);
  void setSide(TensorSide side);
  // Fixes axis `axis` at `index` (the axes shown vary).
  void setSliceAxes(int rowAxis, int colAxis);
  // Writes the shown side's tensor (logical layout), atomically.
  Status saveNpy(const QString& path) const;

  QString tensorName() const { return name_; }
  QString headerText() const;
  QString statsText() const;
  bool statsPending() const { return statsPending_; }
  TensorSliceModel* sliceModel() const { return model_; }
  QTableView* table() const { return table_; }
  QComboBox* sideBox() const { return sideBox_; }
  // The image shows eager, compiled and the error map of the same slice in a row.
  void setSideBySide(bool on);
  HistogramWidget* histogramWidget() const { return histogram_; }
  const QImage& image() const { return image_; }
  QPushButton* saveButton() const { return saveButton_; }

 signals:
  void statsShown();  // the stats and histogram of the shown tensor are on screen

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  struct Computed {
    TensorStats stats;
    Histogram hist;
    int generation = 0;
  };
  void buildAxes();
  void refresh();       // fetch the side's tensor, then stats and slice
  void refreshSlice();  // table and image from the axes controls
  void showComputed(const Computed& c);
  void showImage();
  QImage sideBySideImage() const;
  void saveWithDialog();
  void clearViews(const QString& why);

  const Session* session_ = nullptr;
  QString name_;
  std::unique_ptr<InspectedTensor> tensor_;
  std::shared_ptr<const TensorData> shown_;  // the side's tensor
  SliceSpec slice_;
  int generation_ = 0;  // drops a worker's stats for a tensor no longer shown
  bool statsPending_ = false;
  QImage image_;

  QLabel* header_;
  QComboBox* sideBox_;
  QCheckBox* sideBySide_;
  QPushButton* saveButton_;
  QLabel* stats_;
  HistogramWidget* histogram_;
  QWidget* axesRow_;
  QComboBox* rowAxisBox_;
  QComboBox* colAxisBox_;
  QList<QSpinBox*> indexBoxes_;
  TensorSliceModel* model_;
  QTableView* table_;
  QLabel* imageLabel_;
  QFutureWatcher<Computed>* watcher_;
};

}  // namespace fuselens::viewer
