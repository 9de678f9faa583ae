// Every fixture model's CUDA kernels through the GPU toolchain, without a GPU:
// each fixture whose kernels lower for CUDA contributes its module (kernels
// renamed per fixture, so all of them fit one translation unit), NVRTC
// compiles the batch to PTX for compute_80 and compute_90, and `ptxas -v`
// assembles it for sm_80 and sm_90 (codegen/cuda/ptxas.h). Every stage must
// come back with its registers, and the ranges of registers and spills are
// printed. Skips with a message where NVRTC or ptxas is not installed.
#include <QtTest>
#include <filesystem>
#include <set>

#include "codegen/cuda/cuda_c.h"
#include "codegen/cuda/cuda_export.h"
#include "codegen/cuda/device_binaries.h"
#include "codegen/cuda/nvrtc.h"
#include "codegen/cuda/ptxas.h"
#include "codegen/cuda/toolkit.h"
#include "codegen/kernel_plan.h"
#include "core/io/npy.h"
#include "session/session.h"
#include "tests/support/test_paths.h"

using namespace fuselens;
namespace fs = std::filesystem;

class CudaPtxasTest : public QObject {
  Q_OBJECT

  std::string source_;
  std::vector<std::string> stages_;
  int fixtures_ = 0;
  std::map<std::string, PtxasReport> figures_;
  std::set<std::string> tiled_;   // the shared-memory tiled MatMul stages (cuda_matmul.cpp)
  std::set<std::string> vector_;  // the stages with 128-bit accesses (cuda_vector.cpp)
  std::set<std::string> split_;   // long rows split across blocks (cuda_reduce_split.cpp)
  std::set<std::string> small_;   // small-M MatMul stages (cuda_matmul_small.cpp)
  std::set<std::string> conv_;    // implicit-GEMM Conv stages (cuda_conv.cpp)

  // The stages of `text` whose body holds `marker`.
  static std::vector<std::string> stagesWith(const std::string& text, const std::string& marker) {
    const std::string open = "__global__ void ";
    std::vector<std::string> out;
    for (size_t at = text.find(open); at != std::string::npos;) {
      const size_t name = at + open.size();
      const size_t next = text.find(open, name);
      if (text.substr(name, next - name).find(marker) != std::string::npos)
        out.push_back(text.substr(name, text.find('(', name) - name));
      at = next;
    }
    return out;
  }

 private slots:
  void parsesPtxasOutput() {
    const std::string log =
        "ptxas info    : 0 bytes gmem\n"
        "ptxas info    : Compiling entry function 'k0_s0' for 'sm_90'\n"
        "ptxas info    : Function properties for k0_s0\n"
        "    16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n"
        "ptxas info    : Used 40 registers, used 1 barriers, 1024 bytes smem\n"
        "ptxas info    : Compiling entry function 'k1_s0' for 'sm_90'\n"
        "ptxas info    : Function properties for k1_s0\n"
        "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
        "ptxas info    : Used 8 registers, used 0 barriers\n";
    auto f = parsePtxasLog(log);
    QCOMPARE(f.size(), size_t(2));
    QCOMPARE(f["k0_s0"].registers, 40);
    QCOMPARE(f["k0_s0"].spillStores, int64_t(8));
    QCOMPARE(f["k0_s0"].spillLoads, int64_t(4));
    QCOMPARE(f["k0_s0"].stackBytes, int64_t(16));
    QCOMPARE(f["k0_s0"].sharedBytes, int64_t(1024));
    QCOMPARE(f["k1_s0"].registers, 8);
    QCOMPARE(f["k1_s0"].spillStores, int64_t(0));
  }

  void rejectedPtxIsOneSentence() {
    std::string why;
    if (findPtxas(&why).empty()) QSKIP(why.c_str());
    auto r = runPtxas(".version 8.0\n.target sm_90\n.address_size 64\nnot ptx at all\n", "sm_90");
    QVERIFY(!r);
    QVERIFY2(r.message().find("ptxas rejected the PTX for sm_90") != std::string::npos,
             r.message().c_str());
    QVERIFY(r.message().find('\n') == std::string::npos);
  }

