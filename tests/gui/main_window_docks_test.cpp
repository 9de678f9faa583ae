// The main window's docks and files on samples/mlp.onnx, end to end: fusion
// decisions drawn on the fusion snapshot's edges, the inspector ringing a
// rejected edge's nodes, the compare dock selecting a producer and feeding the
// heat overlay, node search, and Save/Open Session with warnings and errors.
#include <QAbstractItemModelTester>
#include <QDockWidget>
#include <QLineEdit>
#include <QPushButton>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include "session/session.h"
#include "tests/gui/main_window_util.h"
#include "tests/support/test_paths.h"
#include "viewer/compare_model.h"
#include "viewer/compare_panel.h"
#include "viewer/fusion_decision_model.h"
#include "viewer/fusion_inspector.h"
#include "viewer/graph_items.h"
#include "viewer/graph_view.h"
#include "viewer/heat_legend.h"
#include "viewer/main_window.h"
#include "viewer/pass_list.h"

using namespace fuselens;
using namespace fuselens::viewer;

namespace {

constexpr int kTimeoutMs = fuselens::test::kWindowTimeoutMs;

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

using fuselens::test::settled;

QString firstError(const QSignalSpy& spy) {
  return spy.isEmpty() ? QString() : spy.first().first().toString();
}

#define OPEN_MLP(w)                                     \
  if (!QFileInfo::exists(samplePath("mlp.onnx")))       \
    QFAIL("samples/mlp.onnx is committed but missing"); \
  MainWindow w;                                         \
  w.setModalErrors(false);                              \
  w.show();                                             \
  w.openFile(samplePath("mlp.onnx"));                   \
  QTRY_VERIFY_WITH_TIMEOUT(settled(w), kTimeoutMs)

}  // namespace

class MainWindowDocksTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void decisionsAppearFromTheFusionPassOn() {
    OPEN_MLP(w);
    const int fuse = fusionSnapshot(*w.session());
    QVERIFY2(fuse > 0, "no pass made fusion decisions");
    w.selectSnapshot(fuse - 1);
    QTRY_VERIFY_WITH_TIMEOUT(settled(w), kTimeoutMs);
    for (EdgeItem* e : w.graphView()->edgeItems()) QVERIFY(!e->hasDecision());

