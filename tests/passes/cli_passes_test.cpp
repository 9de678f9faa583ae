// The pass-pipeline views of fuselens-cli as a user runs them: -O levels,
// --disable-pass, --print-ir-before/-after-change, --time-passes, --json,
// --reproduce, and explain giving every kernel boundary a reason.
#include <QtTest>

#include "tests/support/cli_runner.h"

namespace {

using Result = fuselens::test::CliResult;

Result cli(const QStringList& args) { return fuselens::test::runCli(args, 120000); }

const QString kMlp = "samples/mlp.onnx";
const QString kRepro = "tests/passes/reproducers/transpose_chain.fir";

}  // namespace

class CliPassesTest : public QObject {
  Q_OBJECT
 private slots:
  void levelsChooseTheDefaultPipelines() {
    Result o0 = cli({"compile", kMlp, "-O0"});
    QVERIFY2(o0.code == 0, qPrintable(o0.err));
    QVERIFY2(o0.out.contains("after   6 nodes, 0 fused groups"), qPrintable(o0.out));
    Result o1 = cli({"compile", kMlp, "-O1"});
    QVERIFY2(o1.out.contains("simplify") && !o1.out.contains("fuse-ops"), qPrintable(o1.out));
    Result o2 = cli({"compile", kMlp});
    QVERIFY2(o2.out.contains("fuse-ops{max-ops=12}") && o2.out.contains("2 fused groups"),
             qPrintable(o2.out));
    Result bad = cli({"compile", kMlp, "-O2", "--passes", "dce"});
    QCOMPARE(bad.code, 2);
    QVERIFY2(bad.err.contains("not both"), qPrintable(bad.err));
  }

  void disablePassDropsIt() {
    Result r = cli({"compile", kMlp, "--disable-pass", "cse", "--disable-pass", "fuse-ops"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(!r.out.contains("cse") && !r.out.contains("fuse-ops") && r.out.contains("const-fold"),
             qPrintable(r.out));
    Result bad = cli({"compile", kMlp, "--disable-pass", "nope"});
    QVERIFY2(bad.code == 2 && bad.err.contains("no pass named 'nope'"), qPrintable(bad.err));
  }

  void irViews() {
    Result r = cli({"compile", kMlp, "--print-ir-before=fuse-ops", "--print-ir-after-change"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QCOMPARE(r.out.count("// ----- IR before fuse-ops{max-ops=12} -----"), 1);
    // fuse-patterns forms both groups (Gemm+Relu, MatMul+bias), so fuse-ops changes nothing.
    QVERIFY2(r.out.contains("// ----- IR after fuse-patterns -----"), qPrintable(r.out));
    QVERIFY2(!r.out.contains("// ----- IR after fuse-ops{max-ops=8} -----"), qPrintable(r.out));
    QVERIFY2(!r.out.contains("// ----- IR after cse"),
             qPrintable(r.out));  // cse changes nothing here
  }

  void timePassesReportsEveryPass() {
    Result r = cli({"compile", kMlp, "--time-passes"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("Pass execution timing report") && r.out.contains("Total:"),
             qPrintable(r.out));
    QString report = r.out.mid(r.out.indexOf("Total:"));
    for (const char* p : {"const-fold", "cse", "simplify", "dce", "fuse-ops"})
      QVERIFY2(report.contains(p), p);
  }

  void jsonReport() {
    Result r = cli({"compile", kMlp, "--json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(o["passes"].toArray().size(),
             7);  // -O2: four cleanups, layout, fuse-patterns, fuse-ops
    QCOMPARE(o["after"].toObject()["fused_groups"].toInt(), 2);
    QCOMPARE(o["before"].toObject()["kernels"].toInt(), 6);
  }

  void reproduceReplaysAFile() {
    Result r = cli({"compile", "--reproduce", kRepro, "--json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(o["pipeline"].toString(), QString("simplify,dce"));
    QJsonObject simplify = o["passes"].toArray()[0].toObject();
    QCOMPARE(simplify["stats"].toObject()["transpose-transpose"].toInt(), 1);
    QCOMPARE(simplify["stats"].toObject()["mul-one"].toInt(), 1);
    QCOMPARE(o["after"].toObject()["nodes"].toInt(), 1);
    Result missing = cli({"compile", "--reproduce", "no/such.fir"});
    QVERIFY2(missing.code == 2 && missing.err.contains("no/such.fir"), qPrintable(missing.err));
  }

  void explainGivesEveryBoundaryAReason() {
    Result r = cli({"explain", kMlp, "--json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(o["unexplained_boundaries"].toInt(), 0);
    QJsonArray b = o["boundaries"].toArray();
    QCOMPARE(b.size(), 2);
    for (const auto& e : b) QVERIFY(e.toObject()["reason"].toString().startsWith("rejected: "));
    Result g = cli({"explain", kMlp, "--group", "1"});
    QVERIFY2(g.code == 0 && g.out.contains("2 kernel boundaries"), qPrintable(g.out + g.err));
    Result none = cli({"explain", kMlp, "--group", "9"});
    QVERIFY2(none.code == 2 && none.err.contains("no fused group 9"), qPrintable(none.err));
  }
};

QTEST_APPLESS_MAIN(CliPassesTest)
#include "cli_passes_test.moc"
