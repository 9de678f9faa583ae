// The fusion inspector's models. FusionDecisionModel lists the fusion
// decisions of one snapshot's pass, or of the whole pipeline, one row per
// producer->consumer edge a fusion pass considered: rule, fused or not, the
// edge, the reason, the hint, the group, the pass. It reads the Session it is
// given and keeps no copy. DecisionFilter narrows it to the edges touching
// some nodes (by name) and, optionally, to rejected edges only.
#pragma once

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>
#include <QStringList>
#include <vector>

namespace fuselens {
class Session;
struct FusionDecision;
}  // namespace fuselens

namespace fuselens::viewer {

class FusionDecisionModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    RuleColumn,
    ResultColumn,
    EdgeColumn,
    ReasonColumn,
    HintColumn,
    GroupColumn,
    PassColumn,
    ColumnCount
  };
  enum Role { ProducerNameRole = Qt::UserRole + 1, ConsumerNameRole, AcceptedRole };

  explicit FusionDecisionModel(QObject* parent = nullptr);
  // nullptr detaches (while a worker rewrites the session's snapshots).
  void setSession(const Session* session);
  // The snapshot whose pass's decisions are listed, when not all passes.
  void setSnapshot(int row);
  void setAllPasses(bool all);
  bool allPasses() const { return allPasses_; }
  const FusionDecision* decisionAt(int row) const;

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  int columnCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  const std::vector<FusionDecision>* decisions() const;

  const Session* session_ = nullptr;
  int snapshot_ = -1;
  bool allPasses_ = true;
};

class DecisionFilter : public QSortFilterProxyModel {
  Q_OBJECT

 public:
  explicit DecisionFilter(QObject* parent = nullptr);
  // Rows whose producer or consumer is one of `names`; empty: every row.
  void setNodeNames(const QStringList& names);
  const QStringList& nodeNames() const { return names_; }
  void setRejectedOnly(bool on);
  bool rejectedOnly() const { return rejectedOnly_; }

 protected:
  bool filterAcceptsRow(int row, const QModelIndex& parent) const override;

 private:
  QStringList names_;
  bool rejectedOnly_ = false;
};

}  // namespace fuselens::viewer
