// The tensor inspector dock (tensor_inspector.h): layout, the side and axes
// controls, and the worker for stats of large tensors. Fetching a tensor is
// cheap (Session shares what compare kept); the stats pass over every element
// is what can take a while, so only it goes to the worker.
#include "viewer/tensor_inspector.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFontDatabase>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QPainter>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <QtConcurrent>

#include "core/io/npy.h"
#include "session/session.h"
#include "viewer/tensor_slice_model.h"
#include "viewer/tensor_views.h"

namespace fuselens::viewer {
namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

QString joined(const std::vector<std::string>& lines) {
  QStringList out;
  for (const std::string& l : lines) out << qs(l);
  return out.join('\n');
}

}  // namespace

TensorInspector::TensorInspector(QWidget* parent) : QWidget(parent) {
  header_ = new QLabel(tr("Select a node or a compare row to inspect its tensor."), this);
  header_->setWordWrap(true);
  header_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  sideBox_ = new QComboBox(this);
  sideBox_->addItem(tr("Eager"), int(TensorSide::Eager));
  sideBox_->addItem(tr("Compiled"), int(TensorSide::Compiled));
  sideBox_->addItem(tr("Exact (f64)"), int(TensorSide::Exact));
  sideBox_->addItem(tr("Error |compiled \u2212 eager|"), int(TensorSide::Error));
  sideBox_->addItem(tr("Error / expected"), int(TensorSide::Ratio));
  sideBox_->setCurrentIndex(1);
  sideBySide_ = new QCheckBox(tr("Side by side"), this);
  sideBySide_->setToolTip(tr("The slice as eager | compiled | error map, next to each other"));
  saveButton_ = new QPushButton(tr("Save as .npy\u2026"), this);
  saveButton_->setEnabled(false);
  auto* top = new QHBoxLayout;
  top->addWidget(header_, 1);
  top->addWidget(sideBox_);
  top->addWidget(sideBySide_);
  top->addWidget(saveButton_);

  stats_ = new QLabel(this);
  stats_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  stats_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  stats_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  histogram_ = new HistogramWidget(this);
  auto* left = new QWidget(this);
  auto* leftLayout = new QVBoxLayout(left);
  leftLayout->setContentsMargins(0, 0, 0, 0);
  leftLayout->addWidget(stats_);
  leftLayout->addWidget(histogram_, 1);

  axesRow_ = new QWidget(this);
  new QHBoxLayout(axesRow_);
  axesRow_->layout()->setContentsMargins(0, 0, 0, 0);
  rowAxisBox_ = new QComboBox(this);
  colAxisBox_ = new QComboBox(this);
  model_ = new TensorSliceModel(this);
  table_ = new QTableView(this);
  table_->setModel(model_);
  // Wide enough for "-0.00429381", the longest a %.6g number gets in practice.
  table_->horizontalHeader()->setDefaultSectionSize(96);
  table_->verticalHeader()->setDefaultSectionSize(20);
  auto* middle = new QWidget(this);
  auto* middleLayout = new QVBoxLayout(middle);
  middleLayout->setContentsMargins(0, 0, 0, 0);
  middleLayout->addWidget(axesRow_);
  middleLayout->addWidget(table_, 1);

  imageLabel_ = new QLabel(this);
  imageLabel_->setAlignment(Qt::AlignCenter);
  imageLabel_->setMinimumSize(160, 120);

  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(left);
  split->addWidget(middle);
  split->addWidget(imageLabel_);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 3);
  split->setStretchFactor(2, 2);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(top);
  layout->addWidget(split, 1);

  watcher_ = new QFutureWatcher<Computed>(this);
  connect(watcher_, &QFutureWatcher<Computed>::finished, this,
          [this] { showComputed(watcher_->result()); });
  connect(sideBox_, &QComboBox::currentIndexChanged, this, [this] { refresh(); });
  connect(sideBySide_, &QCheckBox::toggled, this, [this] { refreshSlice(); });
  connect(saveButton_, &QPushButton::clicked, this, &TensorInspector::saveWithDialog);
  auto axesChanged = [this] {
    setSliceAxes(rowAxisBox_->currentIndex(), colAxisBox_->currentIndex());
  };
  connect(rowAxisBox_, &QComboBox::activated, this, axesChanged);
  connect(colAxisBox_, &QComboBox::activated, this, axesChanged);
}

TensorInspector::~TensorInspector() { watcher_->waitForFinished(); }

void TensorInspector::setSession(const Session* session) {
  session_ = session;
  refresh();
}

