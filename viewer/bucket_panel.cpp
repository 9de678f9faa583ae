// The Buckets dock. What it shows comes from session/sweep_buckets.h and
// SweepReport::summary(), so its words are the CLI's.
#include "viewer/bucket_panel.h"

#include <QCheckBox>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QStandardItemModel>
#include <QTableView>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>

#include "session/sweep_buckets.h"

namespace fuselens::viewer {
namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

QStandardItem* cell(const QString& text) {
  auto* item = new QStandardItem(text);
  item->setEditable(false);
  return item;
}

// The dim the buckets are for: the sweep's, as on the CLI, else the first.
std::string bucketedDim(const QString& sweep, const std::vector<DimSuggestion>& dims) {
  const QString dim = sweep.section('=', 0, 0).trimmed();
  return dim.isEmpty() ? dims.front().name : dim.toStdString();
}

}  // namespace

BucketPanel::BucketPanel(QWidget* parent)
    : QWidget(parent), watcher_(new QFutureWatcher<SweepOutcome>(this)) {
  dimsLabel_ = new QLabel(tr("No model with symbolic dims is open."), this);
  dimsLabel_->setWordWrap(true);
  bucketsEdit_ = new QLineEdit("pow2", this);
  bucketsEdit_->setObjectName("bucketPolicy");
  bucketsEdit_->setToolTip(
      tr("As fuselens-cli's --buckets: seq=32,64,128, pow2 or step:32; "
         "empty compiles once per shape"));
  sweepEdit_ = new QLineEdit(this);
  sweepEdit_->setObjectName("sweepRange");
  sweepEdit_->setToolTip(tr("As fuselens-cli's --sweep: seq=1:300:37 or seq=1,2,7"));
  checkEager_ = new QCheckBox(tr("Check eager"), this);
  checkEager_->setChecked(true);
  symbolic_ = new QCheckBox(tr("Symbolic kernels"), this);
  symbolic_->setObjectName("symbolicKernels");
  symbolic_->setToolTip(
      tr("As fuselens-cli's --dynamic: kernels generalized over the dim, compiled once for "
         "every value, unpadded (the bucket policy is not used)"));
  connect(symbolic_, &QCheckBox::toggled, this, [this](bool on) { bucketsEdit_->setEnabled(!on); });
  sweepButton_ = new QPushButton(tr("Sweep"), this);
  cancelButton_ = new QPushButton(tr("Cancel"), this);
  cancelButton_->hide();
  progress_ = new QProgressBar(this);
  progress_->hide();
  status_ = new QLabel(this);
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  model_ = new QStandardItemModel(0, Columns, this);
  model_->setHorizontalHeaderLabels({tr("bucket"), tr("runs"), tr("compiles"), tr("compile s"),
                                     tr("cache hits"), tr("padding waste"), tr("eager")});
  table_ = new QTableView(this);
  table_->setModel(model_);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(true);

  auto* form = new QHBoxLayout;
  form->addWidget(new QLabel(tr("Buckets"), this));
  form->addWidget(bucketsEdit_, 1);
  form->addWidget(new QLabel(tr("Sweep"), this));
  form->addWidget(sweepEdit_, 1);
  form->addWidget(checkEager_);
  form->addWidget(symbolic_);
  form->addWidget(sweepButton_);
  form->addWidget(cancelButton_);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(dimsLabel_);
  layout->addLayout(form);
  layout->addWidget(progress_);
  layout->addWidget(table_, 1);
  layout->addWidget(status_);

  connect(bucketsEdit_, &QLineEdit::textChanged, this, &BucketPanel::refreshBucket);
  connect(sweepEdit_, &QLineEdit::textChanged, this, &BucketPanel::refreshBucket);
  connect(sweepButton_, &QPushButton::clicked, this, &BucketPanel::startSweep);
  connect(cancelButton_, &QPushButton::clicked, this, &BucketPanel::cancel);
  connect(watcher_, &QFutureWatcher<SweepOutcome>::finished, this, &BucketPanel::onSweepDone);
  clear();
}

BucketPanel::~BucketPanel() {
  // The worker posts progress to this panel: stop it before the panel goes.
  if (isRunning()) {
    cancel_.cancel();
    watcher_->waitForFinished();
  }
}

void BucketPanel::setModel(const QString& modelPath, const std::vector<DimSuggestion>& dims,
                           const std::map<std::string, int64_t>& values) {
  modelPath_ = modelPath.toStdString();
  dims_ = dims;
  values_ = values;
  report_.reset();
  model_->removeRows(0, model_->rowCount());
  status_->clear();
  if (!dims_.empty()) {  // a short default range: four lengths up to the bound value
    const std::string& dim = dims_.front().name;
    const int64_t top = values_.count(dim) ? values_[dim] : 8;
    sweepEdit_->setText(
        QString("%1=1:%2:%3").arg(qs(dim)).arg(top).arg(std::max<int64_t>(1, top / 4)));
  }
  sweepButton_->setEnabled(!dims_.empty() && !isRunning());
  refreshBucket();
}

void BucketPanel::clear() { setModel({}, {}, {}); }

