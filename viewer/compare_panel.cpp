// ComparePanel: summary line and table over CompareModel.
#include "viewer/compare_panel.h"

#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>

#include "core/session/session.h"
#include "viewer/compare_model.h"
#include "viewer/compare_summary.h"

namespace fuselens::viewer {

ComparePanel::ComparePanel(QWidget* parent)
    : QWidget(parent),
      model_(new CompareModel(this)),
      summary_(new QLabel(this)),
      table_(new QTableView(this)) {
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  table_->setModel(model_);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setWordWrap(false);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setColumnWidth(CompareModel::TensorColumn, 70);
  table_->setColumnWidth(CompareModel::KernelColumn, 85);
  for (int c = CompareModel::MaxAbsColumn; c <= CompareModel::CosineColumn; ++c)
    table_->setColumnWidth(c, 74);
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(summary_);
  layout->addWidget(table_);
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          &ComparePanel::onCurrentRowChanged);
  setStatusText(tr("No comparison yet: open a model and run the pipeline."));
}

void ComparePanel::setSession(const Session* session) {
  model_->setSession(session);
  if (!session || !session->lastReport()) return;
  summary_->setText(
      QString::fromStdString(compareSummary(*session->lastReport(), session->finalGraph())));
  const int first = model_->firstDivergentRow();
  if (first >= 0) table_->scrollTo(model_->index(first, 0), QAbstractItemView::PositionAtCenter);
}

void ComparePanel::setStatusText(const QString& text) { summary_->setText(text); }

QString ComparePanel::summary() const { return summary_->text(); }

void ComparePanel::onCurrentRowChanged() {
  const QModelIndex current = table_->selectionModel()->currentIndex();
  if (current.isValid()) emit tensorPicked(current.data(CompareModel::ValueNameRole).toString());
}

}  // namespace fuselens::viewer
