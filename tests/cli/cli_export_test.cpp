// `fuselens-cli export --cpu`: a model with i64 inputs exported for x86-64-v2
// records the level and the dtypes in its manifest; an unknown CPU name is one
// sentence listing the valid ones, exit status 2, before the model is read.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "tests/support/cli_runner.h"

namespace {

using Result = fuselens::test::CliResult;

Result cli(const QStringList& args) { return fuselens::test::runCli(args, 120000); }

const QString kModel = "tests/fixtures/reduce_sum_i64_big/model.onnx";

QJsonObject manifest(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return QJsonDocument::fromJson(f.readAll()).object();
}

}  // namespace

class CliExportTest : public QObject {
  Q_OBJECT
 private slots:
  void levelIsRecorded() {
    QTemporaryDir out;
    Result r = cli({"export", kModel, "--out", out.path(), "--cpu", "x86-64-v2", "--no-link"});
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.out.contains("model.o"), qPrintable(r.out));
    QJsonObject m = manifest(out.filePath("model.json"));
    QCOMPARE(m["target"].toObject()["name"].toString(), QString("x86-64-v2"));
    QCOMPARE(m["target"].toObject()["vector_bits"].toInt(), 128);
    QCOMPARE(m["inputs"].toArray()[0].toObject()["dtype"].toString(), QString("i64"));
    QCOMPARE(m["outputs"].toArray()[0].toObject()["dtype_code"].toInt(), 7);
  }

  void defaultIsNative() {
    QTemporaryDir out;
    Result r = cli({"export", kModel, "--out", out.path(), "--no-link"});
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    QCOMPARE(manifest(out.filePath("model.json"))["target"].toObject()["name"].toString(),
             QString("native"));
  }

  void unknownCpuIsOneSentence() {
    QTemporaryDir out;
    Result r = cli({"export", kModel, "--out", out.path(), "--cpu", "skylake-ish"});
    QCOMPARE(r.code, 2);
    QCOMPARE(r.err, QString("fuselens-cli: unknown CPU target 'skylake-ish'; valid targets are "
                            "native, x86-64, x86-64-v2, x86-64-v3, x86-64-v4\n"));
    QVERIFY(!QFile::exists(out.filePath("model.h")));
  }
};

QTEST_GUILESS_MAIN(CliExportTest)
#include "cli_export_test.moc"
