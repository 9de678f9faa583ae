// The NCHW<b>c layout end to end: graphs with plain Conv / pools go through the
// layout pass (and fuse-ops), are compiled, and every tensor of the compiled
// run that has an origin is compared with the eager run of the original graph,
// its layout undone (so a broken ConvNCHWc kernel, a wrong transform or a
// wrong origin/layout record all fail here).
#include <QtTest>
#include <regex>

#include "codegen/compiler.h"
#include "core/compare/compare.h"
#include "core/eager/interpreter.h"
#include "core/ir/printer.h"
#include "core/ops/registry.h"
#include "passes/pass_manager.h"
#include "test_util.h"

using namespace fuselens;
using namespace fuselens::testing;

namespace {

struct ConvCase {
  Shape x, w;
  int64_t group = 1;
  Shape strides, pads, dilations;
  bool bias = true, relu = true;
  std::string pool;  // "", "MaxPool", "AveragePool": a pool after the conv
};

}  // namespace

Q_DECLARE_METATYPE(ConvCase)

namespace {

std::shared_ptr<const TensorData> constant(const Shape& s, uint32_t seed) {
  return std::make_shared<const TensorData>(randomTensor(s, seed));
}

ValueId addOp(Graph& g, const char* op, std::vector<ValueId> in, Attributes a = {}) {
  static int id = 0;
  std::string name = std::string(op) + std::to_string(id++);
  return g.node(g.addNode(op, std::move(in), {{name, f32({})}}, std::move(a), name)).outputs[0];
}

ValueId addConv(Graph& g, ValueId x, const ConvCase& c, uint32_t seed) {
  std::vector<ValueId> ins = {x, g.addConstant("w" + std::to_string(seed), constant(c.w, seed))};
  if (c.bias)
    ins.push_back(g.addConstant("b" + std::to_string(seed), constant({c.w[0]}, seed + 1)));
  Attributes a;
  a.set("group", c.group);
  if (!c.strides.empty()) a.set("strides", c.strides);
  if (!c.pads.empty()) a.set("pads", c.pads);
  if (!c.dilations.empty()) a.set("dilations", c.dilations);
  return addOp(g, "Conv", ins, a);
}

Graph finish(Graph g, ValueId y) {
  g.addOutput(y);
  if (Status s = inferGraphTypes(g); !s.isOk()) qWarning("infer: %s", s.message().c_str());
  g.markAsOriginal();
  return g;
}

Graph convGraph(const ConvCase& c) {
  Graph g;
  ValueId y = addConv(g, g.addInput("x", f32(c.x)), c, 21);
  if (c.relu) y = addOp(g, "Relu", {y});
  if (!c.pool.empty()) {
    Attributes a;
    a.set("kernel_shape", Shape{3, 3});
    a.set("strides", Shape{2, 2});
    a.set("pads", Shape{1, 1, 1, 1});
    y = addOp(g, c.pool.c_str(), {y}, a);
  }
  return finish(std::move(g), y);
}

// Conv-Relu-MaxPool-Conv-Relu-GlobalAveragePool, a small CNN.
Graph cnn() {
  Graph g;
  ConvCase c1{{1, 3, 16, 16}, {16, 3, 3, 3}, 1, {}, {1, 1, 1, 1}};
  ConvCase c2{{}, {24, 16, 3, 3}, 1, {}, {1, 1, 1, 1}};
  ValueId y = addOp(g, "Relu", {addConv(g, g.addInput("x", f32(c1.x)), c1, 31)});
  Attributes pool;
  pool.set("kernel_shape", Shape{2, 2});
  pool.set("strides", Shape{2, 2});
  y = addOp(g, "MaxPool", {y}, pool);
  y = addOp(g, "Relu", {addConv(g, y, c2, 41)});
  return finish(std::move(g), addOp(g, "GlobalAveragePool", {y}));
}

// Two convs concatenated over channels (16 + 5), then a squeeze-excite gate:
// GlobalAveragePool -> 1x1 Conv -> Sigmoid -> Mul with the [1,C,1,1] scale.
Graph concatSqueezeExcite() {
  Graph g;
  ValueId x = g.addInput("x", f32({1, 8, 12, 12}));
  ConvCase a{{}, {16, 8, 3, 3}, 1, {}, {1, 1, 1, 1}}, b{{}, {5, 8, 1, 1}}, e{{}, {21, 21, 1, 1}};
  Attributes cat;
  cat.set("axis", int64_t(1));
  ValueId y =
      addOp(g, "Concat", {addOp(g, "Relu", {addConv(g, x, a, 51)}), addConv(g, x, b, 61)}, cat);
  ValueId s = addOp(g, "Sigmoid", {addConv(g, addOp(g, "GlobalAveragePool", {y}), e, 71)});
  return finish(std::move(g), addOp(g, "Mul", {y, s}));
}

struct Outcome {
  std::string error;
  int compared = 0, blocked = 0;
  double worst = 0;
  size_t kernels = 0;
  std::string ir, loops;
};

// Runs the pipeline and the compiled module; compares every value with an
// origin against the eager run of `g`, layouts undone.
Outcome compiledVsEagerEverywhere(const Graph& g, const std::string& pipeline) {
  Outcome o;
  std::map<std::string, TensorData> in;
  for (ValueId v : g.inputs())
    in[g.value(v).name] = randomTensor(*g.value(v).type.staticShape(), 5);
  auto eager = runEager(g, in);
  if (!eager) return o.error = "eager: " + eager.message(), o;
  auto specs = parsePipeline(pipeline);
  if (!specs) return o.error = "pipeline: " + specs.message(), o;
  auto r = runPipeline(g, *specs);
  if (!r) return o.error = "pipeline: " + r.message(), o;
  const Graph& opt = r->snapshots.back().graph();
  o.ir = printGraph(opt);
  auto m = compileGraph(opt, {});
  if (!m) return o.error = "compile: " + m.message() + "\n" + o.ir, o;
  auto run = (*m)->run(in);
  if (!run) return o.error = "run: " + run.message(), o;
  o.kernels = (*m)->kernels().size();
  o.loops = (*m)->loopIrText();
  for (ValueId v : opt.valueIds()) {
    const Value& val = opt.value(v);
    const TensorData* want = val.origin.valid() ? eager->find(val.origin) : nullptr;
    if (size_t(v.index) >= run->size() || !(*run)[v.index] || !want) continue;
    TensorMetrics tm = compareTensors(*want, g.value(val.origin).layout, *(*run)[v.index],
                                      val.layout, {1e-4, 1e-4});
    if (!tm.withinTolerance())
      return o.error = "value " + val.name + " differs from its origin: max abs " +
                       std::to_string(tm.maxAbs) + (tm.shapeMatch ? "" : " (shape)") + "\n" +
                       (*m)->loopIrText(),
             o;
    o.worst = std::max(o.worst, tm.maxAbs);
    ++o.compared;
    o.blocked += val.layout.blocked();
  }
  for (ValueId out : opt.outputs())
    if (!(*run)[out.index]) return o.error = "an output was not computed", o;
  return o;
}

int countOps(const std::string& ir, const std::string& op) {
  int n = 0;
  for (size_t at = ir.find(op); at != std::string::npos; at = ir.find(op, at + 1)) ++n;
  return n;
}

}  // namespace