void TensorInspector::showTensor(const QString& name) {
  name_ = name;
  refresh();
}

void TensorInspector::setSide(TensorSide side) {
  sideBox_->setCurrentIndex(sideBox_->findData(int(side)));
}

QString TensorInspector::headerText() const { return header_->text(); }
QString TensorInspector::statsText() const { return stats_->text(); }

void TensorInspector::clearViews(const QString& why) {
  ++generation_;
  statsPending_ = false;
  shown_.reset();
  stats_->setText(why);
  histogram_->clear();
  model_->setSlice(nullptr, {});
  image_ = QImage();
  imageLabel_->clear();
  saveButton_->setEnabled(false);
}

void TensorInspector::refresh() {
  if (!session_ || name_.isEmpty()) {
    tensor_.reset();
    if (!session_ && !name_.isEmpty())
      header_->setText(tr("%1: waiting for the compare").arg(name_));
    clearViews({});
    return;
  }
  auto t = session_->inspectTensor(name_.toStdString());
  if (!t) {
    tensor_.reset();
    header_->setText(qs(t.message()));
    clearViews({});
    return;
  }
  tensor_ = std::make_unique<InspectedTensor>(std::move(*t));
  header_->setText(qs(headerLine(*tensor_)) +
                   (tensor_->note.empty() ? QString() : "\n" + qs(tensor_->note)));
  auto side = sideTensor(*tensor_, TensorSide(sideBox_->currentData().toInt()));
  if (!side) {
    clearViews(qs(side.message()));
    return;
  }
  const bool sameShape = shown_ && shown_->shape == (*side)->shape;
  shown_ = *side;
  saveButton_->setEnabled(true);
  if (!sameShape) buildAxes();
  const int generation = ++generation_;
  if (shown_->numel() > kWorkerElements) {
    statsPending_ = true;
    stats_->setText(tr("computing statistics of %1 elements\u2026").arg(shown_->numel()));
    histogram_->clear();
    watcher_->setFuture(QtConcurrent::run([t = shown_, generation] {
      return Computed{tensorStats(*t), histogram(*t, 40).value(), generation};
    }));
  } else {
    showComputed(Computed{tensorStats(*shown_), histogram(*shown_, 40).value(), generation});
  }
  refreshSlice();
}

void TensorInspector::showComputed(const Computed& c) {
  if (c.generation != generation_) return;  // a tensor no longer shown
  statsPending_ = false;
  stats_->setText(qs(shapeText(*shown_)) + "\n" + joined(statsLines(c.stats)));
  histogram_->setHistogram(c.hist);
  emit statsShown();
}

// One combo per shown axis and one spin box per axis; a shown axis's box is
// disabled, since the table runs along it.
void TensorInspector::buildAxes() {
  qDeleteAll(indexBoxes_);
  indexBoxes_.clear();
  auto* row = static_cast<QHBoxLayout*>(axesRow_->layout());
  while (QLayoutItem* item = row->takeAt(0)) {
    if (QWidget* w = item->widget(); w && w != rowAxisBox_ && w != colAxisBox_) w->deleteLater();
    delete item;
  }
  const size_t rank = shown_->rank();
  slice_ = defaultSlice(rank);
  rowAxisBox_->clear();
  colAxisBox_->clear();
  for (size_t a = 0; a < rank; ++a) {
    rowAxisBox_->addItem(tr("axis %1").arg(a));
    colAxisBox_->addItem(tr("axis %1").arg(a));
  }
  rowAxisBox_->setVisible(rank >= 2);
  colAxisBox_->setVisible(rank >= 2);
  if (rank >= 2) {
    row->addWidget(new QLabel(tr("rows"), axesRow_));
    row->addWidget(rowAxisBox_);
    row->addWidget(new QLabel(tr("columns"), axesRow_));
    row->addWidget(colAxisBox_);
  }
  if (rank > 2) row->addWidget(new QLabel(tr("index"), axesRow_));
  for (size_t a = 0; a < rank; ++a) {
    auto* box = new QSpinBox(axesRow_);
    box->setRange(0, int(std::max<int64_t>(shown_->shape[a] - 1, 0)));
    box->setPrefix(tr("a%1=").arg(a));
    connect(box, &QSpinBox::valueChanged, this, [this, a](int v) {
      slice_.fixed[a] = v;
      refreshSlice();
    });
    indexBoxes_ << box;
    row->addWidget(box);
  }
  row->addStretch(1);
  if (rank >= 2) setSliceAxes(slice_.rowAxis, slice_.colAxis);
}

