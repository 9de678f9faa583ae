// `fuselens-cli bisect`: exit 0 with nothing to bisect, exit 1 with the
// planted fault's group named in text and JSON, the pass table by passes, and
// one sentence with exit 2 for an output the model does not have.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "tests/support/cli_runner.h"

using namespace fuselens;

class CliBisectTest : public QObject {
  Q_OBJECT

 private slots:
  void findsThePlantedGroup() {
    auto clean = test::runCli({"bisect", "samples/mlp.onnx", "--random-inputs"});
    QCOMPARE(clean.code, 0);
    QVERIFY(clean.out.contains("PASS: every graph output within rounding"));

    auto r = test::runCli(
        {"bisect", "samples/mlp.onnx", "--random-inputs", "--perturb", "k1=1e-2", "--json"});
    QCOMPARE(r.code, 1);
    QJsonParseError err;
    QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8(), &err).object();
    QCOMPARE(err.error, QJsonParseError::NoError);
    QCOMPARE(j["outcome"].toString(), QString("found"));
    QCOMPARE(j["kernels"].toArray().size(), 1);
    QVERIFY(j["kernels"].toArray()[0].toString().startsWith("k1_"));
    QCOMPARE(j["compiles"].toInt(), j["trials"].toArray().size());

    auto passes = test::runCli({"bisect", "samples/mlp.onnx", "--random-inputs", "--perturb",
                                "k1=1e-2", "--by", "passes", "--output", "y"});
    QCOMPARE(passes.code, 1);
    QVERIFY(passes.out.contains("imported graph"));
    QVERIFY2(passes.out.contains("FOUND: y leaves rounding after pass"), qPrintable(passes.out));

    auto bad = test::runCli({"bisect", "samples/mlp.onnx", "--random-inputs", "--output", "nope"});
    QCOMPARE(bad.code, 2);
    QVERIFY(bad.err.contains("is not a graph output; the outputs are y"));
  }
};

QTEST_GUILESS_MAIN(CliBisectTest)
#include "cli_bisect_test.moc"