class CodegenLayoutTest : public QObject {
  Q_OBJECT

 private slots:
  void blockedConv_data();
  void blockedConv();
  void reductionChunks_data();
  void reductionChunks();
  void cnnThroughTheDefaultPasses();
  void cnnLayoutAfterFuseOps();
  void concatAndSqueezeExciteStayBlocked();
};

void CodegenLayoutTest::blockedConv_data() {
  QTest::addColumn<ConvCase>("c");
  QTest::addColumn<QString>("pipeline");
  QString layout8 = "layout{block=8}", layout16 = "layout{block=16}";
  QString fused8 = "layout{block=8},fuse-ops{max-ops=8}",
          fused16 = "layout{block=16},fuse-ops{max-ops=8}";
  ConvCase c{{1, 8, 10, 10}, {16, 8, 3, 3}, 1, {}, {1, 1, 1, 1}};
  QTest::newRow("3x3 pads 1, block 8") << c << layout8;
  QTest::newRow("3x3 pads 1, block 8, fused") << c << fused8;
  QTest::newRow("3x3 pads 1, block 16, fused") << c << fused16;
  ConvCase s{{2, 5, 13, 11}, {12, 5, 3, 2}, 1, {2, 3}, {2, 0, 1, 1}, {2, 1}};
  QTest::newRow("strides, dilations, asym pads, C and M not multiples of b") << s << fused8;
  QTest::newRow("... block 16") << s << fused16;
  ConvCase wide{{1, 3, 4, 37}, {8, 3, 1, 3}, 1, {}, {0, 1, 0, 1}};
  wide.relu = false;
  QTest::newRow("wide rows: W tiles and a tail, no epilogue") << wide << fused8;
  // Register tiles of two output blocks (AVX-512: rows cut into equal tiles of
  // at most 7 pixels): 10 = 5 + 5, 23 = 6 + 6 + 6 + 5 (a tail tile); a stem
  // whose 27-tap reduction keeps 14 pixels x 1 block (21 = 14 + 7 tail), and an
  // odd block count (3 blocks of 16) that keeps one block a tile.
  ConvCase pair10{{1, 16, 5, 10}, {32, 16, 3, 3}, 1, {}, {1, 1, 1, 1}};
  QTest::newRow("two blocks a tile, 10-wide rows, block 16") << pair10 << fused16;
  ConvCase pair23{{1, 5, 4, 23}, {32, 5, 3, 3}, 1, {}, {1, 1, 1, 1}};
  QTest::newRow("two blocks a tile, 23-wide rows with a tail, block 8") << pair23 << fused8;
  QTest::newRow("... block 16") << pair23 << fused16;
  // Blocks of half a register (b=8 on AVX-512) take 4 or 3 blocks x 6 pixels:
  // 23 = 6 + 6 + 6 + 5 above with 4 blocks, 20 = 5 x 4 here with 3.
  ConvCase three{{1, 16, 5, 20}, {24, 16, 3, 3}, 1, {}, {1, 1, 1, 1}};
  QTest::newRow("three blocks a tile, block 8") << three << fused8;
  ConvCase stem{{1, 3, 9, 41}, {32, 3, 3, 3}, 1, {2, 2}, {1, 1, 1, 1}};
  QTest::newRow("3-channel stem: short reduction, one block a tile") << stem << fused16;
  ConvCase odd{{1, 16, 4, 9}, {48, 16, 3, 3}, 1, {2, 1}, {1, 1, 1, 1}};
  QTest::newRow("odd block count, strided rows") << odd << fused16;
  ConvCase dw{{1, 12, 9, 9}, {12, 1, 3, 3}, 12, {2, 2}, {1, 1, 1, 1}};
  QTest::newRow("depthwise, stride 2") << dw << fused8;
  QTest::newRow("depthwise, block 16") << dw << fused16;
  // Columns (W of 1-3 under a long H, magika's k x 1 convs): the nest runs
  // transposed, its tiles along H; H pads and strides, a W kernel of 2 over
  // W = 3, a pool after it and a depthwise column take the same path.
  ConvCase column{{1, 16, 40, 1}, {32, 16, 5, 1}, 1, {}, {2, 0, 2, 0}};
  QTest::newRow("column: k=5 x 1 over H=40, W=1 (transposed)") << column << fused16;
  QTest::newRow("... block 8") << column << fused8;
  ConvCase column3{{2, 5, 29, 3}, {12, 5, 3, 2}, 1, {2, 1}, {1, 0, 1, 1}, {1, 2}};
  QTest::newRow("column: W=3, strided H, dilated W, C and M not multiples of b")
      << column3 << fused8;
  ConvCase columnPool = column;
  columnPool.pool = "AveragePool";
  QTest::newRow("column + relu + averagepool (transposed pool too)") << columnPool << fused16;
  ConvCase columnDw{{1, 16, 33, 1}, {16, 1, 7, 1}, 16, {}, {3, 0, 3, 0}};
  QTest::newRow("depthwise column") << columnDw << fused16;
  ConvCase mp = c;
  mp.pool = "MaxPool";
  QTest::newRow("conv + relu + maxpool") << mp << fused8;
  ConvCase ap = s;
  ap.pool = "AveragePool";
  QTest::newRow("conv + relu + averagepool (pads not counted)") << ap << fused16;
  // layout after fuse-ops: the Conv groups are rewritten inside, transforms outside them.
  QString after8 = "fuse-ops{max-ops=8},layout{block=8}",
          after16 = "fuse-ops{max-ops=8},layout{block=16}";
  QTest::newRow("3x3 pads 1, block 8, layout after fuse-ops") << c << after8;
  QTest::newRow("strides, dilations, asym pads, layout after fuse-ops") << s << after16;
  QTest::newRow("depthwise, layout after fuse-ops") << dw << after8;
  QTest::newRow("conv + relu + maxpool, layout after fuse-ops") << mp << after8;
}

