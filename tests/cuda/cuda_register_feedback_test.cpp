// ptxas feedback to fusion (codegen/cuda/cuda_register_feedback.h,
// session/cuda_feedback.h): the register budget of a launch, the pipeline
// edit that adds fuse-ops{split=...}, the rule cuda-spills that split makes
// fuse-ops record (and `explain` show), and the export loop end to end: with
// a forced tiny register budget every fused group "spills", the pipeline runs
// again with the groups split, the bundle ends with more kernels, and
// `explain` with the final pipeline names the rule.
#include "codegen/cuda/cuda_register_feedback.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include "codegen/cuda/nvrtc.h"
#include "codegen/cuda/ptxas.h"
#include "session/cuda_feedback.h"
#include "tests/support/cli_runner.h"

using fuselens::test::runCli;

namespace {

int kernelsIn(const QString& dir) {
  QFile f(QDir(dir).filePath("manifest.json"));
  if (!f.open(QIODevice::ReadOnly)) return -1;
  return int(QJsonDocument::fromJson(f.readAll()).object()["groups"].toArray().size());
}

}  // namespace

class CudaRegisterFeedbackTest : public QObject {
  Q_OBJECT
 private slots:
  void budgetFollowsTheLaunch_data() {
    QTest::addColumn<int>("block");
    QTest::addColumn<int>("given");
    QTest::addColumn<int>("budget");
    QTest::newRow("1024 threads: 64") << 1024 << 0 << 64;
    QTest::newRow("512 threads: 128") << 512 << 0 << 128;
    QTest::newRow("256 threads: the 255 cap") << 256 << 0 << 255;
    QTest::newRow("one thread: the 255 cap") << 1 << 0 << 255;
    QTest::newRow("forced") << 256 << 8 << 8;
  }
  void budgetFollowsTheLaunch() {
    QFETCH(int, block);
    QFETCH(int, given);
    QFETCH(int, budget);
    QCOMPARE(fuselens::cudaRegisterBudget(block, given), int64_t(budget));
  }

  void splitJoinsFuseOps() {
    auto a = fuselens::withFuseOpsSplit("dce,fuse-ops{max-ops=12}", {"relu_b", "add_a"});
    QVERIFY2(a, a.message().c_str());
    QCOMPARE(QString::fromStdString(*a), QString("dce,fuse-ops{max-ops=12,split=add_a;relu_b}"));
    auto b = fuselens::withFuseOpsSplit(*a, {"mul_c", "add_a"});
    QVERIFY2(b, b.message().c_str());
    QVERIFY(QString::fromStdString(*b).contains("split=add_a;mul_c;relu_b"));
    // Nothing new to split: another round would make the same kernels.
    auto same = fuselens::withFuseOpsSplit(*b, {"add_a"});
    QVERIFY(!same);
    QVERIFY(same.message().find("split already") != std::string::npos);
    auto none = fuselens::withFuseOpsSplit("const-fold,dce", {"x"});
    QVERIFY(!none);
    QVERIFY(none.message().find("no fuse-ops") != std::string::npos);
  }

  // fuse-ops{split=NAME} rejects the edges into NAME with rule cuda-spills and
  // a hint, and explain shows both.
  void splitRejectsWithTheRule() {
    auto fused =
        runCli({"explain", "samples/fusion_limits.onnx", "--passes", "fuse-ops", "--json"});
    QVERIFY2(fused.code == 0, qPrintable(fused.err));
    // An accepted edge: split its consumer.
    QString consumer;
    const QJsonObject report = QJsonDocument::fromJson(fused.out.toUtf8()).object();
    for (const auto& d : report["decisions"].toArray())
      if (d.toObject()["accepted"].toBool()) {
        consumer = d.toObject()["consumer"].toString();
        break;
      }
    QVERIFY2(!consumer.isEmpty(), qPrintable(fused.out.left(2000)));
    auto split = runCli({"explain", "samples/fusion_limits.onnx", "--passes",
                         "fuse-ops{split=" + consumer + "}", "--node", consumer});
    QVERIFY2(split.code == 0, qPrintable(split.err));
    QVERIFY2(split.out.contains("cuda-spills"), qPrintable(split.out));
    QVERIFY2(split.out.contains("--cuda-register-feedback"), qPrintable(split.out));
  }

  // With a 16-register budget every fused kernel is "over budget": the export
  // splits groups for up to 3 rounds, and the bundle has more kernels.
  void exportSplitsSpillingGroups() {
    std::string why;
    if (!fuselens::nvrtcAvailable(&why) || fuselens::findPtxas(&why).empty())
      QSKIP(qPrintable("no NVRTC or ptxas: " + QString::fromStdString(why)));
    QTemporaryDir plain, fed;
    auto a = runCli({"export", "samples/fusion_limits.onnx", "--target", "cuda", "--out",
                     plain.path(), "--ptxas", "sm_80", "--cuda-register-budget", "16"});
    QVERIFY2(a.code == 0, qPrintable(a.err));
    QVERIFY2(a.err.contains("ptxas: "), qPrintable(a.err));  // named, not split
    auto b =
        runCli({"export", "samples/fusion_limits.onnx", "--target", "cuda", "--out", fed.path(),
                "--ptxas", "sm_80", "--cuda-register-budget", "16", "--cuda-register-feedback"});
    QVERIFY2(b.code == 0, qPrintable(b.err));
    QVERIFY2(b.err.contains("ptxas feedback, round 1"), qPrintable(b.err));
    const int before = kernelsIn(plain.path()), after = kernelsIn(fed.path());
    qInfo("kernels: %d without feedback, %d with", before, after);
    QVERIFY2(after > before, qPrintable(b.err));
    const auto m = QRegularExpression("--passes '([^']*)'").match(b.err);
    QVERIFY2(m.hasMatch(), qPrintable(b.err));
    QVERIFY(m.captured(1).contains("split="));
    auto explain = runCli({"explain", "samples/fusion_limits.onnx", "--passes", m.captured(1)});
    QVERIFY2(explain.code == 0, qPrintable(explain.err));
    QVERIFY2(explain.out.contains("cuda-spills"), qPrintable(explain.out.left(3000)));
  }
};

QTEST_GUILESS_MAIN(CudaRegisterFeedbackTest)
#include "cuda_register_feedback_test.moc"
