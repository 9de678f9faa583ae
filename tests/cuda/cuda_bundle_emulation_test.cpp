// The CUDA bundle end to end without a GPU: its launcher and runner, exactly
// as exported, compiled as host C++ against a small emulation of the CUDA
// runtime (device memory is host memory; a launch runs the stage with the
// host emulation prelude of codegen/cuda/cuda_c.h on a few blocks of a few
// threads, enough for grid-stride and block-per-row stages to stride and
// meet). The runner's `verify` must then PASS against the bundle's reference:
// that checks the launch plan (arena offsets, weights, output copies), the
// stages and the runner's verdicts together.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
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
inline cudaError_t cudaMemcpy2DAsync(void* d, size_t dp, const void* s, size_t sp, size_t w, size_t h, cudaMemcpyKind, cudaStream_t) {
  for (size_t r = 0; r < h; ++r) std::memcpy((char*)d + r * dp, (const char*)s + r * sp, w);
  return 0;
}
#ifndef FL_EMU_BLOCK_CAP
#define FL_EMU_BLOCK_CAP 5
#endif
#define FL_LAUNCH(f, grid, block, s, ...) \
  fl_emu_launch((grid) < 3 ? (grid) : 3, (block) < FL_EMU_BLOCK_CAP ? (block) : FL_EMU_BLOCK_CAP, \
                [&] { f(__VA_ARGS__); })
)";

// Builds the exported bundle in `dir` against the emulation, blocks capped at
// `blockCap` threads, and runs its `verify`; the runner's last line, or why not.
QString emulatedVerify(const QString& dir, int blockCap, bool* passed) {
  *passed = false;
  QDir(dir).mkdir("emu");
  std::ofstream(QDir(dir).filePath("emu/cuda_runtime.h").toStdString()) << kRuntime;
  std::ofstream(QDir(dir).filePath("emu/fl_emu_prelude.h").toStdString())
      << "#pragma once\n"
      << fuselens::cudaHostEmulationPrelude();
  QProcess cc;
  cc.setWorkingDirectory(dir);
  cc.start("c++", {"-std=c++20", "-O1", "-w", "-pthread", "-Iemu", "-I.",
                   QString("-DFL_EMU_BLOCK_CAP=%1").arg(blockCap), "-x", "c++", "model_launcher.cu",
                   "model_runner.cu", "-o", "emulated_runner", "-lm"});
  if (!cc.waitForFinished(300000) || cc.exitCode() != 0)
    return "host compile failed: " + QString::fromUtf8(cc.readAllStandardError()).left(3000);
  QProcess run;
  run.setWorkingDirectory(dir);
  run.start(QDir(dir).filePath("emulated_runner"), {"verify", dir});
  if (!run.waitForFinished(300000)) return "verify timed out";
  const QString out = QString::fromUtf8(run.readAllStandardOutput());
  *passed = run.exitCode() == 0 && out.contains("PASS");
  return *passed ? out.trimmed().split('\n').last() : out + run.readAllStandardError();
}

// silero_vad.onnx with its If's sample-rate constant (16000) replaced by the
// sr the export seeds (read from a first export's inputs/2.npy), so the
// bundle's host takes the 16k branch. The new model's path, or empty.
QString sampleRateIsTheSeededSr(const QString& model, const QString& dir) {
  const QString first = QDir(dir).filePath("seeded");
  auto r = runCli({"export", model, "--target", "cuda", "--out", first, "--ptxas", "none",
                   "--shape", "input=1x256", "--shape", "state=2x1x128"});
  if (r.code != 0) return {};
  const QString out = QDir(dir).filePath("silero_vad_sr.onnx");
  QProcess py;
  py.start("python3", {"-c",
                       "import sys, numpy as np, onnx\n"
                       "from onnx import numpy_helper\n"
                       "m = onnx.load(sys.argv[1])\n"
                       "sr = np.load(sys.argv[2]).astype(np.int64)\n"
                       "c = [n for n in m.graph.node if n.name == 'Constant_0'][0]\n"
                       "t = c.attribute[0].t\n"
                       "t.CopyFrom(numpy_helper.from_array(sr.reshape(numpy_helper.to_array(t)"
                       ".shape), t.name))\n"
                       "onnx.save(m, sys.argv[3])\n",
                       model, QDir(first).filePath("inputs/2.npy"), out});
  if (!py.waitForFinished(60000) || py.exitCode() != 0) return {};
  return out;
}

}  // namespace

