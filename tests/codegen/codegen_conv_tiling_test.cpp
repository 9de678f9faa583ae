// The blocked convolution's register tile as a schedule knob (ConvTiling):
// every tile the tuner would offer for a few conv shapes (row tails, stride 2,
// depthwise, blocks of 8 and 16), and tiles the lowering must clamp, compile
// and match the eager run of the plain graph; the knob round-trips through the
// schedule JSON, is left out of it when unset, and out-of-range values are refused.
#include <QtTest>

#include "codegen/compiler.h"
#include "codegen/schedule/tuner.h"
#include "codegen/target.h"
#include "core/compare/compare.h"
#include "core/eager/interpreter.h"
#include "core/ops/registry.h"
#include "eager_match.h"
#include "passes/pass_manager.h"
#include "test_util.h"

using namespace fuselens;
using namespace fuselens::testing;

namespace {

struct Case {
  const char* name;
  Shape x, w;
  int64_t group, stride;
  int block;
};

// Conv (pads 1, bias) + Relu.
Graph convRelu(const Case& c) {
  Graph g;
  ValueId x = g.addInput("x", f32(c.x));
  ValueId w = g.addConstant("w", std::make_shared<const TensorData>(randomTensor(c.w, 11)));
  ValueId b = g.addConstant("b", std::make_shared<const TensorData>(randomTensor({c.w[0]}, 12)));
  Attributes a;
  a.set("group", c.group);
  a.set("strides", Shape{c.stride, c.stride});
  a.set("pads", Shape{1, 1, 1, 1});
  ValueId y = g.node(g.addNode("Conv", {x, w, b}, {{"c", f32({})}}, a, "conv")).outputs[0];
  g.addOutput(g.node(g.addNode("Relu", {y}, {{"y", f32({})}}, {}, "relu")).outputs[0]);
  if (Status s = inferGraphTypes(g); !s.isOk()) qWarning("infer: %s", s.message().c_str());
  g.markAsOriginal();
  return g;
}

// Compiles the blocked graph under `s` and compares its output with `eager`;
// an empty string when they agree.
std::string check(const Graph& orig, const Graph& opt, const EagerResult& eager,
                  const std::map<std::string, TensorData>& in, const Schedule& s) {
  CompileOptions co;
  co.schedule = s;
  co.tuningLog = "";
  auto m = compileGraph(opt, co);
  if (!m) return "compile: " + m.message();
  auto run = (*m)->run(in);
  if (!run) return "run: " + run.message();
  std::string err = outputsMatchEager(orig, opt, eager, *run);
  return err.empty() ? err : err + "\n" + (*m)->loopIrText();
}

}  // namespace

class CodegenConvTilingTest : public QObject {
  Q_OBJECT

 private slots:
  void everyCandidateMatchesEager();
  void jsonRoundTrip();
  void badTileIsRefused();
};

void CodegenConvTilingTest::everyCandidateMatchesEager() {
  const Case cases[] = {
      {"23-wide rows (tails), 4 blocks of 8", {1, 8, 5, 23}, {32, 8, 3, 3}, 1, 1, 8},
      {"stride 2, 2 blocks of 16", {1, 16, 9, 29}, {32, 16, 3, 3}, 1, 2, 16},
      {"odd block count (3 of 16)", {1, 5, 4, 17}, {48, 5, 3, 3}, 1, 1, 16},
      {"depthwise, stride 2", {1, 16, 9, 21}, {16, 1, 3, 3}, 16, 2, 8},
  };
  const CpuTarget& t = codegenTarget();
  const int registers = t.vectorBits >= 512 ? 32 : 16;
  for (const Case& c : cases) {
    Graph g = convRelu(c);
    std::map<std::string, TensorData> in = {{"x", randomTensor(c.x, 5)}};
    auto eager = runEager(g, in);
    QVERIFY2(eager.isOk(), eager.message().c_str());
    std::string pipeline = "layout{block=" + std::to_string(c.block) + "},fuse-ops{max-ops=8}";
    auto specs = parsePipeline(pipeline);
    QVERIFY(specs.isOk());
    auto r = runPipeline(g, *specs);
    QVERIFY2(r.isOk(), r.message().c_str());
    const Graph& opt = r->snapshots.back().graph();
    Schedule base = Schedule::defaults();
    std::vector<Schedule> tiles = convCandidates(base, opt, t.vectorLanes(), registers);
    QVERIFY2(tiles.size() >= 3, c.name);
    for (const Schedule& s : tiles) {
      QVERIFY(s.conv.pixels >= 4 && s.conv.ocBlocks >= 1);
      if (c.group > 1) QCOMPARE(s.conv.ocBlocks, int64_t(1));  // depthwise: one block a tile
    }
    // Tiles the lowering clamps: wider than the row and the register file,
    // blocks that do not divide the block count, one knob left automatic.
    for (ConvTiling ct : {ConvTiling{32, 8}, ConvTiling{3, 3}, ConvTiling{0, 2}, ConvTiling{9, 0},
                          ConvTiling{1, 1}}) {
      Schedule s = base;
      s.name = "clamped";
      s.conv = ct;
      tiles.push_back(s);
    }
    for (const Schedule& s : tiles) {
      std::string err = check(g, opt, *eager, in, s);
      QVERIFY2(err.empty(), (std::string(c.name) + ", tile " + std::to_string(s.conv.pixels) + "x" +
                             std::to_string(s.conv.ocBlocks) + ": " + err)
                                .c_str());
    }
    qInfo("%s: %zu tiles match eager", c.name, tiles.size());
  }
}

void CodegenConvTilingTest::jsonRoundTrip() {
  Schedule s = Schedule::defaults();
  // Unset: not written, so older logs and manifests stay as they were.
  QVERIFY(s.toJson().find("\"conv\"") == std::string::npos);
  s.conv = {7, 2};
  std::string text = s.toJson();
  QVERIFY2(text.find("\"conv\":{\"oc_blocks\":2,\"pixels\":7}") != std::string::npos, text.c_str());
  auto back = scheduleFromJson(text);
  QVERIFY2(back.isOk(), back.message().c_str());
  QVERIFY(*back == s);
  s.conv = {10, 0};  // only the pixels set
  text = s.toJson();
  QVERIFY(text.find("oc_blocks") == std::string::npos);
  back = scheduleFromJson(text);
  QVERIFY(back.isOk() && back->conv == (ConvTiling{10, 0}));
}

void CodegenConvTilingTest::badTileIsRefused() {
  auto a = scheduleFromJson(R"({"conv":{"pixels":40}})");
  QVERIFY(!a.isOk());
  QCOMPARE(a.message(),
           std::string("conv pixels 40 is outside 0..32 (0 keeps the automatic tile)"));
  auto b = scheduleFromJson(R"({"conv":{"pixels":7,"oc_blocks":-1}})");
  QVERIFY(!b.isOk());
  QCOMPARE(b.message(),
           std::string("conv oc_blocks -1 is outside 0..8 (0 keeps the automatic tile)"));
  auto c = scheduleFromJson(R"({"conv":[7,2]})");
  QVERIFY(!c.isOk());
  QVERIFY2(c.message().find("\"conv\" must be a JSON object") != std::string::npos,
           c.message().c_str());
  auto d = scheduleFromJson(R"({"conv":{"pixels":"seven"}})");
  QVERIFY(!d.isOk());
}

QTEST_APPLESS_MAIN(CodegenConvTilingTest)
#include "codegen_conv_tiling_test.moc"
