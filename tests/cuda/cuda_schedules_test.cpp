// The GPU schedules chosen per stage, read from the emitted module: long
// rows with few of them split across blocks (codegen/cuda/cuda_reduce_split.cpp),
// M <= 16 contractions as the small-M stage (cuda_matmul_small.cpp), and the
// tiled MatMul's 3-D grid (column tiles on x, row tiles on y, batch on z,
// each dim at most 65535). That the stages compute the right numbers is
// checked by the host emulation against eager (tests/session/cuda_c_test,
// tests/cuda/cuda_bundle_emulation_test); ptxas figures by cuda_ptxas_test.
#include <QtTest>
#include <filesystem>

#include "codegen/cuda/cuda_c.h"
#include "passes/pass_manager.h"
#include "session/session.h"
#include "tests/support/test_paths.h"

using namespace fuselens;
namespace fs = std::filesystem;

namespace {

Expected<CudaModuleSource> moduleOf(Session& s) {
  FL_RETURN_IF_ERROR(s.optimize(defaultPipeline()));
  return emitCudaModule(s.finalGraph());
}

Expected<CudaModuleSource> fixtureModule(const std::string& name) {
  const fs::path dir = fs::path(fuselens::test::sourcePath()) / "tests/fixtures" / name;
  Session s;
  FL_RETURN_IF_ERROR(s.open((dir / "model.onnx").string()));
  return moduleOf(s);
}

// The body of stage `name` in the module's source.
std::string stageText(const CudaModuleSource& m, const std::string& name) {
  const size_t at = m.source.find("void " + name + "(");
  if (at == std::string::npos) return {};
  return m.source.substr(at, m.source.find("__global__", at) - at);
}

// The stages whose body holds `marker`.
std::vector<CudaStage> stagesWith(const CudaModuleSource& m, const std::string& marker) {
  std::vector<CudaStage> out;
  for (const CudaKernel& k : m.kernels)
    for (const CudaStage& st : k.stages)
      if (stageText(m, st.name).find(marker) != std::string::npos) out.push_back(st);
  return out;
}

}  // namespace

class CudaSchedulesTest : public QObject {
  Q_OBJECT
 private slots:
  // Rows: how many rows the reduction has; passes: reductions + 1.
  void longRowsAreSplitAcrossBlocks_data() {
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("passes");
    QTest::newRow("reducemean 1x65536") << "cuda_split_reducemean_1x65536" << 1 << 2;
    QTest::newRow("softmax 2x20000: max, then sum") << "cuda_split_softmax_2x20000" << 2 << 3;
    QTest::newRow("layernorm 3x12288: mean, then variance")
        << "cuda_split_layernorm_3x12288" << 3 << 3;
    QTest::newRow("whole-tensor reducesum 4x128x96")
        << "cuda_split_reducesum_all_4x128x96" << 1 << 2;
    QTest::newRow("global average pool 4 channels of 96x96")
        << "cuda_split_gap_1x4x96x96" << 4 << 2;
    QTest::newRow("reducemax 3x30001") << "cuda_split_reducemax_3x30001" << 3 << 2;
  }

  void longRowsAreSplitAcrossBlocks() {
    QFETCH(QString, fixture);
    QFETCH(int, rows);
    QFETCH(int, passes);
    auto m = fixtureModule(fixture.toStdString());
    QVERIFY2(m, m ? "" : m.message().c_str());
    const std::vector<CudaStage> split = stagesWith(*m, "// split reduction");
    QCOMPARE(int(split.size()), passes);
    for (size_t p = 0; p < split.size(); ++p) {
      // Several blocks per row and the same (row, chunk) grid for every pass
      // but a last one without maps (a block per row stores the results).
      const CudaStage& st = split[p];
      QCOMPARE(st.block % 32, int64_t(0));
      if (p + 1 == split.size() && st.grid == rows) continue;
      QVERIFY2(st.grid >= 2 * rows, st.name.c_str());
      QCOMPARE(st.grid, split[0].grid);
    }
    // The partials live in scratch beyond the loop IR's temps; no float atomics.
    int64_t scratch = 0;
    for (const CudaKernel& k : m->kernels) scratch = std::max(scratch, k.scratchBytes);
    QVERIFY(scratch >= int64_t(sizeof(float)) * split[0].grid);
    QVERIFY(m->source.find("atomic") == std::string::npos);
    qInfo("%d passes, %lld blocks of %lld threads", passes, (long long)split[0].grid,
          (long long)split[0].block);
  }