void CodegenLayoutTest::blockedConv() {
  QFETCH(ConvCase, c);
  QFETCH(QString, pipeline);
  Graph g = convGraph(c);
  Outcome o = compiledVsEagerEverywhere(g, pipeline.toStdString());
  QVERIFY2(o.error.empty(), o.error.c_str());
  QVERIFY2(countOps(o.ir, "ConvNCHWc(") == 1, o.ir.c_str());
  // With fuse-ops in the pipeline (layout before or after it) the region's
  // transforms fold into the Conv group (layout-prologue, layout-epilogue): a
  // lone Conv region is one kernel, no blocked value crosses a kernel boundary,
  // and its output checks it.
  const bool folded = pipeline.contains("fuse-ops");
  QVERIFY2(o.blocked >= 1 || (folded && o.kernels == 1), "no blocked value was compared");
  QVERIFY(o.compared >= (folded ? 2 : 3));
  qInfo("%d tensors compared (%d blocked), %zu kernels, max abs %.3g", o.compared, o.blocked,
        o.kernels, o.worst);
}

// Rows of many tiles whose weight slice is past L1 (80+ KiB here) run their
// reduction in input-channel chunks, the partial sums in a row buffer
// ("part"); border tiles, padded rows, the transposed column and a fused
// epilogue go through it too. Rows of few tiles, channels that are not whole
// blocks and small slices keep one pass.
void CodegenLayoutTest::reductionChunks_data() {
  QTest::addColumn<ConvCase>("c");
  QTest::addColumn<QString>("pipeline");
  QTest::addColumn<bool>("chunked");
  QString fused8 = "layout{block=8},fuse-ops{max-ops=8}",
          fused16 = "layout{block=16},fuse-ops{max-ops=8}";
  ConvCase column{{1, 256, 120, 1}, {32, 256, 5, 1}, 1, {}, {2, 0, 2, 0}};
  QTest::newRow("column: 256 channels x 5 taps, 24 tiles") << column << fused8 << true;
  ConvCase rows{{1, 64, 3, 130}, {32, 64, 3, 3}, 1, {}, {1, 1, 1, 1}};
  QTest::newRow("rows of 19 tiles, padded, block 16") << rows << fused16 << true;
  ConvCase strided = rows;
  strided.x = {2, 64, 5, 260}, strided.strides = {1, 2}, strided.relu = false;
  QTest::newRow("strided W, batch 2, no epilogue") << strided << fused16 << true;
  ConvCase few = column;
  few.x = {1, 256, 40, 1};
  QTest::newRow("rows of 6 tiles keep one pass") << few << fused8 << false;
  ConvCase partial = column;
  partial.x = {1, 250, 120, 1}, partial.w = {32, 250, 5, 1};
  QTest::newRow("channels not whole blocks keep one pass") << partial << fused8 << false;
  ConvCase small = column;
  small.x = {1, 16, 120, 1}, small.w = {32, 16, 5, 1};
  QTest::newRow("a slice inside L1 keeps one pass") << small << fused8 << false;
}

