// The Buckets dock: the model's symbolic dims with their bound values, a
// bucket policy in `--buckets` syntax (which bucket the bound value falls in),
// and Sweep: `run --sweep` over a range in `--sweep` syntax, on a worker thread
// with progress and Cancel, filling a table per bucket (compile time, runs,
// cache hits, padding waste, match verdict) from session/sweep_buckets.h.
// The sweep opens its own Session from the model's path, so it never touches
// the window's session and can run beside the window's jobs.
#pragma once

#include <QWidget>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/support/cancel.h"
#include "core/support/status.h"
#include "session/dim_suggest.h"
#include "session/shape_sweep.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QStandardItemModel;
class QTableView;
template <typename T>
class QFutureWatcher;

namespace fuselens::viewer {

struct SweepOutcome {
  Status status;
  std::optional<SweepReport> report;
};

class BucketPanel : public QWidget {
  Q_OBJECT

 public:
  enum Column { Bucket, Runs, Compiles, CompileSeconds, CacheHits, PaddingWaste, Match, Columns };

  explicit BucketPanel(QWidget* parent = nullptr);
  ~BucketPanel() override;

  // The open model: its symbolic input dims and the values they are bound to.
  void setModel(const QString& modelPath, const std::vector<DimSuggestion>& dims,
                const std::map<std::string, int64_t>& values);
  void clear();
  void setPipeline(const QString& pipeline) { pipeline_ = pipeline.toStdString(); }
  void setBuckets(const QString& policy);  // "seq=32,64", "pow2", "step:32"
  void setSweep(const QString& range);     // "seq=1:300:37", "seq=1,2,7"
  void setCheckEager(bool check);
  void setSymbolic(bool on);  // symbolic kernels (--dynamic) instead of buckets
  void startSweep();
  void cancel();

  bool isRunning() const;
  QString dimsText() const;    // "seq = 128 → bucket 128"
  QString statusText() const;  // the sweep's summary, or why it failed
  const SweepReport* report() const { return report_ ? &*report_ : nullptr; }
  QStandardItemModel* model() const { return model_; }

 signals:
  void sweepFinished(const QString& summary);  // also when it failed or was cancelled

 private:
  void refreshBucket();
  void onProgress(size_t done, size_t total, int64_t value);
  void onSweepDone();
  void fillTable();

  std::string modelPath_, pipeline_;
  std::vector<DimSuggestion> dims_;
  std::map<std::string, int64_t> values_;
  std::optional<SweepReport> report_;
  CancelToken cancel_;
  QFutureWatcher<SweepOutcome>* watcher_;
  QLabel* dimsLabel_;
  QLineEdit* bucketsEdit_;
  QLineEdit* sweepEdit_;
  QCheckBox* checkEager_;
  QCheckBox* symbolic_;
  QPushButton* sweepButton_;
  QPushButton* cancelButton_;
  QProgressBar* progress_;
  QLabel* status_;
  QStandardItemModel* model_;
  QTableView* table_;
};

}  // namespace fuselens::viewer
