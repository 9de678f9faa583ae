// The CUDA C backend without a GPU. For every fixture model whose kernels
// lower, each kernel of the default pipeline is emitted as CUDA C
// (codegen/cuda/cuda_c.h) on its own, fed the eager tensors of its inputs:
//  - all of them are compiled together as host C++ with the emulation prelude
//    (each stage run on a 2 x 3 grid, a block's threads as real threads, so
//    grid-stride loops really stride and one-block-per-row stages really
//    meet at barriers and shuffles) and their outputs compared with the eager
//    reference;
//  - when NVRTC is installed, each fixture's module compiles to PTX with one
//    .entry per stage.
#include "codegen/cuda/cuda_c.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "codegen/cuda/nvrtc.h"
#include "codegen/kernel_plan.h"
#include "codegen/lower/lower.h"
#include "core/io/npy.h"
#include "core/ops/registry.h"
#include "session/session.h"
#include "tests/support/test_paths.h"

using namespace fuselens;
namespace fs = std::filesystem;

namespace {

// One emitted kernel with what it is fed and what it must produce.
struct Case {
  std::string where;  // "fixture / kernel"
  CudaKernel kernel;
  std::vector<TensorData> inputs;    // per input param
  std::vector<TensorData> expected;  // per output param, the eager tensors
  bool vectorTail = false;           // a 128-bit vector stage with a scalar tail
  bool vectorScalar = false;         // a 128-bit vector stage with a scalar-loaded operand
  bool tiledConv = false;            // an implicit-GEMM Conv stage (codegen/cuda/cuda_conv.cpp)
};

// The "// 128-bit vectors: N elements, L a thread, tail T, ..., S scalar
// operands" lines of an emitted kernel (codegen/cuda/cuda_vector.cpp).
void noteVectors(const std::string& text, Case& c) {
  const std::string mark = "// 128-bit vectors: ";
  for (size_t at = text.find(mark); at != std::string::npos; at = text.find(mark, at + 1)) {
    const std::string line = text.substr(at, text.find('\n', at) - at);
    c.vectorTail |= line.find(", tail 0,") == std::string::npos;
    c.vectorScalar |= line.find(", 0 scalar operands") == std::string::npos;
  }
}

bool writeBytes(const std::string& path, const TensorData& t) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(t.bytes.data()), std::streamsize(t.bytes.size()));
  return bool(f);
}

// The host program: runs case i's stages on files i_<param>.bin in argv[1].
std::string harness(const std::vector<Case>& cases) {
  std::ostringstream o;
  o << "#include <cstdio>\n#include <string>\n#include <vector>\n"
       "static std::vector<unsigned char> load(const std::string& p, size_t n) {\n"
       "  std::vector<unsigned char> v(n + 16); FILE* f = fopen(p.c_str(), \"rb\");\n"
       "  if (f) { size_t r = fread(v.data(), 1, n, f); (void)r; fclose(f); } return v; }\n"
       "static void save(const std::string& p, const std::vector<unsigned char>& v, size_t n) {\n"
       "  FILE* f = fopen(p.c_str(), \"wb\"); fwrite(v.data(), 1, n, f); fclose(f); }\n"
       "int main(int, char** argv) {\n  const std::string dir = argv[1];\n";
  for (size_t c = 0; c < cases.size(); ++c) {
    const CudaKernel& k = cases[c].kernel;
    const size_t nIn = cases[c].inputs.size();
    o << "  {\n";
    for (size_t p = 0; p < k.paramTypes.size(); ++p) {
      size_t bytes = size_t(k.paramElements[p]) * dtypeSize(k.paramTypes[p]);
      o << "    auto p" << p << " = load(dir + \"/" << c << "_" << p << ".bin\", "
        << (p < nIn ? bytes : 0) << "); p" << p << ".resize(" << bytes + 16 << ");\n";
    }
    o << "    std::vector<unsigned char> scratch(" << k.scratchBytes + 64 << ");\n";
    for (const CudaStage& s : k.stages) {
      o << "    fl_emu_launch(2, 3, [&] {\n      " << s.name << "(";
      for (size_t p = 0; p < k.paramTypes.size(); ++p)
        o << "(" << cudaTypeName(k.paramTypes[p]) << "*)p" << p << ".data(), ";
      o << "scratch.data());\n    });\n";
    }
    for (size_t p = nIn; p < k.paramTypes.size(); ++p)
      o << "    save(dir + \"/" << c << "_" << p << ".out\", p" << p << ", "
        << size_t(k.paramElements[p]) * dtypeSize(k.paramTypes[p]) << ");\n";
    o << "  }\n";
  }
  o << "  return 0;\n}\n";
  return o.str();
}