void CodegenLayoutTest::reductionChunks() {
  QFETCH(ConvCase, c);
  QFETCH(QString, pipeline);
  QFETCH(bool, chunked);
  Outcome o = compiledVsEagerEverywhere(convGraph(c), pipeline.toStdString());
  QVERIFY2(o.error.empty(), o.error.c_str());
  QVERIFY(o.compared >= 2);
  QVERIFY2((o.loops.find("float part") != std::string::npos) == chunked, o.loops.c_str());
}

void CodegenLayoutTest::cnnThroughTheDefaultPasses() {
  Graph g = cnn();
  Outcome o = compiledVsEagerEverywhere(
      g, "const-fold,cse,simplify,dce,layout{block=8},fuse-ops{max-ops=8}");
  QVERIFY2(o.error.empty(), o.error.c_str());
  if (qEnvironmentVariableIsSet("FUSELENS_PRINT_IR")) qInfo("%s", o.ir.c_str());
  // One region: the input is blocked once and the pooled result unblocked once.
  QCOMPARE(countOps(o.ir, "ConvNCHWc("), 2);
  QCOMPARE(countOps(o.ir, "MaxPoolNCHWc("), 1);
  QCOMPARE(countOps(o.ir, "ToNCHWc("), 1);
  QCOMPARE(countOps(o.ir, "FromNCHWc("), 1);
  // 4 kernels, as in NCHW: fuse-ops folds the ToNCHWc into the first Conv's
  // group (layout-prologue) and the FromNCHWc into the GlobalAveragePool's
  // reduction (layout-epilogue); before those rules they were 2 more kernels.
  QVERIFY2(o.kernels == 4, o.ir.c_str());
  QVERIFY(o.blocked >= 2);
  qInfo("CNN: %zu kernels, %d tensors compared (%d blocked), max abs %.3g", o.kernels, o.compared,
        o.blocked, o.worst);
}

