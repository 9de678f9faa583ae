// `fuselens-cli compare --isolated` as a user runs it: a table with one row per
// kernel output and a verdict, JSON with the same rows and a `kernels` list,
// exit 0 when every kernel is within rounding and 1 when tolerances are
// impossible to meet; a convolution blocked to NCHW8c by the default pipeline
// is checked like any other kernel, never skipped for its layout.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "tests/support/cli_runner.h"

using fuselens::test::runCli;

namespace {
const QString kTwoConvs = "tests/cli/data/two_convs/model.onnx";
const QString kTwoConvsInput = "x=tests/cli/data/two_convs/input_x.npy";
}  // namespace

class CliIsolatedTest : public QObject {
  Q_OBJECT
 private slots:
  void tableNamesEveryKernel() {
    auto r =
        runCli({"compare", "samples/mlp.onnx", "--isolated", "--random-inputs", "--seed", "2"});
    QVERIFY2(r.code == 0, qPrintable(r.err + r.out));
    QVERIFY2(r.out.contains("PASS: every kernel within rounding when fed eager inputs"),
             qPrintable(r.out));
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
      QVERIFY(row.toObject()["own"].toObject()["expected_error"].toDouble() > 0);
      QCOMPARE(row.toObject()["carried"].toObject()["verdict"].toString(),
               QString("within rounding"));
    }
    QJsonArray kernels = o["kernels"].toArray();
    QCOMPARE(kernels.size(), 3);
    for (const auto& k : kernels) {
      QVERIFY(!k.toObject()["id"].toString().isEmpty());
      QVERIFY(!k.toObject()["members"].toArray().isEmpty());
      QCOMPARE(k.toObject()["verdict"].toString(), QString("ok"));
      QJsonObject out = k.toObject()["outputs"].toArray()[0].toObject();
      QVERIFY(out["metrics"].toObject().contains("max_abs"));
      QVERIFY(out["expected_error"].toDouble() > 0);
    }
    QVERIFY(o["first_divergent"].isNull());
  }

  // The default pipeline blocks both convolutions to NCHW8c, so the value
  // between the two kernels is stored blocked: the second kernel is fed the
  // eager tensor stored blocked, and checked, with no row skipped.
  void blockedConvolutionIsNotSkipped() {
    auto r = runCli({"compare", kTwoConvs, "--isolated", "--json", "--input", kTwoConvsInput});
    QVERIFY2(r.code == 0, qPrintable(r.err + r.out));
    QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QJsonArray kernels = o["kernels"].toArray();
    QCOMPARE(kernels.size(), 2);
    QVERIFY2(kernels[1].toObject()["id"].toString().contains("convnchwc"),
             qPrintable(kernels[1].toObject()["id"].toString()));
    for (const auto& row : o["tensors"].toArray())
      QVERIFY2(row.toObject()["verdict"].toString() == "ok",
               qPrintable(row.toObject()["skipped"].toString()));
    QVERIFY(o["first_divergent"].isNull());
  }

  // A known error planted in one kernel (--perturb) is the first divergence
  // end to end and the first kernel beyond rounding alone; the others stay ok.
  void perturbedKernelIsNamed_data() {
    QTest::addColumn<QString>("kernel");
    QTest::addColumn<QString>("tensor");
    QTest::newRow("first convolution") << "k0"
                                       << "r1";
    QTest::newRow("second convolution") << "k1"
                                        << "y";
  }

  void perturbedKernelIsNamed() {
    QFETCH(QString, kernel);
    QFETCH(QString, tensor);
    auto e2e = runCli(
        {"compare", kTwoConvs, "--json", "--input", kTwoConvsInput, "--perturb", kernel + "=1e-3"});
    QCOMPARE(e2e.code, 1);
    QJsonObject o = QJsonDocument::fromJson(e2e.out.toUtf8()).object();
    QCOMPARE(o["first_divergent"].toString(), tensor);
    auto iso = runCli({"compare", kTwoConvs, "--isolated", "--json", "--input", kTwoConvsInput,
                       "--perturb", kernel + "=1e-3"});
    QCOMPARE(iso.code, 1);
    o = QJsonDocument::fromJson(iso.out.toUtf8()).object();
    QVERIFY2(o["first_divergent"].toString().startsWith(kernel + "_"),
             qPrintable(o["first_divergent"].toString()));
    for (const auto& k : o["kernels"].toArray()) {
      const bool planted = k.toObject()["id"].toString().startsWith(kernel + "_");
      QCOMPARE(k.toObject()["verdict"].toString() == "kernel differs", planted);
    }
  }

  void unknownPerturbedKernelIsASentence() {
    auto r = runCli({"compare", kTwoConvs, "--input", kTwoConvsInput, "--perturb", "k9=1e-3"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("'k9'"), qPrintable(r.err));
    r = runCli({"compare", kTwoConvs, "--input", kTwoConvsInput, "--perturb", "k0"});
    QVERIFY(r.code != 0);
    QVERIFY2(r.err.contains("KERNEL=EPS"), qPrintable(r.err));
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
