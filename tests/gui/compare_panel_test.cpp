// The compare dock over a real compiled run of samples/mlp.onnx: the model
// (under QAbstractItemModelTester) has one row per report row in the report's
// order, the status column reads each kind of failure, the first divergent
// row is marked, and picking a row names its tensor.
#include "viewer/compare_panel.h"

#include <QAbstractItemModelTester>
#include <QPushButton>
#include <QTableView>
#include <QtTest>

#include "session/session.h"
#include "tests/support/test_paths.h"
#include "viewer/compare_model.h"

using namespace fuselens;
using namespace fuselens::viewer;

namespace {

QString samplePath(const QString& name) {
  const QByteArray dir = qgetenv("FUSELENS_SAMPLES_DIR");
  return (dir.isEmpty() ? QString::fromStdString(fuselens::test::sourcePath("/samples"))
                        : QString(dir)) +
         "/" + name;
}

}  // namespace

class ComparePanelTest : public QObject {
  Q_OBJECT

  Session session_;

  void compareWith(const CompareOptions& tol) {
    auto inputs = session_.randomInputs(0);
    QVERIFY(inputs.isOk());
    auto report = session_.compare(*inputs, tol);
    QVERIFY2(report.isOk(), report.isOk() ? "" : report.message().c_str());
  }

 private slots:
  void initTestCase() {
    if (!QFileInfo::exists(samplePath("mlp.onnx")))
      QFAIL("samples/mlp.onnx is committed but missing");
    QVERIFY(session_.open(samplePath("mlp.onnx").toStdString()).isOk());
    QVERIFY(session_.optimize(defaultPipeline()).isOk());
  }

  void statusText_data() {
    QTest::addColumn<bool>("shapeMatch");
    QTest::addColumn<int>("nanMismatch");
    QTest::addColumn<int>("outOfTolerance");
    QTest::addColumn<QString>("text");
    QTest::newRow("within tolerance") << true << 0 << 0 << "ok";
    QTest::newRow("some elements off") << true << 0 << 3 << "OUT (3 elems)";
    QTest::newRow("NaN where eager has none") << true << 2 << 0 << "OUT (2 elems)";
    QTest::newRow("shape differs") << false << 0 << 0 << "SHAPE MISMATCH";
  }

  void statusText() {
    QFETCH(bool, shapeMatch);
    QFETCH(int, nanMismatch);
    QFETCH(int, outOfTolerance);
    QFETCH(QString, text);
    CompareRow row;
    row.metrics.count = 64;
    row.metrics.shapeMatch = shapeMatch;
    row.metrics.nanMismatch = nanMismatch;
    row.metrics.outOfTolerance = outOfTolerance;
    row.metrics.toleranceStat = outOfTolerance > 0 ? 2.0 : 0.0;
    QCOMPARE(CompareModel::statusText(row), text);
  }

  void rowsFollowTheReport_data() {
    QTest::addColumn<double>("tolerance");
    QTest::newRow("default tolerance") << 1e-4;
    QTest::newRow("zero tolerance: divergent rows likely") << 0.0;
    QTest::newRow("rounding verdicts (the default)") << -1.0;
  }

  void rowsFollowTheReport() {
    QFETCH(double, tolerance);
    ComparePanel panel;
    CompareModel* model = panel.compareModel();
    QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    compareWith(tolerance < 0 ? CompareOptions{} : CompareOptions(Tolerance{tolerance, tolerance}));
    panel.setSession(&session_);
    const CompareReport& report = *session_.lastReport();
    QCOMPARE(model->rowCount(), int(report.rows.size()));
    QVERIFY(panel.summary().startsWith("PASS: ") || panel.summary().startsWith("FAIL: "));
    QVERIFY(panel.summary().startsWith(QString::fromStdString(report.verdict())));
    const CompareRow* first = report.firstDivergent();
    QCOMPARE(model->firstDivergentRow(), first ? int(first - report.rows.data()) : -1);
    for (int row = 0; row < model->rowCount(); ++row) {
      const CompareRow& r = report.rows[size_t(row)];
      QCOMPARE(model->index(row, CompareModel::TensorColumn).data().toString(),
               QString::fromStdString(r.name));
      QCOMPARE(model->index(row, CompareModel::StatusColumn).data().toString(),
               CompareModel::statusText(r));
      QCOMPARE(model->index(row, 0).data(CompareModel::FirstDivergentRole).toBool(), &r == first);
      QCOMPARE(model->index(row, 0).data(Qt::BackgroundRole).isValid(), &r == first);
      QVERIFY(!model->index(row, CompareModel::KernelColumn).data().toString().isEmpty());
    }
    panel.setSession(nullptr);  // detached while a compare runs
    QCOMPARE(model->rowCount(), 0);
  }

  void pickingARowNamesItsTensor() {
    compareWith(Tolerance{});
    ComparePanel panel;
    panel.setSession(&session_);
    QVERIFY(panel.compareModel()->rowCount() > 0);
    QSignalSpy picked(&panel, &ComparePanel::tensorPicked);
    const int last = panel.compareModel()->rowCount() - 1;
    panel.table()->selectRow(last);
    QCOMPARE(picked.count(), 1);
    QCOMPARE(picked.first().first().toString(),
             QString::fromStdString(session_.lastReport()->rows[size_t(last)].name));
  }

  // After "Check kernels alone" every row has its kernel's isolated max abs,
  // and the summary gains the isolated line; the button asks the window.
  void isolatedCheckFillsTheAloneColumn() {
    compareWith(Tolerance{});
    ComparePanel panel;
    panel.setSession(&session_);
    QVERIFY(panel.isolatedButton()->isEnabled());
    QSignalSpy asked(&panel, &ComparePanel::isolatedRequested);
    panel.isolatedButton()->click();
    QCOMPARE(asked.count(), 1);
    CompareModel* model = panel.compareModel();
    QVERIFY(!model->index(1, CompareModel::AloneColumn).data().isValid());  // not run yet
    auto iso = session_.compareIsolated(*session_.randomInputs(0), Tolerance{});
    QVERIFY2(iso.isOk(), iso.isOk() ? "" : iso.message().c_str());
    panel.setSession(&session_);
    QVERIFY(panel.summary().contains("PASS: every kernel within tolerance when fed eager inputs"));
    int filled = 0;
    for (int row = 0; row < model->rowCount(); ++row)
      if (model->index(row, CompareModel::AloneColumn).data().isValid()) ++filled;
    QCOMPARE(filled, 3);  // every kernel output; the graph input has no kernel
  }
};

QTEST_MAIN(ComparePanelTest)
#include "compare_panel_test.moc"