    for (int row : {fuse, -1}) {
      w.selectSnapshot(row);
      QTRY_VERIFY_WITH_TIMEOUT(settled(w), kTimeoutMs);
      int rejected = 0, accepted = 0;
      for (EdgeItem* e : w.graphView()->edgeItems()) {
        if (!e->hasDecision()) continue;
        (e->decision().accepted ? accepted : rejected)++;
        QVERIFY(e->toolTip().contains(e->decision().reason));
        QCOMPARE(e->pen().style(), e->decision().accepted ? Qt::SolidLine : Qt::DashLine);
      }
      // The first deciding pass may be fuse-patterns, which accepts whole matches only;
      // the final snapshot shows fuse-ops' rejected edges too.
      if (row == -1) QVERIFY2(rejected > 0, "mlp should show a rejected edge");
      QVERIFY2(accepted > 0, "mlp should show an accepted edge inside a group");
    }
  }

  void inspectorRowRingsItsEdge() {
    OPEN_MLP(w);
    QAbstractItemModelTester tester(w.fusionInspector()->decisionModel(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    FusionInspector* inspector = w.fusionInspector();
    QCOMPARE(inspector->decisionModel()->rowCount(), int(w.session()->decisions().size()));
    inspector->filter()->setRejectedOnly(true);
    QVERIFY(inspector->filter()->rowCount() > 0);
    inspector->selectRow(0);
    const QModelIndex i = inspector->filter()->index(0, 0);
    const QString p = i.data(FusionDecisionModel::ProducerNameRole).toString();
    const QString c = i.data(FusionDecisionModel::ConsumerNameRole).toString();
    QVERIFY(w.graphView()->nodeNamed(p)->isHighlighted());
    QVERIFY(w.graphView()->nodeNamed(c)->isHighlighted());

    // Selecting a node narrows the inspector to that node's edges.
    w.graphView()->selectAndCenter(w.graphView()->nodeNamed(c));
    QCOMPARE(inspector->filter()->nodeNames(), QStringList{c});
    for (int row = 0; row < inspector->filter()->rowCount(); ++row) {
      const QModelIndex r = inspector->filter()->index(row, 0);
      QVERIFY(r.data(FusionDecisionModel::ProducerNameRole).toString() == c ||
              r.data(FusionDecisionModel::ConsumerNameRole).toString() == c);
    }
  }

  void compareDockSelectsProducerAndFeedsHeat() {
    OPEN_MLP(w);
    CompareModel* model = w.comparePanel()->compareModel();
    QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model->rowCount(), int(w.session()->lastReport()->rows.size()));
    QVERIFY(w.comparePanel()->summary().startsWith("PASS: "));
    int row = -1;  // the first row a node produces (not a graph input)
    for (int r = 0; r < model->rowCount() && row < 0; ++r)
      if (!w.session()->lastReport()->rows[size_t(r)].producer.empty() &&
          w.session()->lastReport()->rows[size_t(r)].producer != "graph input")
        row = r;
    QVERIFY(row >= 0);
    w.comparePanel()->table()->selectRow(row);
    const QString value = model->index(row, 0).data(CompareModel::ValueNameRole).toString();
    const QList<NodeItem*> selected = fuselens::test::selectedNodes(*w.graphView());
    QCOMPARE(selected.size(), 1);
    QVERIFY(selected.front()->produces(value));

    QVERIFY(w.graphView()->hasHeat());
    QVERIFY(!w.graphView()->heatLegend()->isVisible());
    w.setHeatVisible(true);
    QVERIFY(w.graphView()->heatLegend()->isVisible());
    int hot = 0;
    for (NodeItem* n : w.graphView()->nodeItems()) hot += n->heat().isValid();
    QVERIFY(hot > 0);

    w.runPipeline();  // a new pipeline drops the report: detached, no heat
    QCOMPARE(model->rowCount(), 0);
    QVERIFY(!w.graphView()->hasHeat());
    QTRY_VERIFY_WITH_TIMEOUT(settled(w), kTimeoutMs);
    QCOMPARE(model->rowCount(), int(w.session()->lastReport()->rows.size()));
  }

  // The perturb field plants a known error in one kernel and compares again:
  // the verdict names that kernel's tensor; clearing the field restores PASS.
  void perturbFieldPlantsAnError() {
    OPEN_MLP(w);
    QTRY_VERIFY_WITH_TIMEOUT(w.session()->lastReport().has_value() && !w.isBusy(), kTimeoutMs);
    ComparePanel* panel = w.comparePanel();
    panel->perturbEdit()->setText("k1=1e-2");
    QTest::keyClick(panel->perturbEdit(), Qt::Key_Return);
    QTRY_VERIFY_WITH_TIMEOUT(!w.isBusy() && panel->summary().startsWith("FAIL: "), kTimeoutMs);
    QVERIFY2(panel->summary().contains("(from group1) is the first tensor beyond rounding"),
             qPrintable(panel->summary()));
    QCOMPARE(w.session()->perturbations.size(), size_t(1));
    panel->perturbEdit()->clear();
    QTest::keyClick(panel->perturbEdit(), Qt::Key_Return);
    QTRY_VERIFY_WITH_TIMEOUT(!w.isBusy() && panel->summary().startsWith("PASS: "), kTimeoutMs);
    QVERIFY(w.session()->perturbations.empty());
  }

  // "Check kernels alone" runs on the worker and fills the compare dock's Alone column.
  void isolatedCheckFromTheCompareDock() {
    OPEN_MLP(w);
    QTRY_VERIFY_WITH_TIMEOUT(w.session()->lastReport().has_value(), kTimeoutMs);
    ComparePanel* panel = w.comparePanel();
    QTRY_VERIFY_WITH_TIMEOUT(panel->isolatedButton()->isEnabled(), kTimeoutMs);
    panel->isolatedButton()->click();
    QTRY_VERIFY_WITH_TIMEOUT(!w.isBusy() && w.session()->lastIsolated().has_value(), kTimeoutMs);
    QVERIFY2(panel->summary().contains("PASS: every kernel within rounding when fed eager inputs"),
             qPrintable(panel->summary()));
    CompareModel* model = panel->compareModel();
    int filled = 0;
    for (int row = 0; row < model->rowCount(); ++row)
      if (model->index(row, CompareModel::AloneColumn).data().isValid()) ++filled;
    QCOMPARE(filled, 3);
  }

  void searchSelectsAndSteps_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<int>("hits");
    QTest::newRow("by op") << "Softmax" << 1;
    QTest::newRow("by name part") << "fc" << 3;  // fc1, fc2, fc2_bias
    QTest::newRow("no match") << "Conv" << 0;
  }

  void searchSelectsAndSteps() {
    QFETCH(QString, text);
    QFETCH(int, hits);
    OPEN_MLP(w);
    QCOMPARE(int(w.graphView()->findNodes(text).size()), hits);
    w.searchBox()->setText(text);
    QTest::keyClick(w.searchBox(), Qt::Key_Return);
    if (hits == 0) {
      QVERIFY(w.statusBar()->currentMessage().contains("No node matches"));
      return;
    }
    QList<NodeItem*> seen;
    for (int i = 0; i < hits + 1; ++i) {
      if (i > 0) QTest::keyClick(w.searchBox(), Qt::Key_Return);
      NodeItem* selected = nullptr;
      for (NodeItem* n : w.graphView()->nodeItems())
        if (n->isSelected()) selected = n;
      QVERIFY(selected);
      QCOMPARE(selected, w.graphView()->findNodes(text)[i % hits]);  // steps, then wraps
    }
  }

  void saveThenRestoreSession() {
    QTemporaryDir dir;
    const QString model = dir.filePath("model.onnx");
    QVERIFY(QFile::copy(samplePath("mlp.onnx"), model));
    const QString pipe = "dce,fuse-ops{max-ops=2}";
    {
      MainWindow w;
      w.setModalErrors(false);
      QSignalSpy errors(&w, &MainWindow::errorShown);
      QSignalSpy saved(&w, &MainWindow::sessionSaved);
      w.setPipeline(pipe);
      w.openFile(model);
      QTRY_VERIFY_WITH_TIMEOUT(settled(w), kTimeoutMs);
      w.saveSession(dir.filePath("mine"));  // the suffix is added
      QTRY_VERIFY_WITH_TIMEOUT(!w.isBusy(), kTimeoutMs);
      QVERIFY2(errors.isEmpty(), qPrintable(firstError(errors)));
      QCOMPARE(saved.count(), 1);
      QCOMPARE(saved.first().first().toString(), dir.filePath("mine.fuselens.json"));
      QVERIFY(w.recentFiles().contains(dir.filePath("mine.fuselens.json")));
    }
    for (bool changed : {false, true}) {
      if (changed) {  // other bytes at the same path: it opens, with a warning
        QVERIFY(QFile::remove(model));
        QVERIFY(QFile::copy(samplePath("matmul_bias_relu.onnx"), model));
      }
      MainWindow w;
      w.setModalErrors(false);
      QSignalSpy errors(&w, &MainWindow::errorShown);
      w.openSession(dir.filePath("mine.fuselens.json"));
      QTRY_VERIFY_WITH_TIMEOUT(settled(w), kTimeoutMs);
      QVERIFY2(errors.isEmpty(), qPrintable(firstError(errors)));
      QVERIFY(w.session());
      QCOMPARE(QString::fromStdString(w.session()->pipeline()), pipe);
      QCOMPARE(w.pipeline(), pipe);
      QCOMPARE(w.passList()->passModel()->rowCount(), int(w.session()->snapshots().size()));
      QCOMPARE(w.statusBar()->currentMessage().contains("changed"), changed);
    }
  }

  void badSessionFileShowsError_data() {
    QTest::addColumn<QByteArray>("contents");
    QTest::newRow("missing file") << QByteArray();
    QTest::newRow("not JSON") << QByteArray("{ this is not json");
    QTest::newRow("names a missing model")
        << QByteArray(R"({"fuselens_session":1,"model":"/no/such/model.onnx","pipeline":"dce"})");
  }

  void badSessionFileShowsError() {
    QFETCH(QByteArray, contents);
    QTemporaryDir dir;
    const QString path = dir.filePath("bad.fuselens.json");
    if (!contents.isEmpty()) {
      QFile f(path);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(contents);
    }
    MainWindow w;
    w.setModalErrors(false);
    QSignalSpy errors(&w, &MainWindow::errorShown);
    w.openSession(path);
    QTRY_VERIFY_WITH_TIMEOUT(!w.isBusy(), kTimeoutMs);
    QCOMPARE(errors.count(), 1);
    QVERIFY(!firstError(errors).isEmpty());
    QVERIFY(!w.session());
  }

  void saveWithoutModelIsAnError() {
    MainWindow w;
    w.setModalErrors(false);
    QSignalSpy errors(&w, &MainWindow::errorShown);
    w.saveSession(QDir::temp().filePath("never.fuselens.json"));
    QCOMPARE(errors.count(), 1);
    QVERIFY(!w.isBusy());
  }
};

QTEST_MAIN(MainWindowDocksTest)
#include "main_window_docks_test.moc"