class CudaBundleEmulationTest : public QObject {
  Q_OBJECT
 private slots:
  // Blocks are capped at 5 threads (stages must stride and meet with any
  // block) or run whole (1024: the launch plan's blocks, as on a GPU).
  void verifyPassesOnTheHost_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("blockCap");
    QTest::newRow("mlp") << "samples/mlp.onnx" << QStringList() << 5;
    QTest::newRow("matmul_bias_relu") << "samples/matmul_bias_relu.onnx" << QStringList() << 5;
    QTest::newRow("conv_basic") << "tests/fixtures/conv_basic/model.onnx" << QStringList() << 5;
    QTest::newRow("norm_layer") << "tests/fixtures/norm_layer/model.onnx" << QStringList() << 5;
    QTest::newRow("f16_softmax") << "tests/fixtures/f16_softmax/model.onnx" << QStringList() << 5;
    QTest::newRow("data_split_equal")
        << "tests/fixtures/data_split_equal/model.onnx" << QStringList() << 5;
    // Tiled MatMul stages (codegen/cuda/cuda_matmul.cpp) at sizes off the tile
    // grid, with their epilogues: batched GELU + residual, Gemm alpha/transB,
    // and a transformer block whose attention MatMuls are batched (seq 17).
    QTest::newRow("tile_gelu_residual_whole_blocks")
        << "tests/fixtures/cuda_tile_batched_gelu_residual_2x3x17x65x66/model.onnx" << QStringList()
        << 1024;
    QTest::newRow("tile_gemm_transB_whole_blocks")
        << "tests/fixtures/cuda_tile_gemm_transB_65x130x17/model.onnx" << QStringList() << 1024;
    QTest::newRow("llama_block_seq17_whole_blocks")
        << "samples/llama_block.onnx" << QStringList{"--dim", "seq=17"} << 1024;
    QTest::newRow("llama_block_seq17")
        << "samples/llama_block.onnx" << QStringList{"--dim", "seq=17"} << 5;
    // If as a host step (codegen/cuda/cuda_program.h): the launcher reads the
    // condition back and runs one branch's kernels.
    QTest::newRow("cf_if_then") << "tests/fixtures/cf_if_then/model.onnx" << QStringList() << 5;
    QTest::newRow("cf_if_else") << "tests/fixtures/cf_if_else/model.onnx" << QStringList() << 5;
    // Nested If whose branches differ in shape ([2,3] or [3]): a graph output
    // whose shape the run decides, read through <name>_output_shape.
    QTest::newRow("cf_if_nested") << "tests/fixtures/cf_if_nested/model.onnx" << QStringList() << 5;
    // Loop: trip count and condition read back by the host, the carried value
    // swapped, the scan output as long as the iterations the condition allowed.
    QTest::newRow("cf_loop") << "tests/fixtures/cf_loop/model.onnx" << QStringList() << 5;
    // if_dynamic: the branches give [1,8] or [3] and a Relu reads it; the Relu
    // moves into both branches, each copy compiled for its branch's shape.
    QTest::newRow("if_dynamic") << "tests/cli/data/if_dynamic/model.onnx" << QStringList() << 5;
    // Scan: each step's slices cut by strided device copies, states swapped.
    QTest::newRow("cf_scan") << "tests/fixtures/cf_scan/model.onnx" << QStringList() << 5;
    QTest::newRow("cf_scan_axes_reverse")
        << "tests/fixtures/cf_scan_axes_reverse/model.onnx" << QStringList() << 5;
    QTest::newRow("cf_scan_untyped_body")
        << "tests/fixtures/cf_scan_untyped_body/model.onnx" << QStringList() << 5;
    QTest::newRow("cf_loop_untyped_body")
        << "tests/fixtures/cf_loop_untyped_body/model.onnx" << QStringList() << 5;
  }

  // What the bundle cannot plan ahead of time is refused in one sentence
  // (exit 2), never a crash: shapes that only data decides.
  void controlFlowRefusals_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("sentence");
    QTest::newRow("cf_loop_cond_stops: no trip count for the scan output")
        << "tests/fixtures/cf_loop_cond_stops/model.onnx"
        << "has no planned size";
    QTest::newRow("cf_scan8: opset-8 Scan") << "tests/fixtures/cf_scan8/model.onnx"
                                            << "opset-8 Scan";
  }

  void controlFlowRefusals() {
    QFETCH(QString, model);
    QFETCH(QString, sentence);
    QTemporaryDir dir;
    auto r = runCli({"export", model, "--target", "cuda", "--out", dir.path(), "--ptxas", "none"});
    QCOMPARE(r.code, 2);
    const QStringList lines = r.err.trimmed().split('\n', Qt::SkipEmptyParts);
    QVERIFY2(lines.size() == 1 && lines[0].contains(sentence), qPrintable(r.err));
  }

  // The silero VAD models: If on the sample rate input (the seeded sr is not
  // 16000, so the 8k branch runs: 256 samples), nested Ifs on shapes that fold
  // once the If before them is specialized, an LSTM in the branches. Skipped
  // when the silero_vad package is not installed.
  void sileroVerifiesOnTheHost_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<int>("samples");
    QTest::newRow("silero_vad_8k") << "silero_vad.onnx" << 256;
    QTest::newRow("silero_vad_op18_ifless_8k") << "silero_vad_op18_ifless.onnx" << 256;
    QTest::newRow("silero_vad_16k_op15") << "silero_vad_16k_op15.onnx" << 512;
    QTest::newRow("silero_vad_half") << "silero_vad_half.onnx" << 512;
    // The 16k branch through the host's decision: the model's sample-rate
    // constant is set to the seeded sr (samples < 0 marks the row).
    QTest::newRow("silero_vad_16k_by_sr") << "silero_vad.onnx" << -512;
  }

  void sileroVerifiesOnTheHost() {
    QFETCH(QString, file);
    QFETCH(int, samples);
    QProcess py;
    // find_spec locates the package without importing it (and torch with it).
    py.start("python3", {"-c",
                         "import importlib.util as u\n"
                         "s = u.find_spec('silero_vad')\n"
                         "print(s.submodule_search_locations[0] if s else '')"});
    const bool found = py.waitForFinished(30000) && py.exitCode() == 0;
    QString model =
        QDir(QString::fromUtf8(py.readAllStandardOutput()).trimmed()).filePath("data/" + file);
    if (!found || !QFile::exists(model)) QSKIP("the silero_vad package is not installed");
    QTemporaryDir dir;
    if (samples < 0) {
      samples = -samples;
      model = sampleRateIsTheSeededSr(model, dir.path());
      QVERIFY2(!model.isEmpty(), "cannot rewrite the model's sample-rate constant");
    }
    auto r = runCli({"export", model, "--target", "cuda", "--out", dir.path(), "--ptxas", "none",
                     "--shape", QString("input=1x%1").arg(samples), "--shape", "state=2x1x128"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    bool passed = false;
    const QString last = emulatedVerify(dir.path(), 5, &passed);
    QVERIFY2(passed, qPrintable(last));
    qInfo("%s", qPrintable(last));
  }

  void verifyPassesOnTheHost() {
    QFETCH(QString, model);
    QFETCH(QStringList, args);
    QFETCH(int, blockCap);
    QTemporaryDir dir;
    auto r = runCli(
        QStringList{"export", model, "--target", "cuda", "--out", dir.path(), "--ptxas", "none"} +
        args);
    QVERIFY2(r.code == 0, qPrintable(r.err));
    bool passed = false;
    const QString last = emulatedVerify(dir.path(), blockCap, &passed);
    QVERIFY2(passed, qPrintable(last));
    qInfo("%s", qPrintable(last));
  }

  // The MLP's Gemm groups run as the shared-memory tiled stage
  // (codegen/cuda/cuda_matmul.cpp): the source has it, ptxas (where
  // installed) gives it shared memory, and the bundle verifies with whole
  // 256-thread blocks, the schedule a GPU runs, not only the capped ones.
  void mlpGemmStageIsTiled() {
    QTemporaryDir dir;
    auto r = runCli({"export", "samples/mlp.onnx", "--target", "cuda", "--out", dir.path()});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QFile cu(dir.filePath("model.cu"));
    QVERIFY(cu.open(QIODevice::ReadOnly));
    const QString source = QString::fromUtf8(cu.readAll());
    QVERIFY(source.contains("// tiled MatMul"));
    QVERIFY(source.contains("__shared__ float fl_As"));
    QFile mf(dir.filePath("manifest.json"));
    QVERIFY(mf.open(QIODevice::ReadOnly));
    const QJsonObject m = QJsonDocument::fromJson(mf.readAll()).object();
    int tiled = 0, measured = 0;
    for (const auto& g : m["groups"].toArray())
      for (const auto& k : g.toObject()["kernels"].toArray()) {
        if (!k.toObject().contains("gemm")) continue;
        for (const auto& l : k.toObject()["launches"].toArray()) {
          const QJsonObject launch = l.toObject();
          const qsizetype at = source.indexOf("void " + launch["function"].toString() + "(");
          if (at < 0 ||
              !source.mid(at, source.indexOf("__global__", at) - at).contains("// tiled MatMul"))
            continue;
          QCOMPARE(launch["block"].toInt(), 256);
          ++tiled;
          for (const auto& sm : launch["ptxas"].toObject()) {
            ++measured;
            QVERIFY(sm.toObject()["shared_bytes"].toInt() > 0);
            QCOMPARE(sm.toObject()["spill_stores"].toInt(), 0);
          }
        }
      }
    QVERIFY2(tiled >= 1, "no Gemm stage of the MLP launches 256-thread tiles");
    qInfo("%d tiled Gemm stages, %d ptxas figures with shared memory", tiled, measured);
    bool passed = false;
    const QString last = emulatedVerify(dir.path(), 1024, &passed);
    QVERIFY2(passed, qPrintable(last));
    qInfo("whole blocks: %s", qPrintable(last));
  }
};

QTEST_GUILESS_MAIN(CudaBundleEmulationTest)
#include "cuda_bundle_emulation_test.moc"