// The issue's pipeline order, layout after fuse-ops: the fused Conv groups are
// rewritten inside, and the transforms between two blocked groups cancel, so
// the region is blocked once at the input and unblocked once at the output,
// each folded into the group beside it.
void CodegenLayoutTest::cnnLayoutAfterFuseOps() {
  Graph g = cnn();
  Outcome o = compiledVsEagerEverywhere(
      g,
      "const-fold,dce,cse,simplify,fuse-patterns,fuse-ops{max-ops=8},layout{block=8},memory-plan");
  QVERIFY2(o.error.empty(), o.error.c_str());
  QCOMPARE(countOps(o.ir, "ConvNCHWc("), 2);
  QCOMPARE(countOps(o.ir, "MaxPoolNCHWc("), 1);
  QCOMPARE(countOps(o.ir, "ToNCHWc("), 1);
  QCOMPARE(countOps(o.ir, "FromNCHWc("), 1);
  // Both Conv + Relu groups kept, the ToNCHWc folded into the first, the
  // FromNCHWc into the GlobalAveragePool's reduction: 4 kernels, as in NCHW.
  QCOMPARE(countOps(o.ir, "fuselens.Fused("), 3);
  QVERIFY2(o.kernels == 4, o.ir.c_str());
  QVERIFY(o.blocked >= 2);
  qInfo("CNN, layout after fuse-ops: %zu kernels, %d tensors compared (%d blocked), max abs %.3g",
        o.kernels, o.compared, o.blocked, o.worst);
}

void CodegenLayoutTest::concatAndSqueezeExciteStayBlocked() {
  Graph g = concatSqueezeExcite();
  Outcome o = compiledVsEagerEverywhere(
      g, "const-fold,cse,simplify,dce,layout{block=8},fuse-ops{max-ops=8}");
  QVERIFY2(o.error.empty(), o.error.c_str());
  QCOMPARE(countOps(o.ir, "ConvNCHWc("), 3);
  QCOMPARE(countOps(o.ir, "ToNCHWc("), 1);    // one region: blocked once at the input...
  QCOMPARE(countOps(o.ir, "FromNCHWc("), 1);  // ...and unblocked once at the output
  // The pool over blocked spatial dims accumulates a vector of the block's
  // channels per pixel (no strided scalar sums)...
  const std::regex columns(
      R"(col\d+\[(i\d+)\] = col\d+\[\1\] \+ \w+\[i\d+ \* 1152 \+ i\d+ \* 96 \+ i\d+ \* 8 \+ \1\];)");
  QVERIFY2(std::regex_search(o.loops, columns), o.loops.c_str());
  // ...and the nest back to NCHW runs rows outermost: one row of blocks per
  // output row, read for every channel while it is in L1.
  const std::regex rowsFirst(
      R"(for \(int64 (i\d+) = 0; \1 < 12; \+\+\1\) \{\n +for \(int64 (i\d+) = 0; \2 < 21;)");
  QVERIFY2(std::regex_search(o.loops, rowsFirst), o.loops.c_str());
  qInfo("concat + squeeze-excite: %zu kernels, %d tensors compared (%d blocked), max abs %.3g",
        o.kernels, o.compared, o.blocked, o.worst);
}

QTEST_APPLESS_MAIN(CodegenLayoutTest)
#include "codegen_layout_test.moc"
