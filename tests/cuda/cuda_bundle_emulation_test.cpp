// The CUDA bundle end to end without a GPU: its launcher and runner, exactly
// as exported, compiled as host C++ against a small emulation of the CUDA
// runtime (device memory is host memory; a launch runs the stage with the
// host emulation prelude of codegen/cuda/cuda_c.h on a few blocks of a few
// threads, enough for grid-stride and block-per-row stages to stride and
// meet). The runner's `verify` must then PASS against the bundle's reference:
// that checks the launch plan (arena offsets, weights, output copies), the
// stages and the runner's verdicts together.
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <fstream>

#include "codegen/cuda/cuda_c.h"
#include "tests/support/cli_runner.h"

using fuselens::test::runCli;

namespace {

const char* kRuntime = R"(// Host emulation of the CUDA runtime calls a FuseLens bundle makes.
#pragma once
#include "fl_emu_prelude.h"
#include <cstdlib>
#include <cstring>
typedef int cudaError_t;
enum { cudaSuccess = 0, cudaErrorNoDevice = 100, cudaErrorInsufficientDriver = 35 };
enum cudaMemcpyKind { cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice };
typedef void* cudaStream_t;
typedef void* cudaEvent_t;
#define cudaStreamNonBlocking 1
inline const char* cudaGetErrorString(cudaError_t) { return "emulated error"; }
inline cudaError_t cudaGetDeviceCount(int* n) { *n = 1; return 0; }
inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned) { *s = (void*)1; return 0; }
inline cudaError_t cudaStreamDestroy(cudaStream_t) { return 0; }
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return 0; }
inline cudaError_t cudaEventCreate(cudaEvent_t* e) { *e = (void*)1; return 0; }
inline cudaError_t cudaEventDestroy(cudaEvent_t) { return 0; }
inline cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t) { return 0; }
inline cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t, cudaEvent_t) { *ms = 0; return 0; }
inline cudaError_t cudaGetLastError() { return 0; }
inline cudaError_t cudaMalloc(void** p, size_t n) { *p = std::calloc(n + 64, 1); return *p ? 0 : 2; }
inline cudaError_t cudaFree(void* p) { std::free(p); return 0; }
inline cudaError_t cudaMemcpy(void* d, const void* s, size_t n, cudaMemcpyKind) { std::memcpy(d, s, n); return 0; }
inline cudaError_t cudaMemcpyAsync(void* d, const void* s, size_t n, cudaMemcpyKind k, cudaStream_t) { return cudaMemcpy(d, s, n, k); }
#define FL_LAUNCH(f, grid, block, s, ...) \
  fl_emu_launch((grid) < 3 ? (grid) : 3, (block) < 5 ? (block) : 5, [&] { f(__VA_ARGS__); })
)";

}  // namespace

class CudaBundleEmulationTest : public QObject {
  Q_OBJECT
 private slots:
  void verifyPassesOnTheHost_data() {
    QTest::addColumn<QString>("model");
    QTest::newRow("mlp") << "samples/mlp.onnx";
    QTest::newRow("matmul_bias_relu") << "samples/matmul_bias_relu.onnx";
    QTest::newRow("conv_basic") << "tests/fixtures/conv_basic/model.onnx";
    QTest::newRow("norm_layer") << "tests/fixtures/norm_layer/model.onnx";
    QTest::newRow("f16_softmax") << "tests/fixtures/f16_softmax/model.onnx";
    QTest::newRow("data_split_equal") << "tests/fixtures/data_split_equal/model.onnx";
  }

  void verifyPassesOnTheHost() {
    QFETCH(QString, model);
    QTemporaryDir dir;
    auto r = runCli({"export", model, "--target", "cuda", "--out", dir.path(), "--ptxas", "none"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QDir(dir.path()).mkdir("emu");
    std::ofstream(dir.filePath("emu/cuda_runtime.h").toStdString()) << kRuntime;
    std::ofstream(dir.filePath("emu/fl_emu_prelude.h").toStdString())
        << "#pragma once\n"
        << fuselens::cudaHostEmulationPrelude();
    QProcess cc;
    cc.setWorkingDirectory(dir.path());
    cc.start("c++", {"-std=c++20", "-O1", "-w", "-pthread", "-Iemu", "-I.", "-x", "c++",
                     "model_launcher.cu", "model_runner.cu", "-o", "emulated_runner", "-lm"});
    QVERIFY(cc.waitForFinished(300000));
    QVERIFY2(cc.exitCode() == 0,
             qPrintable(QString::fromUtf8(cc.readAllStandardError()).left(3000)));
    QProcess run;
    run.setWorkingDirectory(dir.path());
    run.start(dir.filePath("emulated_runner"), {"verify", dir.path()});
    QVERIFY(run.waitForFinished(120000));
    const QString out = QString::fromUtf8(run.readAllStandardOutput());
    QVERIFY2(run.exitCode() == 0, qPrintable(out + run.readAllStandardError()));
    QVERIFY2(out.contains("PASS"), qPrintable(out));
    qInfo("%s", qPrintable(out.trimmed().split('\n').last()));
  }
};

QTEST_GUILESS_MAIN(CudaBundleEmulationTest)
#include "cuda_bundle_emulation_test.moc"