  // The batch: every fixture that lowers for CUDA (driver and fallback
  // kernels are host code, so a fixture with one does not).
  void emitEveryFixture() {
    const fs::path root = fs::path(fuselens::test::sourcePath()) / "tests/fixtures";
    std::vector<fs::path> dirs;
    for (const auto& e : fs::directory_iterator(root))
      if (fs::exists(e.path() / "model.onnx")) dirs.push_back(e.path());
    std::sort(dirs.begin(), dirs.end());
    source_ = cudaPrelude();
    for (const fs::path& dir : dirs) {
      Session s;
      if (!s.open((dir / "model.onnx").string()) || !s.optimize(defaultPipeline())) continue;
      std::map<std::string, TensorData> inputs;
      for (const auto& e : fs::directory_iterator(dir)) {
        const std::string n = e.path().filename().string();
        if (n.rfind("input_", 0) != 0 || e.path().extension() != ".npy") continue;
        if (auto t = readNpy(e.path().string())) inputs[n.substr(6, n.size() - 10)] = *t;
      }
      if (!s.fitToInputs(inputs)) continue;
      auto plan = planKernels(s.finalGraph(), cudaCompileOptions(), {}, {});
      if (!plan) continue;
      std::string text;
      std::vector<std::string> names;
      bool ok = true;
      for (LoopFunc f : plan->funcs) {
        f.name = "x" + std::to_string(fixtures_) + "_" + f.name;
        auto k = emitCudaKernel(f, &text);
        if (!k) {
          ok = false;
          break;
        }
        for (const CudaStage& st : k->stages) names.push_back(st.name);
      }
      for (const std::string& name : stagesWith(text, "// tiled MatMul")) tiled_.insert(name);
      for (const std::string& name : stagesWith(text, "// 128-bit vectors")) vector_.insert(name);
      for (const std::string& name : stagesWith(text, "// split reduction")) split_.insert(name);
      for (const std::string& name : stagesWith(text, "// small-M MatMul")) small_.insert(name);
      for (const std::string& name : stagesWith(text, "// tiled Conv")) conv_.insert(name);
      if (!ok || names.empty()) continue;
      ++fixtures_;
      source_ += text;
      stages_.insert(stages_.end(), names.begin(), names.end());
    }
    qInfo("%d fixtures, %zu stage functions (%zu with 128-bit vectors), %zu KiB of CUDA C",
          fixtures_, stages_.size(), vector_.size(), source_.size() / 1024);
    QVERIFY2(fixtures_ >= 150, qPrintable(QString("only %1 fixtures lower").arg(fixtures_)));
    // M > 16 as 64x64 tiles; the many small fixture MatMuls as the small-M stage.
    QVERIFY2(tiled_.size() >= 4, qPrintable(QString("only %1 tiled stages").arg(tiled_.size())));
    QVERIFY2(vector_.size() >= 100,
             qPrintable(QString("only %1 vector stages").arg(vector_.size())));
    // tests/fixtures/cuda_split_*: six long-row reductions, 2 or 3 passes each.
    QVERIFY2(split_.size() >= 14, qPrintable(QString("only %1 split stages").arg(split_.size())));
    // tests/fixtures/cuda_smallm_*, cuda_tile_matmul_m1 and the op fixtures' MatMuls: M <= 16.
    QVERIFY2(small_.size() >= 50, qPrintable(QString("only %1 small-M stages").arg(small_.size())));
    // tests/fixtures/cuda_conv_* and the conv_* op fixtures.
    QVERIFY2(conv_.size() >= 8, qPrintable(QString("only %1 conv stages").arg(conv_.size())));
    qInfo("%zu tiled, %zu small-M MatMul stages, %zu split-reduction stages, %zu tiled Conv",
          tiled_.size(), small_.size(), split_.size(), conv_.size());
  }