Tolerance toleranceFor(DType t) {
  if (t == DType::F16 || t == DType::BF16) return {1e-2, 1e-2};
  return {1e-4, 1e-3};
}

}  // namespace

class CudaCTest : public QObject {
  Q_OBJECT

  std::vector<Case> cases_;
  std::map<std::string, std::string> sources_;  // fixture -> its module's .cu text
  int fixtures_ = 0;
  int emitted_ = 0;  // unique function names across fixtures

 private slots:
  // Emits every kernel of every fixture that lowers for the CPU; none may fail
  // to emit (the CUDA emitter covers all of the loop IR).
  void initTestCase() {
    const fs::path root = fs::path(fuselens::test::sourcePath()) / "tests/fixtures";
    std::vector<fs::path> dirs;
    for (const auto& e : fs::directory_iterator(root))
      if (fs::exists(e.path() / "model.onnx")) dirs.push_back(e.path());
    std::sort(dirs.begin(), dirs.end());
    QStringList failures;
    for (const fs::path& dir : dirs) {
      Session s;
      if (!s.open((dir / "model.onnx").string()) || !s.optimize(defaultPipeline())) continue;
      std::map<std::string, TensorData> inputs;
      for (const auto& e : fs::directory_iterator(dir)) {
        std::string n = e.path().filename().string();
        if (n.rfind("input_", 0) != 0 || e.path().extension() != ".npy") continue;
        auto t = readNpy(e.path().string());
        if (t) inputs[n.substr(6, n.size() - 10)] = std::move(*t);
      }
      auto eager = runEager(s.original(), inputs);
      if (!eager) continue;
      const Graph& g = s.finalGraph();
      CompileOptions cpu;
      cpu.fallback = false;
      cpu.drivers = false;  // as the CUDA emitter: driver kernels are host code
      cpu.tuningLog = "";
      if (!planKernels(g, cpu, {}, {})) continue;  // not lowerable on the CPU either
      ++fixtures_;
      const std::string fixture = dir.filename().string();
      std::string source = cudaPrelude();
      const std::vector<NodeId> order = *g.topoOrder();
      for (NodeId id : order) {
        const Node& n = g.node(id);
        if (isViewOp(n)) continue;
        KernelGraph kg = extractKernelGraph(g, n);
        CompileOptions opts;
        opts.schedule = cudaSchedule();
        opts.tuningLog = "";
        opts.fallback = false;
        opts.drivers =
            false;  // driver kernels (If, Loop, NonZero...) are host code: no CUDA kernel
        auto plan = planKernels(kg.graph, opts, {}, {});
        if (!plan || plan->funcs.size() != 1) continue;  // an alias kernel alone
        LoopFunc f = plan->funcs[0];
        f.name = "f" + std::to_string(emitted_++) + "_" + f.name;
        Case c;
        c.where = fixture + " / " + n.name + " (" + n.op + ")";
        const size_t before = source.size();
        auto k = emitCudaKernel(f, &source);
        noteVectors(source.substr(before), c);
        c.tiledConv = source.find("// tiled Conv", before) != std::string::npos;
        if (!k) {
          failures << QString::fromStdString(c.where + ": " + k.message());
          continue;
        }
        if (!k->prepackedParams.empty()) continue;  // nothing to feed them from here
        c.kernel = *k;
        bool fed = true;
        for (ValueId v : plan->infos[0].inputs) {
          const Value& val = kg.graph.value(v);
          if (val.constant) {
            c.inputs.push_back(*val.constant);
          } else if (const TensorData* t = eager->find(g.value(kg.feeds.at(val.name)).origin)) {
            c.inputs.push_back(*t);
          } else {
            fed = false;
          }
        }
        for (ValueId v : kg.outputs) {
          const TensorData* t = eager->find(g.value(v).origin);
          if (t)
            c.expected.push_back(*t);
          else
            fed = false;
        }
        if (fed && c.inputs.size() + c.expected.size() == c.kernel.paramTypes.size())
          cases_.push_back(std::move(c));
      }
      sources_[fixture] = source;
    }
    QVERIFY2(failures.isEmpty(), qPrintable(failures.join("\n")));
    QVERIFY2(fixtures_ >= 100, qPrintable(QString("only %1 fixtures lower").arg(fixtures_)));
    QVERIFY(cases_.size() >= 150);
  }