  // Many short rows, or a long row among many, keep one block (or thread) per row.
  void shortOrManyRowsAreNotSplit_data() {
    QTest::addColumn<QString>("fixture");
    QTest::newRow("softmax, short rows") << "softmax13_last";
    QTest::newRow("f16 softmax") << "f16_softmax";
    QTest::newRow("layernorm") << "norm_layer";
  }

  void shortOrManyRowsAreNotSplit() {
    QFETCH(QString, fixture);
    auto m = fixtureModule(fixture.toStdString());
    QVERIFY2(m, m ? "" : m.message().c_str());
    QVERIFY(stagesWith(*m, "// split reduction").empty());
  }

  // M <= 16 takes the small-M stage (M = 1 used to fall back to a thread per
  // output); 17 rows keep the 64x64 tiles.
  void smallMatMulsTakeTheSmallMStage_data() {
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<QString>("marker");
    QTest::addColumn<int>("gridX");
    QTest::addColumn<int>("gridY");
    QTest::addColumn<int>("gridZ");
    QTest::newRow("M=4 with bias and ReLU") << "cuda_smallm_matmul_bias_relu_4x300x130"
                                            << "// small-M MatMul" << 3 << 1 << 1;
    QTest::newRow("M=1 GEMV") << "cuda_tile_matmul_m1_1x130x65"
                              << "// small-M MatMul" << 2 << 1 << 1;
    QTest::newRow("batched GEMV: batch on z") << "cuda_smallm_batched_gemv_5x1x70x33"
                                              << "// small-M MatMul" << 1 << 1 << 5;
    QTest::newRow("Gemm transB M=16") << "cuda_smallm_gemm_transB_16x70x40"
                                      << "// small-M MatMul" << 1 << 1 << 1;
    QTest::newRow("M=17: 64x64 tiles") << "cuda_tile_matmul_bias_relu_17x65x130"
                                       << "// tiled MatMul" << 2 << 1 << 1;
    QTest::newRow("batched tiles: rows on y, batch on z") << "cuda_tile_batched_z_5x2x66x40x70"
                                                          << "// tiled MatMul" << 2 << 2 << 10;
  }

  void smallMatMulsTakeTheSmallMStage() {
    QFETCH(QString, fixture);
    QFETCH(QString, marker);
    QFETCH(int, gridX);
    QFETCH(int, gridY);
    QFETCH(int, gridZ);
    auto m = fixtureModule(fixture.toStdString());
    QVERIFY2(m, m ? "" : m.message().c_str());
    const std::vector<CudaStage> st = stagesWith(*m, marker.toStdString());
    QCOMPARE(int(st.size()), 1);
    QCOMPARE(st[0].grid, int64_t(gridX));
    QCOMPARE(st[0].gridY, int64_t(gridY));
    QCOMPARE(st[0].gridZ, int64_t(gridZ));
  }

  // M = 1 with B read along K (Gemm transB: a Linear's weight) keeps a block
  // per output: a thread per column would read B with a stride of K.
  void transposedGemvKeepsABlockPerOutput() {
    auto m = fixtureModule("cuda_gemv_transB_1x70x40");
    QVERIFY2(m, m ? "" : m.message().c_str());
    QVERIFY(stagesWith(*m, "// small-M MatMul").empty());
    QCOMPARE(int(stagesWith(*m, "// one block per row").size()), 1);
  }

  // A batch past gridDim.z's limit is folded: 65535 blocks on z, each striding on.
  void batchPastTheGridLimitFolds() {
    Graph g;
    ValueId a = g.addInput("a", TensorType::of(DType::F32, {70000, 2, 3}));
    ValueId b = g.addInput("b", TensorType::of(DType::F32, {70000, 3, 24}));
    g.addOutput(
        g.node(g.addNode("MatMul", {a, b}, {{"y", TensorType::of(DType::F32, {70000, 2, 24})}}))
            .outputs[0]);
    Session s;
    QVERIFY(s.open(std::move(g), "big-batch").isOk());
    auto m = moduleOf(s);
    QVERIFY2(m, m ? "" : m.message().c_str());
    const std::vector<CudaStage> st = stagesWith(*m, "// small-M MatMul");
    QCOMPARE(int(st.size()), 1);
    QCOMPARE(st[0].gridZ, int64_t(65535));
    QVERIFY(stageText(*m, st[0].name).find("fl_bz += gridDim.z") != std::string::npos);
  }
};

QTEST_GUILESS_MAIN(CudaSchedulesTest)
#include "cuda_schedules_test.moc"
