// FusionInspector: scope and filter controls over the decision table.
#include "viewer/fusion_inspector.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

#include "viewer/fusion_decision_model.h"

namespace fuselens::viewer {

FusionInspector::FusionInspector(QWidget* parent)
    : QWidget(parent),
      model_(new FusionDecisionModel(this)),
      filter_(new DecisionFilter(this)),
      scope_(new QComboBox(this)),
      rejectedOnly_(new QCheckBox(tr("Rejected only"), this)),
      filterLabel_(new QLabel(this)),
      clearFilter_(new QToolButton(this)),
      table_(new QTableView(this)) {
  filter_->setSourceModel(model_);
  scope_->addItem(tr("All passes"));
  scope_->addItem(tr("This step's pass"));
  clearFilter_->setText(tr("Show all nodes"));
  table_->setModel(filter_);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setSortingEnabled(true);
  table_->sortByColumn(-1, Qt::AscendingOrder);  // pipeline order until a header is clicked
  table_->setWordWrap(false);
  table_->verticalHeader()->hide();
  // The reason is what the dock is for: it gets the room; the row's tooltip
  // holds it in full when even that is not enough.
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setColumnWidth(FusionDecisionModel::RuleColumn, 130);
  table_->setColumnWidth(FusionDecisionModel::ResultColumn, 65);
  table_->setColumnWidth(FusionDecisionModel::EdgeColumn, 200);
  table_->setColumnWidth(FusionDecisionModel::ReasonColumn, 330);
  table_->setColumnWidth(FusionDecisionModel::HintColumn, 160);
  table_->setColumnWidth(FusionDecisionModel::GroupColumn, 45);
  table_->horizontalHeader()->setMinimumSectionSize(40);
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);

  auto* controls = new QHBoxLayout;
  controls->addWidget(scope_);
  controls->addWidget(rejectedOnly_);
  controls->addSpacing(12);
  controls->addWidget(filterLabel_, 1);
  controls->addWidget(clearFilter_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(controls);
  layout->addWidget(table_);

  connect(scope_, &QComboBox::currentIndexChanged, this,
          [this](int index) { model_->setAllPasses(index == 0); });
  connect(rejectedOnly_, &QCheckBox::toggled, filter_, &DecisionFilter::setRejectedOnly);
  connect(clearFilter_, &QToolButton::clicked, this, [this] { setNodeFilter(QString()); });
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          &FusionInspector::onCurrentRowChanged);
  updateFilterLabel();
}

void FusionInspector::setSession(const Session* session) { model_->setSession(session); }

void FusionInspector::setSnapshot(int row) { model_->setSnapshot(row); }

void FusionInspector::setAllPasses(bool all) { scope_->setCurrentIndex(all ? 0 : 1); }

void FusionInspector::setNodeFilter(const QString& name) {
  filter_->setNodeNames(name.isEmpty() ? QStringList() : QStringList{name});
  updateFilterLabel();
}

void FusionInspector::updateFilterLabel() {
  const QStringList& names = filter_->nodeNames();
  filterLabel_->setText(names.isEmpty() ? tr("All nodes (select a node to narrow)")
                                        : tr("Edges of %1").arg(names.join(", ")));
  clearFilter_->setEnabled(!names.isEmpty());
}

void FusionInspector::selectRow(int row) {
  table_->selectRow(row);
  table_->scrollTo(filter_->index(row, 0));
}

void FusionInspector::onCurrentRowChanged() {
  const QModelIndex current = table_->selectionModel()->currentIndex();
  if (!current.isValid()) return;
  emit decisionPicked(current.data(FusionDecisionModel::ProducerNameRole).toString(),
                      current.data(FusionDecisionModel::ConsumerNameRole).toString());
}

}  // namespace fuselens::viewer
