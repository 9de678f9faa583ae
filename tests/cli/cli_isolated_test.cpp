// `fuselens-cli compare --isolated` as a user runs it: a table with one row per
// kernel output and a verdict, JSON with the same rows, exit 0 when every
// kernel is within tolerance and 1 when tolerances are impossible to meet.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "tests/support/cli_runner.h"

using fuselens::test::runCli;

class CliIsolatedTest : public QObject {
  Q_OBJECT
 private slots:
  void tableNamesEveryKernel() {
    auto r =
        runCli({"compare", "samples/mlp.onnx", "--isolated", "--random-inputs", "--seed", "2"});
    QVERIFY2(r.code == 0, qPrintable(r.err + r.out));
    QVERIFY(r.out.contains("PASS: every kernel within tolerance when fed eager inputs"));
    QCOMPARE(
        r.out.count(QRegularExpression("^k\\d+_\\S+ .* ok$", QRegularExpression::MultilineOption)),
        3);
  }

  void jsonRowsCarryBothFigures() {
    auto r = runCli({"compare", "samples/mlp.onnx", "--isolated", "--json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(o["mode"].toString(), QString("isolated"));
    QJsonArray rows = o["tensors"].toArray();
    QCOMPARE(rows.size(), 3);
    for (const auto& row : rows) {
      QCOMPARE(row.toObject()["verdict"].toString(), QString("ok"));
      QVERIFY(row.toObject()["isolated"].toObject().contains("max_abs"));
      QVERIFY(row.toObject()["end_to_end"].toObject().contains("max_abs"));
    }
  }

  // atol = rtol = 0 on a model whose kernels round differently from eager: some
  // kernel differs alone, so the exit code says a check failed.
  void zeroToleranceFailsWithExitOne() {
    auto r = runCli({"compare", "samples/mlp.onnx", "--isolated", "--atol", "0", "--rtol", "0"});
    if (r.code == 0) QSKIP("every kernel is bit-identical to eager on this machine");
    QCOMPARE(r.code, 1);
    QVERIFY(r.out.contains("FAIL: kernel "));
  }
};

QTEST_GUILESS_MAIN(CliIsolatedTest)
#include "cli_isolated_test.moc"
