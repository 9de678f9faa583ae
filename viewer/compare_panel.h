// The compare dock's widget: the last compare report as a table (see
// CompareModel) under a one-line summary, the first divergent tensor marked
// and scrolled to. Picking a row names the tensor, so the graph can select
// the node that produced it.
#pragma once

#include <QWidget>

class QLabel;
class QLineEdit;
class QPushButton;
class QTableView;

namespace fuselens {
class Session;
}

namespace fuselens::viewer {

class CompareModel;

class ComparePanel : public QWidget {
  Q_OBJECT

 public:
  explicit ComparePanel(QWidget* parent = nullptr);
  // Shows `session`'s last report; nullptr detaches (while a compare runs).
  void setSession(const Session* session);
  void setStatusText(const QString& text);  // "compare: running...", shown when no report

  CompareModel* compareModel() const { return model_; }
  QTableView* table() const { return table_; }
  QPushButton* isolatedButton() const { return isolatedButton_; }
  QLineEdit* perturbEdit() const { return perturbEdit_; }
  QString summary() const;

 signals:
  void tensorPicked(const QString& valueName);
  // "Check kernels alone": the window runs Session::compareIsolated.
  void isolatedRequested();
  // Return in the perturb field: "k3=1e-3" (several separated by commas), or
  // empty for none; the window sets Session::perturbations and compares again.
  void perturbRequested(const QString& spec);

 private:
  void onCurrentRowChanged();

  CompareModel* model_;
  QLabel* summary_;
  QTableView* table_;
  QPushButton* isolatedButton_;
  QLineEdit* perturbEdit_;
};

}  // namespace fuselens::viewer
