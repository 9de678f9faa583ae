#include "viewer/profile_panel.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

#include "session/profile_report.h"

namespace fuselens::viewer {
namespace {

enum Column { Time, Share, Gflops, Gbps, Bound, OfRoof, Kernel, ColumnCount };

// Sorts by the number kept in UserRole, not by the text shown.
class NumberItem : public QTableWidgetItem {
 public:
  using QTableWidgetItem::QTableWidgetItem;
  bool operator<(const QTableWidgetItem& other) const override {
    return data(Qt::UserRole).toDouble() < other.data(Qt::UserRole).toDouble();
  }
};

QTableWidgetItem* cell(double value, const QString& text) {
  auto* item = new NumberItem(text);
  item->setData(Qt::UserRole, value);
  item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
}

}  // namespace

ProfilePanel::ProfilePanel(QWidget* parent) : QWidget(parent) {
  header_ =
      new QLabel(tr("No profile yet: Profile times every kernel of the compiled model."), this);
  header_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  verdicts_ = new QLabel(this);
  verdicts_->setWordWrap(true);
  runButton_ = new QPushButton(tr("Profile"), this);
  runButton_->setToolTip(tr("Compile if needed and time every kernel (20 runs)"));
  table_ = new QTableWidget(0, ColumnCount, this);
  table_->setHorizontalHeaderLabels({tr("time ms"), tr("share"), tr("GFLOP/s"), tr("GB/s"),
                                     tr("bound"), tr("of roof"), tr("kernel")});
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->verticalHeader()->hide();
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);

  auto* top = new QHBoxLayout;
  top->addWidget(header_, 1);
  top->addWidget(runButton_, 0, Qt::AlignTop);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(top);
  layout->addWidget(verdicts_);
  layout->addWidget(table_, 1);

  connect(runButton_, &QPushButton::clicked, this, &ProfilePanel::profileRequested);
  connect(table_, &QTableWidget::currentCellChanged, this, [this](int row) {
    if (row < 0) return;
    if (QTableWidgetItem* item = table_->item(row, Kernel)) emit kernelPicked(item->text());
  });
}

void ProfilePanel::setStatusText(const QString& text) { header_->setText(text); }

QString ProfilePanel::headerText() const { return header_->text(); }

void ProfilePanel::setReport(const ProfileReport* report) {
  table_->setSortingEnabled(false);
  table_->setRowCount(0);
  verdicts_->clear();
  if (!report) return;
  header_->setText(QString::fromStdString(report->header()).trimmed());
  QStringList verdicts;
  for (const std::string& v : report->verdicts) verdicts << QString::fromStdString(v);
  verdicts_->setText(verdicts.join('\n'));
  table_->setRowCount(int(report->kernels.size()));
  for (int i = 0; i < int(report->kernels.size()); ++i) {
    const KernelProfileRow& k = report->kernels[size_t(i)];
    table_->setItem(i, Time, cell(k.seconds, QString::number(k.seconds * 1e3, 'f', 4)));
    table_->setItem(i, Share, cell(k.share, QString::number(100 * k.share, 'f', 1) + "%"));
    table_->setItem(i, Gflops, cell(k.gflops, QString::number(k.gflops, 'f', 2)));
    table_->setItem(i, Gbps, cell(k.gbps, QString::number(k.gbps, 'f', 2)));
    table_->setItem(i, Bound, new QTableWidgetItem(QString::fromStdString(k.bound)));
    table_->setItem(i, OfRoof, cell(k.ofRoof, QString::number(100 * k.ofRoof, 'f', 1) + "%"));
    table_->setItem(i, Kernel, new QTableWidgetItem(QString::fromStdString(k.name)));
  }
  table_->setSortingEnabled(true);
  table_->sortByColumn(Time, Qt::DescendingOrder);  // slowest first, as the CLI prints
  table_->resizeColumnsToContents();
}

}  // namespace fuselens::viewer