  void hostEmulationMatchesEager() {
    QTemporaryDir dir;
    std::string program = cudaHostEmulationPrelude() + cudaPrelude();
    for (const auto& [fixture, source] : sources_) program += source.substr(cudaPrelude().size());
    program += harness(cases_);
    const std::string src = dir.filePath("emulated.cpp").toStdString();
    std::ofstream(src) << program;
    for (size_t c = 0; c < cases_.size(); ++c)
      for (size_t p = 0; p < cases_[c].inputs.size(); ++p)
        QVERIFY(writeBytes(dir.filePath(QString("%1_%2.bin").arg(c).arg(p)).toStdString(),
                           cases_[c].inputs[p]));
    QProcess cc;
    const QString exe = dir.filePath("emulated");
    cc.start("c++", {"-std=c++20", "-O1", "-w", "-pthread", "-o", exe, QString::fromStdString(src),
                     "-lm"});
    QVERIFY(cc.waitForFinished(300000));
    QVERIFY2(cc.exitCode() == 0,
             qPrintable(QString::fromUtf8(cc.readAllStandardError()).left(3000)));
    QProcess run;
    run.start(exe, {dir.path()});
    // Generous: the emulated blocks run real threads, and CI machines may be busy.
    QVERIFY(run.waitForFinished(480000));
    QCOMPARE(run.exitCode(), 0);

    QStringList wrong;
    size_t compared = 0, tails = 0, scalars = 0, convs = 0;
    for (size_t c = 0; c < cases_.size(); ++c) {
      const Case& k = cases_[c];
      for (size_t o = 0; o < k.expected.size(); ++o) {
        const size_t p = k.inputs.size() + o;
        std::ifstream f(dir.filePath(QString("%1_%2.out").arg(c).arg(p)).toStdString(),
                        std::ios::binary);
        TensorData got(k.expected[o].dtype, k.expected[o].shape);
        f.read(reinterpret_cast<char*>(got.bytes.data()), std::streamsize(got.bytes.size()));
        TensorMetrics m = compareTensors(k.expected[o], got, toleranceFor(got.dtype));
        ++compared;
        tails += k.vectorTail && m.withinTolerance();
        scalars += k.vectorScalar && m.withinTolerance();
        convs += k.tiledConv && m.withinTolerance();
        if (!m.withinTolerance())
          wrong << QString::fromStdString(k.where) + QString(": max abs %1, %2 out of tolerance")
                                                         .arg(m.maxAbs)
                                                         .arg(m.outOfTolerance + m.nanMismatch);
      }
    }
    // One-block-per-row stages (codegen/cuda/cuda_rows.cpp) must be among them.
    size_t rowStages = 0;
    for (size_t at = 0; (at = program.find("one block per row", at)) != std::string::npos; ++at)
      ++rowStages;
    // So must shared-memory MatMul stages: 64x64 tiles (codegen/cuda/cuda_matmul.cpp)
    // and, for M <= 16, the small-M stage (cuda_matmul_small.cpp); and long rows
    // split across blocks (cuda_reduce_split.cpp).
    auto count = [&](const std::string& marker) {
      size_t n = 0;
      for (size_t at = 0; (at = program.find(marker, at)) != std::string::npos; ++at) ++n;
      return n;
    };
    const size_t tiledStages = count("// tiled MatMul"), smallStages = count("// small-M MatMul");
    const size_t splitStages = count("// split reduction");
    // And stages with 128-bit accesses (codegen/cuda/cuda_vector.cpp), some with
    // a scalar tail (numel not a multiple of the lanes), some with an operand
    // read lane by lane (a broadcast or a transposed input), matching eager.
    size_t vectorStages = 0;
    for (size_t at = 0; (at = program.find("// 128-bit vectors", at)) != std::string::npos; ++at)
      ++vectorStages;
    qInfo(
        "%zu kernels from %d fixtures, %zu tensors compared, %zu one-block-per-row stages, "
        "%zu tiled and %zu small-M MatMul stages, %zu split-reduction stages, %zu 128-bit "
        "vector stages (matching eager: %zu outputs with a scalar tail, %zu with scalar operands)",
        cases_.size(), fixtures_, compared, rowStages, tiledStages, smallStages, splitStages,
        vectorStages, tails, scalars);
    QVERIFY2(vectorStages >= 50, qPrintable(QString("only %1 vector stages").arg(vectorStages)));
    QVERIFY2(tails >= 5 && scalars >= 5,
             qPrintable(QString("vector stages checked: %1 with a tail, %2 with scalar operands")
                            .arg(tails)
                            .arg(scalars)));
    // Convolutions as implicit GEMMs (codegen/cuda/cuda_conv.cpp): padding,
    // stride, dilation, groups, 1-D and 3-D, K and pixel counts off the tiles.
    const size_t convStages = count("// tiled Conv"), perOutput = count("// conv, one thread");
    qInfo("%zu tiled Conv stages (%zu outputs matching eager), %zu one-thread-per-output convs",
          convStages, convs, perOutput);
    QVERIFY2(convs >= 10, qPrintable(QString("only %1 tiled conv outputs checked").arg(convs)));
    QVERIFY2(perOutput >= 2, qPrintable(QString("only %1 per-output convs").arg(perOutput)));
    QVERIFY2(rowStages >= 20, qPrintable(QString("only %1 block-row stages").arg(rowStages)));
    QVERIFY2(tiledStages >= 4, qPrintable(QString("only %1 tiled stages").arg(tiledStages)));
    QVERIFY2(smallStages >= 15, qPrintable(QString("only %1 small-M stages").arg(smallStages)));
    QVERIFY2(splitStages >= 14, qPrintable(QString("only %1 split stages").arg(splitStages)));
    QVERIFY2(wrong.isEmpty(), qPrintable(wrong.join("\n")));
  }

