// `--precision f32|f16|bf16` as a user types it: one option on every command
// that compiles a pipeline, one sentence and exit 2 for another value, the
// precision in compare's header and JSON, the LayerNorm sample's LayerNorm
// named as the first kernel beyond rounding at f16, and --precision f32
// giving the very bytes of no option at all.
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "tests/support/cli_runner.h"

using fuselens::test::runCli;

namespace {
const QString kSample = "samples/precision_layernorm.onnx";

QByteArray readAll(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}
}  // namespace

class CliPrecisionTest : public QObject {
  Q_OBJECT
 private slots:
  void everyCompilingCommandRejectsAnotherValue_data() {
    QTest::addColumn<QStringList>("args");
    QTest::newRow("compile") << QStringList{"compile", kSample};
    QTest::newRow("run") << QStringList{"run", kSample, "--engine", "cpu", "--random-inputs"};
    QTest::newRow("compare") << QStringList{"compare", kSample, "--random-inputs"};
    QTest::newRow("bisect") << QStringList{"bisect", kSample, "--random-inputs"};
    QTest::newRow("export") << QStringList{"export", kSample, "--out", "/tmp/unused-fl-export"};
    QTest::newRow("profile") << QStringList{"profile", kSample, "--random-inputs"};
  }

  void everyCompilingCommandRejectsAnotherValue() {
    QFETCH(QStringList, args);
    auto r = runCli(args + QStringList{"--precision", "f8"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("--precision: 'f8' is not a precision; use f32, f16 or bf16"),
             qPrintable(r.err));
    QCOMPARE(r.err.count('\n'), 1);
  }

  void compareSaysWhichPrecision() {
    auto r = runCli({"compare", kSample, "--random-inputs", "--precision", "f16"});
    QVERIFY2(r.code == 0 || r.code == 1, qPrintable(r.err));
    QVERIFY2(r.out.contains("precision f16: tensors between kernels stored in f16"),
             qPrintable(r.out));
    QVERIFY2(r.out.contains("beyond rounding"), qPrintable(r.out));
    auto j = runCli({"compare", kSample, "--random-inputs", "--precision", "bf16", "--json"});
    QJsonObject o = QJsonDocument::fromJson(j.out.toUtf8()).object();
    QCOMPARE(o["precision"].toString(), QString("bf16"));
    QVERIFY(o["pipeline"].toString().contains("reduce-precision{dtype=bf16}"));
    auto plain = runCli({"compare", "samples/mlp.onnx", "--random-inputs", "--json"});
    QCOMPARE(QJsonDocument::fromJson(plain.out.toUtf8()).object()["precision"].toString(),
             QString("f32"));
  }

  void isolatedNamesTheLayerNorm() {
    auto r = runCli(
        {"compare", kSample, "--isolated", "--random-inputs", "--precision", "f16", "--json"});
    QCOMPARE(r.code, 1);
    QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(o["precision"].toString(), QString("f16"));
    const QString first = o["first_divergent"].toString();
    QVERIFY2(first.contains("layernorm"), qPrintable(first));
    auto table =
        runCli({"compare", kSample, "--isolated", "--random-inputs", "--precision", "f16"});
    QVERIFY2(table.out.contains("FAIL: kernel " + first), qPrintable(table.out));
  }

  void f32IsTheSameAsNoOption() {
    auto a = runCli({"compile", kSample, "--emit", "loops"});
    auto b = runCli({"compile", kSample, "--emit", "loops", "--precision", "f32"});
    QCOMPARE(a.code, 0);
    QCOMPARE(b.code, 0);
    QCOMPARE(a.out, b.out);
    QTemporaryDir d1, d2;
    auto r1 =
        runCli({"run", kSample, "--engine", "cpu", "--random-inputs", "--output-dir", d1.path()});
    auto r2 = runCli({"run", kSample, "--engine", "cpu", "--random-inputs", "--output-dir",
                      d2.path(), "--precision", "f32"});
    QCOMPARE(r1.code, 0);
    QCOMPARE(r2.code, 0);
    const QByteArray y1 = readAll(d1.filePath("y.npy"));
    QVERIFY(!y1.isEmpty());
    QCOMPARE(y1, readAll(d2.filePath("y.npy")));
  }

  // The reduced run stores less: its loop IR reads and writes f16 between kernels.
  void f16ChangesTheKernels() {
    auto r = runCli({"compile", kSample, "--emit", "loops", "--precision", "f16"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("f16"), qPrintable(r.out.left(2000)));
  }
};

QTEST_GUILESS_MAIN(CliPrecisionTest)
#include "cli_precision_test.moc"
