// The fusion inspector over a real pipeline on samples/mlp.onnx: the decision
// model (under QAbstractItemModelTester) lists the session's decisions, its
// scope follows the pass, the filter narrows to a node and to rejections, and
// picking a row names the two nodes.
#include "viewer/fusion_inspector.h"

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QTableView>
#include <QtTest>

#include "session/session.h"
#include "tests/support/test_paths.h"
#include "viewer/fusion_decision_model.h"

using namespace fuselens;
using namespace fuselens::viewer;

namespace {

QString samplePath(const QString& name) {
  const QByteArray dir = qgetenv("FUSELENS_SAMPLES_DIR");
  return (dir.isEmpty() ? QString::fromStdString(fuselens::test::sourcePath("/samples"))
                        : QString(dir)) +
         "/" + name;
}

int fusionSnapshot(const Session& s) {
  for (size_t i = 1; i < s.snapshots().size(); ++i)
    if (!s.snapshots()[i].record.decisions.empty()) return static_cast<int>(i);
  return -1;
}

}  // namespace

class FusionInspectorTest : public QObject {
  Q_OBJECT

  Session session_;

 private slots:
  void initTestCase() {
    if (!QFileInfo::exists(samplePath("mlp.onnx")))
      QFAIL("samples/mlp.onnx is committed but missing");
    QVERIFY(session_.open(samplePath("mlp.onnx").toStdString()).isOk());
    QVERIFY(session_.optimize(defaultPipeline()).isOk());
    QVERIFY2(!session_.decisions().empty(), "the default pipeline made no fusion decisions");
  }

  void modelListsDecisions() {
    FusionDecisionModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model.rowCount(), 0);
    model.setSession(&session_);
    QCOMPARE(model.rowCount(), int(session_.decisions().size()));
    QCOMPARE(model.columnCount(), int(FusionDecisionModel::ColumnCount));
    for (int row = 0; row < model.rowCount(); ++row) {
      const FusionDecision& d = session_.decisions()[size_t(row)];
      QCOMPARE(model.index(row, FusionDecisionModel::RuleColumn).data().toString(),
               QString::fromStdString(d.ruleId()));
      QCOMPARE(model.index(row, FusionDecisionModel::ResultColumn).data().toString(),
               d.accepted ? QString("fused") : QString("not fused"));
      const QString edge = model.index(row, FusionDecisionModel::EdgeColumn).data().toString();
      QVERIFY(edge.contains(QString::fromStdString(d.producerName)));
      QVERIFY(edge.contains(QString::fromStdString(d.consumerName)));
      const QString reason = model.index(row, FusionDecisionModel::ReasonColumn).data().toString();
      QVERIFY(!reason.startsWith("accepted: ") && !reason.startsWith("rejected: "));
      QVERIFY(QString::fromStdString(d.reason).endsWith(reason));
    }
    model.setSession(nullptr);  // detaching, as during a pipeline run
    QCOMPARE(model.rowCount(), 0);
  }

  void scopeFollowsThePass_data() {
    QTest::addColumn<bool>("allPasses");
    QTest::addColumn<int>("snapshot");
    QTest::addColumn<bool>("fusionPass");
    QTest::newRow("all passes, any step") << true << 0 << false;
    QTest::newRow("this pass: import made none") << false << 0 << false;
    QTest::newRow("this pass: the fusion pass") << false << -1 << true;
    QTest::newRow("this pass: out of range") << false << 999 << false;
  }

  void scopeFollowsThePass() {
    QFETCH(bool, allPasses);
    QFETCH(int, snapshot);
    QFETCH(bool, fusionPass);
    FusionDecisionModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setSession(&session_);
    model.setAllPasses(allPasses);
    const int fuse = fusionSnapshot(session_);
    model.setSnapshot(snapshot < 0 ? fuse : snapshot);
    int expected = 0;
    if (allPasses) expected = int(session_.decisions().size());
    if (fusionPass) expected = int(session_.snapshots()[size_t(fuse)].record.decisions.size());
    QCOMPARE(model.rowCount(), expected);
  }

  void filterNarrowsToANode_data() {
    QTest::addColumn<QString>("node");
    QTest::addColumn<bool>("rejectedOnly");
    QTest::newRow("every row") << "" << false;
    QTest::newRow("rejected only") << "" << true;
    QTest::newRow("edges of relu1") << "relu1" << false;
    QTest::newRow("rejected edges of relu1") << "relu1" << true;
    QTest::newRow("edges of softmax") << "softmax" << false;
    QTest::newRow("a node no pass considered") << "no_such_node" << false;
  }

  void filterNarrowsToANode() {
    QFETCH(QString, node);
    QFETCH(bool, rejectedOnly);
    FusionInspector inspector;
    QAbstractItemModelTester tester(inspector.filter(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    inspector.setSession(&session_);
    inspector.setNodeFilter(node);
    inspector.filter()->setRejectedOnly(rejectedOnly);
    int expected = 0;
    for (const FusionDecision& d : session_.decisions()) {
      const bool touches = node.isEmpty() || d.producerName == node.toStdString() ||
                           d.consumerName == node.toStdString();
      expected += touches && (!rejectedOnly || !d.accepted);
    }
    QCOMPARE(inspector.filter()->rowCount(), expected);
    for (int row = 0; row < inspector.filter()->rowCount(); ++row) {
      const QModelIndex i = inspector.filter()->index(row, 0);
      if (rejectedOnly) QVERIFY(!i.data(FusionDecisionModel::AcceptedRole).toBool());
      if (!node.isEmpty())
        QVERIFY(i.data(FusionDecisionModel::ProducerNameRole).toString() == node ||
                i.data(FusionDecisionModel::ConsumerNameRole).toString() == node);
    }
  }

  void pickingARowNamesBothNodes() {
    FusionInspector inspector;
    inspector.setSession(&session_);
    inspector.filter()->setRejectedOnly(true);
    QVERIFY2(inspector.filter()->rowCount() > 0, "mlp has no rejected edge to explain");
    QSignalSpy picked(&inspector, &FusionInspector::decisionPicked);
    inspector.selectRow(0);
    QCOMPARE(picked.count(), 1);
    const QModelIndex i = inspector.filter()->index(0, 0);
    QCOMPARE(picked.first().at(0).toString(),
             i.data(FusionDecisionModel::ProducerNameRole).toString());
    QCOMPARE(picked.first().at(1).toString(),
             i.data(FusionDecisionModel::ConsumerNameRole).toString());
  }

  void sortingByAColumnKeepsEveryRow() {
    FusionInspector inspector;
    inspector.setSession(&session_);
    const int rows = inspector.filter()->rowCount();
    inspector.table()->sortByColumn(FusionDecisionModel::RuleColumn, Qt::AscendingOrder);
    QCOMPARE(inspector.filter()->rowCount(), rows);
    for (int row = 1; row < rows; ++row)
      QVERIFY(inspector.filter()->index(row - 1, 0).data().toString() <=
              inspector.filter()->index(row, 0).data().toString());
  }
};

QTEST_MAIN(FusionInspectorTest)
#include "fusion_inspector_test.moc"
