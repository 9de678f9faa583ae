// The CUDA bundle of `export --target cuda` (codegen/cuda/cuda_bundle.h)
// builds with nvcc alone, for samples/mlp.onnx and a convolution fixture:
// build.sh compiles the launcher with the kernels into lib<name>.so for sm_80
// and sm_90 and links the runner against it. The runner's `verify` then runs
// on a GPU and must pass; without one it must say so in one sentence and exit 2.
// manifest.json must map every group to its kernels, launches and origins.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "codegen/cuda/toolkit.h"
#include "tests/support/cli_runner.h"

using fuselens::test::runCli;

class CudaBundleTest : public QObject {
  Q_OBJECT
 private slots:
  void buildsWithNvccAlone_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("name");
    QTest::addColumn<QStringList>("args");
    QTest::newRow("mlp") << "samples/mlp.onnx"
                         << "mlp" << QStringList();
    QTest::newRow("conv_basic") << "tests/fixtures/conv_basic/model.onnx"
                                << "conv" << QStringList();
    // A 3-D launch (batch on blockIdx.z: FL_LAUNCH3), a reduction split
    // across blocks, and f16 storage (cvt instructions on the device).
    QTest::newRow("batched_tiles_3d_grid")
        << "tests/fixtures/cuda_tile_batched_z_5x2x66x40x70/model.onnx"
        << "bmm" << QStringList();
    QTest::newRow("split_softmax") << "tests/fixtures/cuda_split_softmax_2x20000/model.onnx"
                                   << "softmax" << QStringList();
    QTest::newRow("mlp_f16") << "samples/mlp.onnx"
                             << "mlp16" << QStringList{"--precision", "f16"};
    // Gemm groups offloaded to cuBLASLt: lib<name>.so links libcublasLt.
    QTest::newRow("mlp_cublaslt") << "samples/mlp.onnx"
                                  << "mlp" << QStringList{"--cuda-library", "cublaslt"};
  }

  void buildsWithNvccAlone() {
    QFETCH(QString, model);
    QFETCH(QString, name);
    QFETCH(QStringList, args);
    QTemporaryDir dir;
    auto r = runCli(QStringList{"export", model, "--target", "cuda", "--out", dir.path(), "--name",
                                name, "--ptxas", "none"} +
                    args);
    QVERIFY2(r.code == 0, qPrintable(r.err));

    QFile mf(dir.filePath("manifest.json"));
    QVERIFY(mf.open(QIODevice::ReadOnly));
    const QJsonObject m = QJsonDocument::fromJson(mf.readAll()).object();
    QCOMPARE(m["format"].toString(), QString("fuselens-cuda-bundle-1"));
    const QJsonArray groups = m["groups"].toArray();
    QVERIFY(!groups.isEmpty());
    for (const auto& g : groups) {
      const QJsonObject go = g.toObject();
      QVERIFY(!go["origins"].toArray().isEmpty());
      for (const auto& k : go["kernels"].toArray())
        for (const auto& l : k.toObject()["launches"].toArray()) {
          QVERIFY(l.toObject()["grid"].toInt() >= 1);
          QVERIFY(l.toObject()["block"].toInt() >= 1);
        }
    }
    QVERIFY(QFile::exists(dir.filePath("inputs/0.npy")));
    QVERIFY(QFile::exists(dir.filePath("reference/0.exact.npy")));
    QVERIFY(QFile::exists(dir.filePath("CMakeLists.txt")));
    buildAndVerify(dir.path(), name);
  }

  // A graph with If or Loop (codegen/cuda/cuda_program.h): the launcher's host
  // code reads conditions and trip counts back and calls one function per
  // body; it builds with nvcc alone the same way, and the manifest lists the
  // programs with their steps.
  void controlFlowBuildsWithNvccAlone_data() {
    QTest::addColumn<QString>("model");
    QTest::newRow("cf_if_nested") << "tests/fixtures/cf_if_nested/model.onnx";
    QTest::newRow("cf_loop") << "tests/fixtures/cf_loop/model.onnx";
    QTest::newRow("cf_scan") << "tests/fixtures/cf_scan/model.onnx";
  }

  void controlFlowBuildsWithNvccAlone() {
    QFETCH(QString, model);
    QTemporaryDir dir;
    auto r = runCli({"export", model, "--target", "cuda", "--out", dir.path(), "--ptxas", "none"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QFile mf(dir.filePath("manifest.json"));
    QVERIFY(mf.open(QIODevice::ReadOnly));
    const QJsonObject m = QJsonDocument::fromJson(mf.readAll()).object();
    QCOMPARE(m["format"].toString(), QString("fuselens-cuda-program-1"));
    int hostSteps = 0;
    for (const auto& p : m["programs"].toArray())
      for (const auto& s : p.toObject()["steps"].toArray())
        hostSteps += s.toObject()["kind"].toString() != "kernels";
    QVERIFY(hostSteps >= 1);
    QFile h(dir.filePath("model_launcher.h"));
    QVERIFY(h.open(QIODevice::ReadOnly));
    QVERIFY(h.readAll().contains("model_output_shape"));
    buildAndVerify(dir.path(), "model");
  }

 private:
  // build.sh with nvcc, then the runner's verify: PASS on a GPU, one sentence
  // and exit 2 without one.
  void buildAndVerify(const QString& path, const QString& name) {
    QDir dir(path);
    const std::string nvcc = fuselens::findCudaTool("nvcc");
    if (nvcc.empty()) QSKIP("nvcc is not installed: the bundle was written but not built");
    QProcess build;
    build.setWorkingDirectory(dir.path());
    build.setProcessEnvironment(QProcessEnvironment::systemEnvironment());
    auto env = QProcessEnvironment::systemEnvironment();
    env.insert("NVCC", QString::fromStdString(nvcc));
    build.setProcessEnvironment(env);
    build.start("sh", {"build.sh"});
    QVERIFY(build.waitForFinished(300000));
    QVERIFY2(build.exitCode() == 0,
             qPrintable(QString::fromUtf8(build.readAllStandardError()).left(3000)));
    QVERIFY(QFile::exists(dir.filePath("lib" + name + ".so")));
    QVERIFY(QFile::exists(dir.filePath(name + "_runner")));

    QProcess run;
    run.setWorkingDirectory(dir.path());
    run.start(dir.filePath(name + "_runner"), {"verify", dir.path()});
    QVERIFY(run.waitForFinished(120000));
    const QString out = QString::fromUtf8(run.readAllStandardOutput());
    const QString err = QString::fromUtf8(run.readAllStandardError()).trimmed();
    if (run.exitCode() == 2 && err.contains("no CUDA device")) {
      QVERIFY2(!err.contains('\n'), qPrintable(err));
      qInfo("built; verify needs a GPU: %s", qPrintable(err));
      return;
    }
    QVERIFY2(run.exitCode() == 0, qPrintable(out + err));
    QVERIFY2(out.contains("PASS"), qPrintable(out));
  }
};

QTEST_GUILESS_MAIN(CudaBundleTest)
#include "cuda_bundle_test.moc"
