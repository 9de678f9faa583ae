// `fuselens-cli diff` prints the counts the pass diff computes
// (tests/session/pass_diff_test.cpp), its JSON parses, and an unknown
// snapshot is one sentence with exit 2.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "tests/support/cli_runner.h"

using namespace fuselens;

class CliDiffTest : public QObject {
  Q_OBJECT

 private slots:
  void cliPrintsTheSameCounts() {
    auto r =
        test::runCli({"diff", "samples/resnet_bottleneck.onnx", "--pass", "simplify", "--json"});
    QCOMPARE(r.code, 0);
    QJsonParseError err;
    QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8(), &err).object();
    QCOMPARE(err.error, QJsonParseError::NoError);
    QCOMPARE(j["removed"].toArray().size(), 3);
    QCOMPARE(j["to"].toString(), QString("simplify"));
    auto list = test::runCli({"diff", "samples/resnet_bottleneck.onnx"});
    QCOMPARE(list.code, 0);
    QVERIFY(list.out.contains("cse -> simplify: 0 nodes added, 3 removed, 3 changed"));
    auto bad = test::runCli({"diff", "samples/mlp.onnx", "--pass", "nope"});
    QCOMPARE(bad.code, 2);
    QVERIFY(bad.err.contains("no snapshot 'nope'"));
  }
};

QTEST_GUILESS_MAIN(CliDiffTest)
#include "cli_diff_test.moc"
