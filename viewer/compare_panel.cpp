// ComparePanel: summary line and table over CompareModel.
#include "viewer/compare_panel.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>

#include "session/session.h"
#include "viewer/compare_model.h"

namespace fuselens::viewer {

ComparePanel::ComparePanel(QWidget* parent)
    : QWidget(parent),
      model_(new CompareModel(this)),
      summary_(new QLabel(this)),
      table_(new QTableView(this)),
      isolatedButton_(new QPushButton(tr("Check kernels alone"), this)),
      perturbEdit_(new QLineEdit(this)) {
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  table_->setModel(model_);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setWordWrap(false);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setColumnWidth(CompareModel::TensorColumn, 70);
  table_->setColumnWidth(CompareModel::KernelColumn, 85);
  for (int c = CompareModel::MaxAbsColumn; c <= CompareModel::AloneColumn; ++c)
    table_->setColumnWidth(c, 74);
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  isolatedButton_->setObjectName("isolatedButton");
  isolatedButton_->setToolTip(
      tr("Compile every kernel alone and feed it the eager tensors of its inputs: tells a wrong "
         "kernel from error accumulated upstream"));
  isolatedButton_->setEnabled(false);
  connect(isolatedButton_, &QPushButton::clicked, this, &ComparePanel::isolatedRequested);
  perturbEdit_->setObjectName("perturbEdit");
  perturbEdit_->setPlaceholderText(tr("perturb: k3=1e-3"));
  perturbEdit_->setToolTip(
      tr("Fault injection: add EPS times its output's RMS to a kernel's output and compare "
         "again, to see localization name it (KERNEL=EPS, comma-separated; empty: none)"));
  perturbEdit_->setMaximumWidth(140);
  connect(perturbEdit_, &QLineEdit::returnPressed, this,
          [this] { emit perturbRequested(perturbEdit_->text()); });
  auto* top = new QHBoxLayout;
  top->addWidget(summary_, 1);
  top->addWidget(perturbEdit_);
  top->addWidget(isolatedButton_);
  layout->addLayout(top);
  layout->addWidget(table_);
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          &ComparePanel::onCurrentRowChanged);
  setStatusText(tr("No comparison yet: open a model and run the pipeline."));
}

void ComparePanel::setSession(const Session* session) {
  model_->setSession(session);
  isolatedButton_->setEnabled(session && session->lastReport());
  if (!session || (!session->lastReport() && !session->lastTaps())) return;
  std::string text;
  if (const auto& rep = session->lastReport()) {
    text = rep->verdict();
    if (std::string note = rep->fallbackNote(); !note.empty()) text += "\n" + note;
    if (!rep->referenceNote.empty())
      text += "\nNOTE: " + rep->referenceNote;  // the CLI prints the same line
  }
  if (session->lastIsolated()) text += "\n" + isolatedVerdict(*session->lastIsolated());
  if (session->lastTaps()) text += (text.empty() ? "" : "\n") + session->lastTaps()->verdict();
  summary_->setText(QString::fromStdString(text));
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