void TensorInspector::setSliceAxes(int rowAxis, int colAxis) {
  if (!shown_ || shown_->rank() < 2 || rowAxis == colAxis) {
    // The same axis twice is no slice: put the combos back as they were.
    rowAxisBox_->setCurrentIndex(slice_.rowAxis);
    colAxisBox_->setCurrentIndex(slice_.colAxis);
    return;
  }
  slice_.rowAxis = rowAxis;
  slice_.colAxis = colAxis;
  rowAxisBox_->setCurrentIndex(rowAxis);
  colAxisBox_->setCurrentIndex(colAxis);
  for (int a = 0; a < int(indexBoxes_.size()); ++a)
    indexBoxes_[a]->setVisible(a != rowAxis && a != colAxis);
  refreshSlice();
}

void TensorInspector::refreshSlice() {
  if (!shown_) return;
  model_->setSlice(shown_, slice_);
  showImage();
}

void TensorInspector::showImage() {
  auto slice = slice2D(*shown_, slice_);
  if (!slice) {
    image_ = QImage();
    imageLabel_->setText(qs(slice.message()));
    return;
  }
  const auto side = TensorSide(sideBox_->currentData().toInt());
  if (sideBySide_->isChecked()) {
    image_ = sideBySideImage();
    if (!image_.isNull()) {
      imageLabel_->setPixmap(QPixmap::fromImage(
          image_.scaled(imageLabel_->size(), Qt::KeepAspectRatio, Qt::FastTransformation)));
      return;
    }
  }
  // Errors read best against "no error": white at 0 (or at 1 times the
  // expected error), growing red; values have no such centre, so gray.
  if (side == TensorSide::Error)
    image_ = sliceImage(*slice, ColorMap::Diverging, 0);
  else if (side == TensorSide::Ratio)
    image_ = sliceImage(*slice, ColorMap::Diverging, 1);
  else
    image_ = sliceImage(*slice, ColorMap::Gray);
  imageLabel_->setPixmap(QPixmap::fromImage(
      image_.scaled(imageLabel_->size(), Qt::KeepAspectRatio, Qt::FastTransformation)));
}

void TensorInspector::setSideBySide(bool on) { sideBySide_->setChecked(on); }

// Eager, compiled and |compiled - eager| of the shown slice, one column of
// background between them; eager and compiled in gray, the error from white.
// Null when a side is missing (no compiled tensor: a value inside a kernel).
QImage TensorInspector::sideBySideImage() const {
  std::vector<QImage> parts;
  for (TensorSide side : {TensorSide::Eager, TensorSide::Compiled, TensorSide::Error}) {
    auto t = sideTensor(*tensor_, side);
    if (!t) return {};
    auto slice = slice2D(**t, slice_);
    if (!slice) return {};
    parts.push_back(
        sliceImage(*slice, side == TensorSide::Error ? ColorMap::Diverging : ColorMap::Gray, 0));
  }
  const int gap = std::max(1, parts[0].width() / 16);
  QImage out(parts[0].width() * 3 + gap * 2, parts[0].height(), QImage::Format_RGB32);
  out.fill(palette().window().color());
  QPainter p(&out);
  for (size_t i = 0; i < parts.size(); ++i)
    p.drawImage(int(i) * (parts[0].width() + gap), 0, parts[i]);
  return out;
}

void TensorInspector::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  if (!image_.isNull())
    imageLabel_->setPixmap(QPixmap::fromImage(
        image_.scaled(imageLabel_->size(), Qt::KeepAspectRatio, Qt::FastTransformation)));
}

Status TensorInspector::saveNpy(const QString& path) const {
  if (!shown_) return Status::error("no tensor is shown");
  return writeNpy(path.toStdString(), *shown_);
}

void TensorInspector::saveWithDialog() {
  const QString side = qs(std::string(sideName(TensorSide(sideBox_->currentData().toInt()))));
  QString suggested = name_ + "_" + side + ".npy";
  suggested.replace('/', '_');
  const QString path = QFileDialog::getSaveFileName(this, tr("Save tensor as .npy"), suggested,
                                                    tr("NumPy arrays (*.npy)"));
  if (path.isEmpty()) return;
  if (Status st = saveNpy(path); !st)
    QMessageBox::warning(this, tr("Save as .npy"),
                         tr("Could not save %1: %2").arg(path, qs(st.message())));
}

}  // namespace fuselens::viewer
