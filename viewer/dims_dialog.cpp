// A grid rather than a table view: a handful of dims, each with an editable
// box, reads better as a form and needs no item model.
#include "viewer/dims_dialog.h"

#include <QDialogButtonBox>
#include <QGridLayout>
#include <QLabel>
#include <QSpinBox>
#include <QVBoxLayout>
#include <limits>

namespace fuselens::viewer {

DimsDialog::DimsDialog(const QString& modelName, const std::vector<DimSuggestion>& dims,
                       QWidget* parent)
    : QDialog(parent) {
  setWindowTitle(tr("Unbound dims"));
  auto* layout = new QVBoxLayout(this);
  auto* intro = new QLabel(tr("%1 has dims that are not fixed. Choose a value for each to "
                              "compile and run it; the answer is saved with the session.")
                               .arg(modelName),
                           this);
  intro->setWordWrap(true);
  layout->addWidget(intro);
  auto* grid = new QGridLayout;
  int row = 0;
  for (const QString& head : {tr("Dim"), tr("Used by"), tr("Value"), tr("Why this value")})
    grid->addWidget(new QLabel("<b>" + head + "</b>", this), 0, row++);
  row = 1;
  for (const DimSuggestion& d : dims) {
    auto* box = new QSpinBox(this);
    box->setObjectName("dim_" + QString::fromStdString(d.name));
    box->setRange(1, std::numeric_limits<int>::max());
    box->setValue(static_cast<int>(d.value));
    grid->addWidget(new QLabel(QString::fromStdString(d.name), this), row, 0);
    grid->addWidget(new QLabel(QString::fromStdString(d.usesText()), this), row, 1);
    grid->addWidget(box, row, 2);
    grid->addWidget(new QLabel(QString::fromStdString(d.reason), this), row, 3);
    boxes_.emplace_back(d.name, box);
    ++row;
  }
  layout->addLayout(grid);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  layout->addWidget(buttons);
}

std::map<std::string, int64_t> DimsDialog::dims() const {
  std::map<std::string, int64_t> out;
  for (const auto& [name, box] : boxes_) out[name] = box->value();
  return out;
}

QSpinBox* DimsDialog::valueBox(const QString& dim) const {
  for (const auto& [name, box] : boxes_)
    if (QString::fromStdString(name) == dim) return box;
  return nullptr;
}

}  // namespace fuselens::viewer