void BucketPanel::setBuckets(const QString& policy) { bucketsEdit_->setText(policy); }
void BucketPanel::setSweep(const QString& range) { sweepEdit_->setText(range); }
void BucketPanel::setCheckEager(bool check) { checkEager_->setChecked(check); }
void BucketPanel::setSymbolic(bool on) { symbolic_->setChecked(on); }
bool BucketPanel::isRunning() const { return watcher_->isRunning(); }
QString BucketPanel::dimsText() const { return dimsLabel_->text(); }
QString BucketPanel::statusText() const { return status_->text(); }

void BucketPanel::refreshBucket() {
  if (dims_.empty()) {
    dimsLabel_->setText(tr("The open model has no symbolic dims: nothing to bucket."));
    return;
  }
  const std::string bucketed = bucketedDim(sweepEdit_->text(), dims_);
  QStringList lines;
  for (const DimSuggestion& d : dims_) {
    auto value = values_.find(d.name);
    QString line = tr("%1 (%2)").arg(qs(d.name), qs(d.usesText()));
    if (value == values_.end()) {
      lines << line + tr(": unbound");
      continue;
    }
    line += QString(" = %1").arg(value->second);
    if (d.name == bucketed && !bucketsEdit_->text().trimmed().isEmpty()) {
      auto top = parseSweepSpec(sweepEdit_->text().toStdString());
      int64_t upTo = value->second;
      if (top)
        for (int64_t v : top->values) upTo = std::max(upTo, v);
      auto buckets = parseBucketPolicy(bucketsEdit_->text().trimmed().toStdString(), d.name, upTo);
      if (!buckets)
        line += " (" + qs(buckets.message()) + ")";
      else if (auto b = bucketOf(*buckets, value->second))
        line += tr(", in bucket %1").arg(*b);
      else
        line += tr(", beyond the largest bucket %1").arg(buckets->back());
    }
    lines << line;
  }
  dimsLabel_->setText(lines.join("\n"));
}

void BucketPanel::startSweep() {
  if (isRunning() || dims_.empty()) return;
  SweepOptions options;
  options.sweep = sweepEdit_->text().trimmed().toStdString();
  const QString policy = bucketsEdit_->text().trimmed();
  options.dynamic = symbolic_->isChecked();
  if (!policy.isEmpty() &&
      !options.dynamic)  // the CLI's flag wants the dim; the panel lets it be implied
    options.buckets =
        (policy.contains('=') ? policy
                              : sweepEdit_->text().section('=', 0, 0).trimmed() + "=" + policy)
            .toStdString();
  options.pipeline = pipeline_;
  options.checkEager = checkEager_->isChecked();
  auto request = makeSweepRequest(options);
  if (!request) {
    status_->setText(qs(request.message()));
    emit sweepFinished(status_->text());
    return;
  }
  report_.reset();
  model_->removeRows(0, model_->rowCount());
  cancel_.reset();
  progress_->setRange(0, static_cast<int>(request->sweep.values.size()));
  progress_->setValue(0);
  progress_->show();
  cancelButton_->show();
  sweepButton_->setEnabled(false);
  status_->setText(tr("sweeping %1...").arg(qs(options.sweep)));
  auto observer = [this](const SweepRun& run, size_t index, size_t total) {
    QMetaObject::invokeMethod(
        this, [this, index, total, v = run.value] { onProgress(index + 1, total, v); },
        Qt::QueuedConnection);
  };
  watcher_->setFuture(QtConcurrent::run(
      [model = modelPath_, dims = values_, request = *request, observer, cancel = cancel_] {
        SweepOutcome out;
        auto report = sweepModel(model, dims, request, observer, cancel);
        out.status = report.status();
        if (report) out.report = std::move(*report);
        return out;
      }));
}

void BucketPanel::cancel() {
  if (isRunning()) cancel_.cancel();
}

void BucketPanel::onProgress(size_t done, size_t total, int64_t value) {
  if (!isRunning()) return;
  progress_->setValue(static_cast<int>(done));
  status_->setText(tr("ran %1 of %2 (value %3)").arg(done).arg(total).arg(value));
}

void BucketPanel::onSweepDone() {
  SweepOutcome out = watcher_->result();
  progress_->hide();
  cancelButton_->hide();
  sweepButton_->setEnabled(!dims_.empty());
  if (!out.report) {
    status_->setText(cancel_.cancelled() ? tr("sweep cancelled") : qs(out.status.message()));
  } else {
    report_ = std::move(out.report);
    fillTable();
    QString text = qs(report_->summary());
    for (const std::string& note : report_->notes) text += "\nnote: " + qs(note);
    status_->setText(text);
  }
  emit sweepFinished(status_->text());
}

void BucketPanel::fillTable() {
  model_->removeRows(0, model_->rowCount());
  for (const BucketRow& row : bucketRows(*report_)) {
    const QList<QStandardItem*> items = {
        cell(QString::number(row.bucket)),
        cell(QString::number(row.runs)),
        cell(QString::number(row.compiles)),
        cell(QString::number(row.compileSeconds, 'f', 3)),
        cell(QString::number(row.cacheHits)),
        cell(QString::number(row.paddingWaste * 100, 'f', 1) + "%"),
        cell(qs(row.verdict))};
    for (QStandardItem* item : items) item->setToolTip(qs(row.str()));  // the CLI's line
    model_->appendRow(items);
  }
  table_->resizeColumnsToContents();
}

}  // namespace fuselens::viewer
