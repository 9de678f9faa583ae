// Winograd F(2x2, 3x3) for blocked 3x3 stride-1 convs (blocked_winograd.cpp):
// the shapes where its tiles hang over the image (odd H or W), batches, blocks
// of 8 and 16, one output block (no pairs), output groups split into parts
// (U past L2), a fused residual Add + Relu epilogue; each compiled both ways
// (Winograd and the direct nest, conv.winograd false) and matched against
// the eager run of the plain graph. Images of fewer than 32 tiles and
// strided convs keep the direct nest; the switch round-trips through JSON.
#include <QtTest>

#include "codegen/compiler.h"
#include "codegen/schedule/schedule.h"
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
  Shape x;
  int64_t cout, stride;
  int block;
  bool winograd;  // whether the lowering should pick it
};

// Conv 3x3 (pads 1, bias), + x when the shapes allow, Relu.
Graph convBlock(const Case& c) {
  Graph g;
  ValueId x = g.addInput("x", f32(c.x));
  Shape ws = {c.cout, c.x[1], 3, 3};
  ValueId w = g.addConstant("w", std::make_shared<const TensorData>(randomTensor(ws, 21)));
  ValueId b = g.addConstant("b", std::make_shared<const TensorData>(randomTensor({c.cout}, 22)));
  Attributes a;
  a.set("strides", Shape{c.stride, c.stride});
  a.set("pads", Shape{1, 1, 1, 1});
  ValueId y = g.node(g.addNode("Conv", {x, w, b}, {{"c", f32({})}}, a, "conv")).outputs[0];
  if (c.cout == c.x[1] && c.stride == 1)
    y = g.node(g.addNode("Add", {y, x}, {{"s", f32({})}}, {}, "residual")).outputs[0];
  g.addOutput(g.node(g.addNode("Relu", {y}, {{"y", f32({})}}, {}, "relu")).outputs[0]);
  if (Status s = inferGraphTypes(g); !s.isOk()) qWarning("infer: %s", s.message().c_str());
  g.markAsOriginal();
  return g;
}

// Compiles `opt` under `s`; an error, or "" with `ir` set to the loop IR
// when its output matches `eager`.
std::string check(const Graph& orig, const Graph& opt, const EagerResult& eager,
                  const std::map<std::string, TensorData>& in, const Schedule& s, std::string& ir) {
  CompileOptions co;
  co.schedule = s;
  co.tuningLog = "";
  auto m = compileGraph(opt, co);
  if (!m) return "compile: " + m.message();
  ir = (*m)->loopIrText();
  auto run = (*m)->run(in);
  if (!run) return "run: " + run.message();
  return outputsMatchEager(orig, opt, eager, *run);
}

}  // namespace

class CodegenWinogradTest : public QObject {
  Q_OBJECT

 private slots:
  void matchesEagerBothWays();
  void switchRoundTrips();
};

void CodegenWinogradTest::matchesEagerBothWays() {
  const Case cases[] = {
      {"16x16, 32 -> 32 (+ x), blocks of 16", {1, 32, 16, 16}, 32, 1, 16, true},
      {"15x13: the last tile row and column hang over", {1, 16, 15, 13}, 48, 1, 16, true},
      {"batch 2, 12x20, blocks of 8", {2, 32, 12, 20}, 64, 1, 8, true},
      {"11x12, 64 -> 256: U of 1 MiB in parts", {1, 64, 11, 12}, 256, 1, 16, true},
      {"11x11, 16 -> 16 (+ x), one block", {1, 16, 11, 11}, 16, 1, 16, true},
      {"7x7: 16 tiles stay direct", {1, 32, 7, 7}, 32, 1, 16, false},
      {"stride 2 stays direct", {1, 32, 16, 16}, 32, 2, 16, false},
  };
  for (const Case& c : cases) {
    Graph g = convBlock(c);
    std::map<std::string, TensorData> in = {{"x", randomTensor(c.x, 5)}};
    auto eager = runEager(g, in);
    QVERIFY2(eager.isOk(), eager.message().c_str());
    auto specs = parsePipeline("layout{block=" + std::to_string(c.block) + "},fuse-ops{max-ops=8}");
    QVERIFY(specs.isOk());
    auto r = runPipeline(g, *specs);
    QVERIFY2(r.isOk(), r.message().c_str());
    const Graph& opt = r->snapshots.back().graph();
    for (bool on : {true, false}) {
      Schedule s = Schedule::defaults();
      s.conv.winograd = on;
      std::string ir;
      std::string err = check(g, opt, *eager, in, s, ir);
      QVERIFY2(err.empty(),
               (std::string(c.name) + (on ? ", winograd: " : ", direct: ") + err).c_str());
      // The transformed input is the Winograd nest's mark in the listing.
      const bool used = ir.find("wino_v") != std::string::npos;
      QVERIFY2(used == (on && c.winograd), (std::string(c.name) + ": " + ir).c_str());
    }
  }
}

void CodegenWinogradTest::switchRoundTrips() {
  Schedule s = Schedule::defaults();
  QVERIFY(s.conv.winograd);
  QVERIFY(s.toJson().find("winograd") == std::string::npos);  // on: not written
  s.conv.winograd = false;
  std::string text = s.toJson();
  QVERIFY2(text.find("\"conv\":{\"winograd\":false}") != std::string::npos, text.c_str());
  auto back = scheduleFromJson(text);
  QVERIFY2(back.isOk(), back.message().c_str());
  QVERIFY(*back == s);
}

QTEST_APPLESS_MAIN(CodegenWinogradTest)
#include "codegen_winograd_test.moc"
