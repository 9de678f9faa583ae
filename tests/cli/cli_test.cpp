// fuselens-cli as a user runs it: every subcommand has --help; compare on the
// MatMul+bias+ReLU sample reports one fused group within tolerance; explain on
// the MLP lists accepted and rejected fusions with reasons; bad input gives
// one sentence and a non-zero exit; run writes .npy outputs.
#include <QtTest>

#include "core/io/npy.h"
#include "tests/support/cli_runner.h"

namespace {

using Result = fuselens::test::CliResult;

Result cli(const QStringList& args) { return fuselens::test::runCli(args, 300000); }

const QString kSample = "samples/matmul_bias_relu.onnx";
const QString kMlp = "samples/mlp.onnx";

}  // namespace

class CliTest : public QObject {
  Q_OBJECT
 private slots:
  void helpOnEverySubcommand_data() {
    QTest::addColumn<QString>("sub");
    for (const char* s : {"inspect", "compile", "run", "compare", "explain"}) QTest::newRow(s) << s;
  }
  void helpOnEverySubcommand() {
    QFETCH(QString, sub);
    Result r = cli({sub, "--help"});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.out.contains("Usage") || r.out.contains("usage"), qPrintable(r.out));
  }

  void compareSampleOneGroupWithinTolerance() {
    Result r = cli({"compare", kSample, "--random-inputs", "--seed", "3"});
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.out.contains("1 fused group,"), qPrintable(r.out));
    QVERIFY2(r.out.contains("PASS:"), qPrintable(r.out));
  }

  void compareJsonReport() {
    Result r = cli({"compare", kMlp, "--json"});
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QVERIFY(o["all_within_tolerance"].toBool());
    QVERIFY(o["tensors"].toArray().size() >= 2);
    QVERIFY(o["fused_groups"].toInt() >= 2);
  }

  // The default: rounding verdicts, the expected error and verdict on every row.
  void compareJsonCarriesExpectedErrors() {
    Result r = cli({"compare", kMlp, "--json"});
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(o["options"].toObject()["check"].toString(), QString("rounding"));
    QVERIFY(o["verdict"].toString().contains("within rounding"));
    for (const auto& t : o["tensors"].toArray()) {
      QVERIFY(t.toObject()["expected_error"].toDouble() > 0);
      QCOMPARE(t.toObject()["verdict"].toString(), QString("within rounding"));
    }
  }

  void checkStatIsChecked() {
    Result ok = cli({"compare", kMlp, "--check-stat", "quantile:0.9"});
    QVERIFY2(ok.code == 0, qPrintable(ok.out + ok.err));
    QVERIFY2(ok.out.contains("PASS: 4 tensors within rounding (quantile:0.9 error"),
             qPrintable(ok.out));
    Result bad = cli({"compare", kMlp, "--check-stat", "mode"});
    QVERIFY(bad.code != 0);
    QVERIFY2(bad.err.contains("max, mean, median, quantile:Q"), qPrintable(bad.err));
  }

  void compareOutOfToleranceExitsNonZero() {
    // A tolerance no float computation meets: the exit code must say so.
    Result r = cli({"compare", kMlp, "--atol", "0", "--rtol", "0"});
    if (r.out.contains("PASS:")) QSKIP("compiled and eager agree bit for bit on this machine");
    QCOMPARE(r.code, 1);
    QVERIFY2(r.out.contains("first tensor out of tolerance"), qPrintable(r.out));
  }

  void explainMlpListsAcceptedAndRejected() {
    Result r = cli({"explain", kMlp});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("FUSED") && r.out.contains("SPLIT"), qPrintable(r.out));
    QVERIFY2(r.out.contains("rejected: "), qPrintable(r.out));
    QVERIFY2(r.out.contains("accepted: "), qPrintable(r.out));
    Result j = cli({"explain", kMlp, "--json"});
    QJsonArray ds = QJsonDocument::fromJson(j.out.toUtf8()).object()["decisions"].toArray();
    QVERIFY(!ds.isEmpty());
    for (const auto& d : ds) QVERIFY(!d.toObject()["reason"].toString().isEmpty());
    // The text's closing line and the JSON's summary are one sentence.
    const QString summary = QJsonDocument::fromJson(j.out.toUtf8()).object()["summary"].toString();
    QVERIFY2(!summary.isEmpty() && r.out.trimmed().endsWith(summary), qPrintable(summary));
  }

  void explainQueries() {
    Result node = cli({"explain", kMlp, "--node", "no_such_node"});
    QCOMPARE(node.code, 2);
    QVERIFY2(node.err.contains("no node named 'no_such_node'"), qPrintable(node.err));
    Result group = cli({"explain", kMlp, "--group", "999"});
    QCOMPARE(group.code, 2);
    QVERIFY2(group.err.contains("no fused group 999"), qPrintable(group.err));
    Result g0 = cli({"explain", kMlp, "--group", "0", "--json"});
    QVERIFY2(g0.code == 0, qPrintable(g0.err));
    QVERIFY(!QJsonDocument::fromJson(g0.out.toUtf8()).object()["decisions"].toArray().isEmpty());
  }

  void badInputsGiveOneSentence_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("expected");
    QTest::newRow("missing-file") << QStringList{"inspect", "no/such/model.onnx"}
                                  << "no/such/model.onnx";
    QTest::newRow("not-onnx") << QStringList{"inspect", "README.md"} << "README.md";
    QTest::newRow("bad-pipeline") << QStringList{"compile", kSample, "--passes", "dce,bogus"}
                                  << "unknown pass 'bogus'";
    QTest::newRow("unknown-input")
        << QStringList{"run", kSample, "--input", "nope=x.npy"} << "no input named 'nope'";
    QTest::newRow("missing-npy") << QStringList{"run", kSample, "--input", "x=/nonexistent.npy"}
                                 << "nonexistent.npy";
  }
  void badInputsGiveOneSentence() {
    QFETCH(QStringList, args);
    QFETCH(QString, expected);
    Result r = cli(args);
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains(expected), qPrintable(r.err));
    QCOMPARE(r.err.trimmed().count('\n'), 0);  // one line
  }

  void runWritesNpyOutputsForBothEngines() {
    QTemporaryDir dir;
    for (const char* engine : {"eager", "cpu"}) {
      QString out = dir.filePath(engine);
      Result r = cli({"run", kSample, "--engine", engine, "--random-inputs", "--output-dir", out});
      QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    }
    auto a = fuselens::readNpy(dir.filePath("eager/y.npy").toStdString());
    auto b = fuselens::readNpy(dir.filePath("cpu/y.npy").toStdString());
    QVERIFY2(a.isOk(), a.message().c_str());
    QVERIFY2(b.isOk(), b.message().c_str());
    QCOMPARE(a->shape, (std::vector<int64_t>{1, 64}));
    for (int64_t i = 0; i < a->numel(); ++i) QVERIFY(std::abs(a->at(i) - b->at(i)) < 1e-4);
  }

  void compareBindsSymbolicDims() {
    const QString model = "tests/fixtures/dyn_batch/model.onnx";
    Result unbound = cli({"compare", model});
    QCOMPARE(unbound.code, 2);
    QVERIFY2(unbound.err.contains("--dim batch=N"), qPrintable(unbound.err));
    Result bound = cli({"compare", model, "--dim", "batch=5"});
    QVERIFY2(bound.code == 0, qPrintable(bound.out + bound.err));
    QVERIFY(bound.out.contains("PASS:"));
    Result wrong = cli({"compare", model, "--dim", "seq=5"});
    QCOMPARE(wrong.code, 2);
    QVERIFY2(wrong.err.contains("no symbolic dim named 'seq' (it has: batch)"),
             qPrintable(wrong.err));
  }

  void compileEmitsEveryForm() {
    for (const char* form : {"ir", "loops", "llvm", "asm"}) {
      Result r = cli({"compile", kSample, "--emit", form});
      QVERIFY2(r.code == 0, qPrintable(r.err));
      QVERIFY2(!r.out.isEmpty(), form);
    }
    Result assembly = cli({"compile", kSample, "--emit", "asm"});
    QVERIFY2(assembly.out.contains(".text") && assembly.out.contains("k0_"),
             qPrintable(assembly.out.left(400)));
    Result all = cli({"compile", kMlp, "--print-ir-after-all"});
    QVERIFY(all.out.contains("IR after import"));
    QVERIFY(all.out.contains("IR after fuse-ops"));
  }
};

QTEST_APPLESS_MAIN(CliTest)
#include "cli_test.moc"
