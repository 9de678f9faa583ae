// FusionDecisionModel and DecisionFilter.
#include "viewer/fusion_decision_model.h"

#include <QBrush>
#include <QColor>
#include <QFont>

#include "session/session.h"

namespace fuselens::viewer {
namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

// The Result column already says fused or not: drop the reason's prefix.
QString reasonText(const FusionDecision& d) {
  QString r = qs(d.reason);
  for (const char* prefix : {"accepted: ", "rejected: "})
    if (r.startsWith(QLatin1String(prefix))) return r.mid(int(qstrlen(prefix)));
  return r;
}

QString nodeText(const std::string& name, const std::string& op) {
  if (name.empty()) return qs(op);
  return op.empty() ? qs(name) : QStringLiteral("%1 (%2)").arg(qs(name), qs(op));
}

QString toolTip(const FusionDecision& d) {
  QString tip = QStringLiteral("%1 \u2192 %2\n%3")
                    .arg(nodeText(d.producerName, d.producerOp),
                         nodeText(d.consumerName, d.consumerOp), qs(d.reason));
  if (!d.hint.empty()) tip += QStringLiteral("\nhint: %1").arg(qs(d.hint));
  return tip;
}

}  // namespace

// --- FusionDecisionModel ---

FusionDecisionModel::FusionDecisionModel(QObject* parent) : QAbstractTableModel(parent) {}

void FusionDecisionModel::setSession(const Session* session) {
  beginResetModel();
  session_ = session;
  endResetModel();
}

void FusionDecisionModel::setSnapshot(int row) {
  if (row == snapshot_) return;
  beginResetModel();
  snapshot_ = row;
  endResetModel();
}

void FusionDecisionModel::setAllPasses(bool all) {
  if (all == allPasses_) return;
  beginResetModel();
  allPasses_ = all;
  endResetModel();
}

const std::vector<FusionDecision>* FusionDecisionModel::decisions() const {
  if (!session_) return nullptr;
  if (allPasses_) return &session_->decisions();
  const auto& snaps = session_->snapshots();
  if (snapshot_ < 0 || snapshot_ >= static_cast<int>(snaps.size())) return nullptr;
  return &snaps[static_cast<size_t>(snapshot_)].record.decisions;
}

const FusionDecision* FusionDecisionModel::decisionAt(int row) const {
  const auto* list = decisions();
  if (!list || row < 0 || row >= static_cast<int>(list->size())) return nullptr;
  return &(*list)[static_cast<size_t>(row)];
}

int FusionDecisionModel::rowCount(const QModelIndex& parent) const {
  const auto* list = decisions();
  return parent.isValid() || !list ? 0 : static_cast<int>(list->size());
}

int FusionDecisionModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant FusionDecisionModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const FusionDecision* d = decisionAt(index.row());
  if (!d) return {};
  switch (role) {
    case Qt::DisplayRole:
      switch (index.column()) {
        case RuleColumn:
          return qs(d->ruleId());
        case ResultColumn:
          return d->accepted ? tr("fused") : tr("not fused");
        case EdgeColumn:
          return QStringLiteral("%1 \u2192 %2")
              .arg(nodeText(d->producerName, d->producerOp),
                   nodeText(d->consumerName, d->consumerOp));
        case ReasonColumn:
          return reasonText(*d);
        case HintColumn:
          return qs(d->hint);
        case GroupColumn:
          return d->group >= 0 ? QVariant(d->group) : QVariant();
        case PassColumn:
          return qs(d->passName);
      }
      return {};
    case Qt::ToolTipRole:
      return toolTip(*d);
    case Qt::ForegroundRole:
      if (!d->accepted && index.column() <= ResultColumn) return QBrush(QColor(190, 50, 45));
      return {};
    case ProducerNameRole:
      return qs(d->producerName);
    case ConsumerNameRole:
      return qs(d->consumerName);
    case AcceptedRole:
      return d->accepted;
  }
  return {};
}

QVariant FusionDecisionModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case RuleColumn:
      return tr("Rule");
    case ResultColumn:
      return tr("Result");
    case EdgeColumn:
      return tr("Producer \u2192 consumer");
    case ReasonColumn:
      return tr("Reason");
    case HintColumn:
      return tr("Hint");
    case GroupColumn:
      return tr("Group");
    case PassColumn:
      return tr("Pass");
  }
  return {};
}

// --- DecisionFilter ---

DecisionFilter::DecisionFilter(QObject* parent) : QSortFilterProxyModel(parent) {}

void DecisionFilter::setNodeNames(const QStringList& names) {
  names_ = names;
  invalidateRowsFilter();
}

void DecisionFilter::setRejectedOnly(bool on) {
  rejectedOnly_ = on;
  invalidateRowsFilter();
}

bool DecisionFilter::filterAcceptsRow(int row, const QModelIndex& parent) const {
  const QModelIndex i = sourceModel()->index(row, 0, parent);
  if (rejectedOnly_ && i.data(FusionDecisionModel::AcceptedRole).toBool()) return false;
  if (names_.isEmpty()) return true;
  return names_.contains(i.data(FusionDecisionModel::ProducerNameRole).toString()) ||
         names_.contains(i.data(FusionDecisionModel::ConsumerNameRole).toString());
}

}  // namespace fuselens::viewer
