// The dialog that asks for a model's unbound dims when it is opened: one row
// per symbolic dim (its name, the input axes that carry it, a value box filled
// with session/dim_suggest.h's suggestion, and why that value). Accept binds
// them; Cancel leaves the model unopened. Tests drive it directly.
#pragma once

#include <QDialog>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "session/dim_suggest.h"

class QSpinBox;

namespace fuselens::viewer {

class DimsDialog : public QDialog {
  Q_OBJECT

 public:
  DimsDialog(const QString& modelName, const std::vector<DimSuggestion>& dims,
             QWidget* parent = nullptr);

  std::map<std::string, int64_t> dims() const;   // name -> the value in its box
  QSpinBox* valueBox(const QString& dim) const;  // nullptr for a dim not listed

 private:
  std::vector<std::pair<std::string, QSpinBox*>> boxes_;
};

}  // namespace fuselens::viewer
