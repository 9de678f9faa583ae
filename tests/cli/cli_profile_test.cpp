// `fuselens-cli profile` on the bundled MLP and a small CNN: the JSON report
// parses, every kernel has a time, a share and a bound, the shares sum to 100%,
// and --trace writes Chrome trace JSON with one complete event per kernel.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "tests/support/cli_runner.h"

namespace {

using Result = fuselens::test::CliResult;

Result cli(const QStringList& args) { return fuselens::test::runCli(args, 300000); }

}  // namespace

class CliProfileTest : public QObject {
  Q_OBJECT
 private slots:
  void jsonAndTrace_data() {
    QTest::addColumn<QString>("model");
    QTest::newRow("mlp") << "samples/mlp.onnx";
    QTest::newRow("small cnn") << "tests/cli/data/small_cnn/model.onnx";
  }
  void jsonAndTrace() {
    QFETCH(QString, model);
    QTemporaryDir dir;
    QString trace = dir.path() + "/trace.json";
    Result r = cli({"profile", model, "--random-inputs", "--runs", "5", "--threads", "1", "--json",
                    "--trace", trace});
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.err.contains("unique"), qPrintable(r.err));  // the compile summary
    QJsonParseError error;
    QJsonObject report = QJsonDocument::fromJson(r.out.toUtf8(), &error).object();
    QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(r.out));
    QCOMPARE(report["runs"].toInt(), 5);
    QCOMPARE(report["threads"].toInt(), 1);
    QVERIFY(report["run_seconds"].toDouble() > 0);
    QVERIFY(report["overhead_seconds"].toDouble() >= 0);
    QVERIFY(report["machine"].toObject()["copy_gbps"].toDouble() > 0);
    QJsonArray kernels = report["kernels"].toArray();
    QVERIFY(!kernels.isEmpty());
    double shares = 0;
    for (const QJsonValue& v : kernels) {
      QJsonObject k = v.toObject();
      QVERIFY(k["seconds"].toDouble() > 0);
      QVERIFY(k["bytes"].toDouble() > 0);
      QString bound = k["bound"].toString();
      QVERIFY2(bound == "compute" || bound == "memory" || bound == "host", qPrintable(bound));
      shares += k["share"].toDouble();
    }
    QVERIFY2(std::fabs(shares - 1.0) < 1e-6, qPrintable(QString::number(shares)));

    QFile f(trace);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QJsonObject doc = QJsonDocument::fromJson(f.readAll(), &error).object();
    QVERIFY(error.error == QJsonParseError::NoError);
    QJsonArray events = doc["traceEvents"].toArray();
    int kernelEvents = 0;
    for (const QJsonValue& v : events) {
      QJsonObject e = v.toObject();
      QVERIFY(e.contains("name") && e.contains("ph") && e.contains("pid") && e.contains("tid"));
      if (e["cat"].toString() != "kernel") continue;
      ++kernelEvents;
      QCOMPARE(e["ph"].toString(), QString("X"));
      QVERIFY(e["ts"].toDouble() >= 0 && e["dur"].toDouble() >= 0);
    }
    QCOMPARE(kernelEvents, int(kernels.size()));
  }

  // A model whose output has a shape known only at run time (an If whose
  // branches differ in shape, then a Relu): profile's runtime keeps such values
  // beside its arena instead of refusing the model.
  void runTimeShapedOutputs() {
    Result r = cli({"profile", "tests/cli/data/if_dynamic/model.onnx", "--random-inputs", "--runs",
                    "3", "--threads", "1", "--json"});
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    QJsonParseError error;
    QJsonObject report = QJsonDocument::fromJson(r.out.toUtf8(), &error).object();
    QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(r.out));
    QVERIFY(report["run_seconds"].toDouble() > 0);
    QCOMPARE(report["kernels"].toArray().size(), 3);  // sum + compare, the If, the Relu
  }

  // The text table names every kernel and the executor overhead.
  void textTable() {
    Result r = cli({"profile", "samples/mlp.onnx", "--random-inputs", "--runs", "3"});
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    QVERIFY2(
        r.out.contains("executor overhead") && r.out.contains("GFLOP/s") && r.out.contains("k0_"),
        qPrintable(r.out));
  }

  void badRunsIsOneSentence() {
    Result r = cli({"profile", "samples/mlp.onnx", "--runs", "0"});
    QCOMPARE(r.code, 2);
  }
};

QTEST_GUILESS_MAIN(CliProfileTest)
#include "cli_profile_test.moc"