  // Every Conv fixture's conv group is an implicit-GEMM stage: weight and
  // input-patch tiles in shared memory, the patch gathered with the padding
  // checks; depthwise convs (one channel a group) run one thread per output.
  void convGroupsAreTiledStages_data() {
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<QString>("stage");
    for (const char* f : {"cuda_conv_pad_stride2_bias_relu", "cuda_conv_dilated_bn_hardswish",
                          "cuda_conv_groups_residual", "cuda_conv_pointwise_sigmoid", "conv_basic",
                          "conv_stride_dilation", "conv_1d"})
      QTest::newRow(f) << f << "// tiled Conv";
    for (const char* f : {"cuda_conv_depthwise_s2_relu6", "conv_depthwise"})
      QTest::newRow(f) << f << "// conv, one thread per output";
  }

  void convGroupsAreTiledStages() {
    QFETCH(QString, fixture);
    QFETCH(QString, stage);
    QVERIFY2(sources_.count(fixture.toStdString()), qPrintable(fixture));
    const std::string& text = sources_.at(fixture.toStdString());
    QVERIFY2(text.find(stage.toStdString()) != std::string::npos, text.c_str());
    if (stage.contains("tiled")) {
      QVERIFY(text.find("__shared__ float fl_Ws[") != std::string::npos);
      QVERIFY(text.find("__shared__ float fl_Xs[") != std::string::npos);
      QVERIFY(text.find("// the patch gather") != std::string::npos);
    }
  }

  void nvrtcCompilesEveryModule() {
    std::string why;
    if (!nvrtcAvailable(&why)) QSKIP(why.c_str());
    int checked = 0;
    for (const auto& [fixture, source] : sources_) {
      if (++checked > 25) break;  // NVRTC takes ~0.3 s a module: a sample keeps the suite fast
      auto ptx = compileToPtx(source, "compute_90", fixture + ".cu");
      QVERIFY2(ptx.isOk(), qPrintable(QString::fromStdString(fixture + ": " + ptx.message())));
      QVERIFY(ptx->find(".entry") != std::string::npos);
    }
  }

