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

  // Moved lines are marked in the unified text, counted in the JSON, and the
  // side-by-side view puts a moved node's new place beside the old one.
  void movedAndSideBySide() {
    auto j = test::runCli({"diff", "samples/bert_layer.onnx", "--pass", "fuse-ops", "--json"});
    QCOMPARE(j.code, 0);
    const QJsonObject ir = QJsonDocument::fromJson(j.out.toUtf8()).object()["ir"].toObject();
    const int moved = ir["moved_lines"].toInt();
    QVERIFY(moved > 0);
    QCOMPARE(int(ir["diff"].toString().count("\n> ")), moved);
    auto side = test::runCli({"diff", "samples/bert_layer.onnx", "--pass", "fuse-ops",
                              "--side-by-side", "--width", "40"});
    QCOMPARE(side.code, 0);
    QVERIFY(side.out.contains("IR diff (A | B):"));
    // The marker column follows a 6-character line number and a 40-character
    // column: one "m>" (moved here) or "m" (moved on one row) per moved pair.
    int movedRows = 0;
    for (const QString& line : side.out.split('\n'))
      movedRows += line.size() > 49 && (line.mid(47, 3) == "m> " || line.mid(47, 3) == "m  ");
    QCOMPARE(movedRows, moved);
    auto narrow = test::runCli({"diff", "samples/mlp.onnx", "--side-by-side", "--width", "3"});
    QCOMPARE(narrow.code, 2);
  }
};

QTEST_GUILESS_MAIN(CliDiffTest)
#include "cli_diff_test.moc"