  void ptxasAcceptsEveryStageForSm80AndSm90() {
    std::string why;
    if (!nvrtcAvailable(&why) || findPtxas(&why).empty()) QSKIP(why.c_str());
    QVERIFY(!stages_.empty());
    auto figures = ptxasFigures(source_, {"sm_80", "sm_90"}, "fixtures.cu");
    QVERIFY2(figures, figures ? "" : figures.message().c_str());
    for (const char* sm : {"sm_80", "sm_90"}) {
      const PtxasReport& rep = figures->at(sm);
      int minRegs = 1 << 30, maxRegs = 0;
      int64_t spilling = 0, maxSpill = 0;
      QStringList missing;
      for (const std::string& name : stages_) {
        auto it = rep.functions.find(name);
        if (it == rep.functions.end() || it->second.registers <= 0) {
          missing << QString::fromStdString(name);
          continue;
        }
        minRegs = std::min(minRegs, it->second.registers);
        maxRegs = std::max(maxRegs, it->second.registers);
        spilling += it->second.spillStores > 0;
        maxSpill = std::max(maxSpill, it->second.spillStores);
      }
      QVERIFY2(missing.isEmpty(), qPrintable(missing.mid(0, 10).join(", ")));
      // The tiled MatMul stages stage K through shared memory and must not spill:
      // their 4 x 4 accumulators are meant to live in registers.
      int tiledRegs = 0;
      for (const std::string& name : tiled_) {
        const PtxasFigures& t = rep.functions.at(name);
        QVERIFY2(t.sharedBytes > 0, name.c_str());
        QVERIFY2(t.spillStores == 0 && t.spillLoads == 0, name.c_str());
        tiledRegs = std::max(tiledRegs, t.registers);
      }
      qInfo("%s: %zu tiled MatMul stages, at most %d registers, no spills", sm, tiled_.size(),
            tiledRegs);
      // Vector stages hold a thread's 16 bytes per operand in registers: no spills either.
      int vectorRegs = 0;
      for (const std::string& name : vector_) {
        const PtxasFigures& t = rep.functions.at(name);
        QVERIFY2(t.spillStores == 0 && t.spillLoads == 0, name.c_str());
        vectorRegs = std::max(vectorRegs, t.registers);
      }
      qInfo("%s: %zu stages with 128-bit vectors, at most %d registers, no spills", sm,
            vector_.size(), vectorRegs);
      // Split reductions, small-M MatMuls and tiled convs (shared-memory tiles
      // and register micro-tiles) keep their accumulators in registers too.
      for (const auto& [what, names] :
           {std::pair{"split-reduction", &split_}, std::pair{"small-M MatMul", &small_},
            std::pair{"tiled Conv", &conv_}}) {
        int regs = 0;
        for (const std::string& name : *names) {
          const PtxasFigures& t = rep.functions.at(name);
          QVERIFY2(t.spillStores == 0 && t.spillLoads == 0, name.c_str());
          QVERIFY2(names != &conv_ || t.sharedBytes > 0, name.c_str());
          regs = std::max(regs, t.registers);
        }
        qInfo("%s: %zu %s stages, at most %d registers, no spills", sm, names->size(), what, regs);
      }
      qInfo("%s: %zu stages, registers %d..%d, %lld spilling (at most %lld bytes), ptxas %.1f s",
            sm, stages_.size(), minRegs, maxRegs, (long long)spilling, (long long)maxSpill,
            rep.seconds);
    }
    figures_ = *figures;
  }

  // What an export writes beside the PTX: a cubin per architecture (ELF), and
  // one fat binary of both plus the PTX; SASS where cuobjdump or nvdisasm is.
  void cubinsMakeAFatbinAndSass() {
    if (figures_.empty()) QSKIP("no ptxas figures (see the test before)");
    std::map<std::string, std::string> cubins;
    for (const auto& [sm, rep] : figures_) {
      QVERIFY2(rep.cubin.rfind("\x7f"
                               "ELF",
                               0) == 0,
               sm.c_str());
      cubins[sm] = rep.cubin;
    }
    auto ptx =
        compileToPtx(cudaPrelude() + "extern \"C\" __global__ void probe(float* x) { x[0] = 1; }\n",
                     "compute_80", "probe.cu");
    QVERIFY2(ptx, ptx ? "" : ptx.message().c_str());
    auto fat = makeFatbin(cubins, *ptx, "compute_80");
    if (!fat && findCudaTool("fatbinary").empty()) QSKIP(fat.message().c_str());
    QVERIFY2(fat, fat ? "" : fat.message().c_str());
    QVERIFY(fat->size() > cubins["sm_80"].size() + cubins["sm_90"].size());
    QCOMPARE(fat->substr(0, 4), std::string("\x50\xed\x55\xba"));  // fatbin magic 0xBA55ED50

    auto sass = disassembleCubin(cubins["sm_90"]);
    if (findCudaTool("cuobjdump").empty() && findCudaTool("nvdisasm").empty()) {
      QVERIFY(!sass);
      QVERIFY2(sass.message().find("SASS needs cuobjdump or nvdisasm") != std::string::npos,
               sass.message().c_str());
      return;
    }
    QVERIFY2(sass, sass ? "" : sass.message().c_str());
    QVERIFY2(sass->find(stages_.front()) != std::string::npos, stages_.front().c_str());
  }
};

QTEST_GUILESS_MAIN(CudaPtxasTest)
#include "cuda_ptxas_test.moc"