  // The vector stages check alignment at run time: with every pointer 4 bytes
  // off a 16-byte boundary the stage takes its scalar loop and writes the
  // same values as from aligned pointers.
  void vectorStageFallsBackWhenMisaligned() {
    const fs::path model =
        fs::path(fuselens::test::sourcePath()) / "tests/fixtures/add_bcast_row/model.onnx";
    Session s;
    QVERIFY(s.open(model.string()));
    QVERIFY(s.optimize(defaultPipeline()));
    auto m = emitCudaModule(s.finalGraph());
    QVERIFY2(m, m ? "" : m.message().c_str());
    QCOMPARE(m->kernels.size(), size_t(1));
    QVERIFY(m->source.find("// 128-bit vectors") != std::string::npos);
    const CudaKernel& k = m->kernels[0];
    std::string args;
    int64_t at = 0;
    for (size_t p = 0; p < k.paramTypes.size(); ++p) {
      QCOMPARE(k.paramTypes[p], DType::F32);
      args += "p + " + std::to_string(at) + ", ";
      at += (k.paramElements[p] + 3) / 4 * 4;  // each param 16-byte aligned from p
    }
    const int64_t out = at - (k.paramElements.back() + 3) / 4 * 4;
    const std::string n = std::to_string(k.paramElements.back());
    std::ostringstream o;
    o << cudaHostEmulationPrelude() << m->source << "#include <cstdio>\n"
      << "static float* run(std::vector<float>* mem, size_t shift) {\n"
      << "  float* p = mem->data() + shift;\n"
      << "  for (size_t i = 0; i + shift < mem->size(); ++i) p[i] = 0.25f * float(i % 13) - 1;\n"
      << "  for (long long i = 0; i < " << n << "; ++i) p[" << out << " + i] = 1e30f;\n";
    for (const CudaStage& st : k.stages)
      o << "  fl_emu_launch(2, 3, [&] { " << st.name << "(" << args << "nullptr); });\n";
    o << "  return p + " << out << ";\n}\n"
      << "int main() {\n  std::vector<float> a(" << at + 8 << "), b(" << at + 8 << ");\n"
      << "  const float* x = run(&a, 0); const float* y = run(&b, 1);\n"
      << "  if (((unsigned long long)y & 15) == 0) return 2;\n"
      << "  for (long long i = 0; i < " << n << "; ++i)\n"
      << "    if (x[i] == 1e30f || x[i] != y[i]) {\n"
      << "      std::printf(\"%lld: %g vs %g\\n\", i, x[i], y[i]); return 1; }\n"
      << "  return 0;\n}\n";
    QTemporaryDir dir;
    const QString src = dir.filePath("misaligned.cpp"), exe = dir.filePath("misaligned");
    std::ofstream(src.toStdString()) << o.str();
    QProcess cc;
    cc.start("c++", {"-std=c++20", "-O1", "-w", "-pthread", "-o", exe, src, "-lm"});
    QVERIFY(cc.waitForFinished(120000));
    QVERIFY2(cc.exitCode() == 0,
             qPrintable(QString::fromUtf8(cc.readAllStandardError()).left(3000)));
    QProcess run;
    run.start(exe, {});
    QVERIFY(run.waitForFinished(60000));
    QVERIFY2(run.exitCode() == 0, qPrintable(QString::fromUtf8(run.readAllStandardOutput())));
  }

  // Elementwise groups read and write 128-bit vectors on the device:
  // ld/st.global.v4.f32 for f32, four 32-bit words of halves for f16.
  void vectorStagesUseV4AccessesInPtx_data() {
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<QString>("load");
    QTest::addColumn<QString>("store");
    QTest::newRow("f32 gelu") << "ew_gelu"
                              << "ld.global.v4.f32"
                              << "st.global.v4.f32";
    QTest::newRow("f32 bias along a row") << "add_bcast_row"
                                          << "ld.global.v4.f32"
                                          << "st.global.v4.f32";
    // The transposed input stays a scalar load; the output is still a vector.
    QTest::newRow("f32 transposed input") << "transpose_perm"
                                          << "ld.global.f32"
                                          << "st.global.v4.f32";
    QTest::newRow("f16 sigmoid") << "f16_sigmoid"
                                 << "ld.global.v4.u32"
                                 << "st.global.v4.u32";
  }

  void vectorStagesUseV4AccessesInPtx() {
    QFETCH(QString, fixture);
    QFETCH(QString, load);
    QFETCH(QString, store);
    std::string why;
    if (!nvrtcAvailable(&why)) QSKIP(why.c_str());
    const fs::path model = fs::path(fuselens::test::sourcePath()) / "tests/fixtures" /
                           fixture.toStdString() / "model.onnx";
    Session s;
    QVERIFY(s.open(model.string()));
    QVERIFY(s.optimize(defaultPipeline()));
    auto m = emitCudaModule(s.finalGraph());
    QVERIFY2(m, m ? "" : m.message().c_str());
    QVERIFY2(m->source.find("// 128-bit vectors") != std::string::npos, m->source.c_str());
    auto ptx = compileToPtx(m->source, "compute_80", fixture.toStdString() + ".cu");
    QVERIFY2(ptx, ptx ? "" : ptx.message().c_str());
    QVERIFY2(ptx->find(load.toStdString()) != std::string::npos, ptx->c_str());
    QVERIFY2(ptx->find(store.toStdString()) != std::string::npos, ptx->c_str());
  }

  void nvrtcReportsAnErrorInOneSentence() {
    std::string why;
    if (!nvrtcAvailable(&why)) QSKIP(why.c_str());
    auto ptx = compileToPtx(
        "// line 1\nextern \"C\" __global__ void k(float* p) {\n  p[0] = undeclared;\n}\n");
    QVERIFY(!ptx.isOk());
    QVERIFY2(ptx.message().find("undeclared") != std::string::npos, ptx.message().c_str());
    // The generated line the error names, quoted after it.
    QVERIFY2(ptx.message().find("(line 3: p[0] = undeclared;)") != std::string::npos,
             ptx.message().c_str());
  }
};

QTEST_GUILESS_MAIN(CudaCTest)
#include "cuda_c_test.moc"
