// The CUDA outputs from the CLI: `compile --emit cuda|ptx` and
// `export --target cuda` (.cu, .ptx through NVRTC when installed, and the
// launch plan .cuda.json naming every kernel's stages and params).
#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "codegen/cuda/nvrtc.h"
#include "tests/support/cli_runner.h"

using fuselens::test::runCli;

class CliCudaTest : public QObject {
  Q_OBJECT
 private slots:
  void emitCudaPrintsKernels() {
    auto r = runCli({"compile", "samples/mlp.onnx", "--emit", "cuda"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QCOMPARE(r.out.count("extern \"C\" __global__ void k"), 3);  // one stage per kernel here
    QVERIFY(r.out.contains("blockIdx.x"));
  }

  // With a Loop: every segment's kernels (prefixed by program and segment),
  // the host steps being the launcher's.
  void emitCudaWithControlFlow() {
    auto r = runCli({"compile", "tests/fixtures/cf_loop/model.onnx", "--emit", "cuda"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY(r.out.contains("control flow: host steps between kernel segments"));
    QVERIFY(r.out.count("extern \"C\" __global__ void p") >= 3);  // the body's Add, Mul, Less...
  }

  void emitPtxNeedsNvrtc() {
    auto r = runCli({"compile", "samples/mlp.onnx", "--emit", "ptx"});
    if (!fuselens::nvrtcAvailable()) {
      QCOMPARE(r.code, 2);
      QVERIFY(r.err.contains("NVRTC"));
      return;
    }
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY(r.out.contains(".entry"));
  }

  void exportWritesSourcePtxAndLaunchPlan() {
    QTemporaryDir dir;
    auto r = runCli(
        {"export", "samples/mlp.onnx", "--target", "cuda", "--out", dir.path(), "--name", "mlp"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY(QFile::exists(dir.filePath("mlp.cu")));
    QCOMPARE(QFile::exists(dir.filePath("mlp.ptx")), fuselens::nvrtcAvailable());
    QFile f(dir.filePath("mlp.cuda.json"));
    QVERIFY(f.open(QIODevice::ReadOnly));
    QJsonObject plan = QJsonDocument::fromJson(f.readAll()).object();
    QCOMPARE(plan["format"].toString(), QString("fuselens-cuda-1"));
    QJsonArray kernels = plan["kernels"].toArray();
    QCOMPARE(kernels.size(), 3);
    for (const auto& k : kernels) {
      QJsonObject o = k.toObject();
      QVERIFY(!o["stages"].toArray().isEmpty());
      for (const auto& s : o["stages"].toArray()) QVERIFY(s.toObject()["block"].toInt() >= 1);
      QVERIFY(o["params"].toArray().size() >= 2);
    }
  }

  // Without a driver or a device the CUDA engine says so in one sentence
  // before compiling; with one, the run and the compare pass.
  void cudaEngineRunsOrSaysNoDevice_data() {
    QTest::addColumn<QStringList>("args");
    QTest::newRow("run") << QStringList{"run",          "samples/mlp.onnx",
                                        "--engine",     "cuda",
                                        "--output-dir", QDir::tempPath() + "/fl-cuda-run"};
    QTest::newRow("compare") << QStringList{"compare", "samples/mlp.onnx", "--engine", "cuda"};
    // Control flow: the host decides between kernel segments (cuda_program.h).
    QTest::newRow("compare_if_nested")
        << QStringList{"compare", "tests/fixtures/cf_if_nested/model.onnx", "--engine", "cuda"};
    QTest::newRow("compare_loop") << QStringList{"compare", "tests/fixtures/cf_loop/model.onnx",
                                                 "--engine", "cuda"};
  }
  void cudaEngineRunsOrSaysNoDevice() {
    QFETCH(QStringList, args);
    auto r = runCli(args);
    if (r.code == 2) {
      const QString err = r.err.trimmed();
      QVERIFY2(!err.contains('\n'), qPrintable(err));
      QVERIFY2(err.contains("no CUDA driver") || err.contains("no CUDA device"), qPrintable(err));
      QSKIP(qPrintable("no GPU here: " + err));
    }
    QVERIFY2(r.code == 0, qPrintable(r.err));
    if (args[0] == "compare") QVERIFY2(r.out.contains("PASS"), qPrintable(r.out));
  }

  void cudaEngineRefusesIsolated() {
    auto r = runCli({"compare", "samples/mlp.onnx", "--engine", "cuda", "--isolated"});
    QCOMPARE(r.code, 2);
    QVERIFY(r.err.contains("CPU engine only"));
  }

  void stagesNameTheirOrigins() {
    auto r = runCli({"compile", "samples/mlp.onnx", "--emit", "cuda"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QCOMPARE(r.out.count("// from: "), 3);
  }

  void unknownTargetIsOneSentence() {
    QTemporaryDir dir;
    auto r = runCli({"export", "samples/mlp.onnx", "--target", "tpu", "--out", dir.path()});
    QCOMPARE(r.code, 2);
    QVERIFY(r.err.contains("tpu"));
  }
};

QTEST_GUILESS_MAIN(CliCudaTest)
#include "cli_cuda_test.moc"
