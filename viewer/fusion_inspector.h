// The fusion inspector dock's widget: answers "why did these two ops not
// fuse?". A table of fusion decisions (this snapshot's pass, or all passes),
// narrowed to the node selected in the graph and, optionally, to rejected
// edges; picking a row names its two nodes so the graph can ring them.
#pragma once

#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;
class QTableView;
class QToolButton;

namespace fuselens {
class Session;
}

namespace fuselens::viewer {

class DecisionFilter;
class FusionDecisionModel;

class FusionInspector : public QWidget {
  Q_OBJECT

 public:
  explicit FusionInspector(QWidget* parent = nullptr);
  void setSession(const Session* session);  // nullptr detaches
  void setSnapshot(int row);
  // Narrows the table to the edges of the op named `name`; empty clears.
  void setNodeFilter(const QString& name);
  void setAllPasses(bool all);

  FusionDecisionModel* decisionModel() const { return model_; }
  DecisionFilter* filter() const { return filter_; }
  QTableView* table() const { return table_; }
  // Selects the visible row `row` (in the filtered, sorted order).
  void selectRow(int row);

 signals:
  // A row was picked: the producer's and consumer's node names.
  void decisionPicked(const QString& producerName, const QString& consumerName);

 private:
  void onCurrentRowChanged();
  void updateFilterLabel();

  FusionDecisionModel* model_;
  DecisionFilter* filter_;
  QComboBox* scope_;
  QCheckBox* rejectedOnly_;
  QLabel* filterLabel_;
  QToolButton* clearFilter_;
  QTableView* table_;
};

}  // namespace fuselens::viewer
