// The profile dock's widget: Session::profile's report as a table, slowest
// kernel first (any column sorts), under the same machine and overhead lines
// and verdicts `fuselens-cli profile` prints. Picking a row names the kernel,
// so the graph can select the node it runs.
#pragma once

#include <QWidget>

class QLabel;
class QPushButton;
class QTableWidget;

namespace fuselens {
struct ProfileReport;
}

namespace fuselens::viewer {

class ProfilePanel : public QWidget {
  Q_OBJECT

 public:
  explicit ProfilePanel(QWidget* parent = nullptr);
  // Shows `report`; nullptr clears the table (no profile, or one running).
  void setReport(const ProfileReport* report);
  void setStatusText(const QString& text);

  QTableWidget* table() const { return table_; }
  QPushButton* runButton() const { return runButton_; }
  QString headerText() const;

 signals:
  void profileRequested();
  void kernelPicked(const QString& kernelName);

 private:
  QLabel* header_;
  QLabel* verdicts_;
  QTableWidget* table_;
  QPushButton* runButton_;
};

}  // namespace fuselens::viewer
