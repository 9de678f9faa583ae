// Schedule primitives: each one's loop IR before/after on a small kernel, the
// numbers unchanged (compiled with the step vs eager), tails, refusals with
// their sentences, compute_at shrinking a temp, and the JSON form of steps.
#include <QtTest>

#include "codegen/compiler.h"
#include "codegen/llvm/llvm_backend.h"
#include "codegen/lower/lower.h"
#include "codegen/schedule/index_simplify.h"
#include "codegen/schedule/schedule.h"
#include "core/eager/interpreter.h"
#include "test_util.h"

using namespace fuselens;
using namespace fuselens::testing;

class CodegenScheduleTest : public QObject {
  Q_OBJECT

 private slots:
  void primitiveText_data();
  void primitiveText();
  void primitiveNumerics_data();
  void primitiveNumerics();
  void refusals_data();
  void refusals();
  void computeAtShrinksTemp();
  void defaultComputeAtRows();
  void inlineElementwiseTemp();
  void indexDivModFollowsRanges();
  void stepsJsonRoundTrip();
  void badStepsAreErrors();
};

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

// y = x + b on [2, 10]: loops i0 (rows), i1 (columns).
Graph addBias(Shape shape = {2, 10}) {
  Graph body;
  ValueId x = body.addInput("x", f32(shape)), b = body.addInput("b", f32({shape.back()}));
  body.addOutput(body.node(body.addNode("Add", {x, b}, {{"y", f32(shape)}})).outputs[0]);
  return wrapInGroup(std::move(body));
}

// y = x - mean(x, rows) on [rows, cols]: a reduction nest fills temp m, the
// next nest reads it per row.
Graph centerRows(int64_t rows, int64_t cols) {
  Graph body;
  ValueId x = body.addInput("x", f32({rows, cols}));
  ValueId axes = body.addConstant("axes", std::make_shared<const TensorData>(TensorData::fromVector(
                                              DType::I64, {1}, std::vector<int64_t>{1})));
  Attributes a;
  a.set("keepdims", int64_t(1));
  ValueId m =
      body.node(body.addNode("ReduceMean", {x, axes}, {{"m", f32({rows, 1})}}, a)).outputs[0];
  ValueId d = body.node(body.addNode("Sub", {x, m}, {{"d", f32({rows, cols})}})).outputs[0];
  ValueId s = body.node(body.addNode("Mul", {d, d}, {{"s", f32({rows, cols})}})).outputs[0];
  ValueId v =
      body.node(body.addNode("ReduceMean", {s, axes}, {{"v", f32({rows, 1})}}, a)).outputs[0];
  body.addOutput(body.node(body.addNode("Div", {d, v}, {{"y", f32({rows, cols})}})).outputs[0]);
  return wrapInGroup(std::move(body));
}

// y = x[4,8] * w[8,6]: below the tiling threshold, a plain nest i0 / i1 / i2.
Graph smallMatMul() {
  Graph body;
  ValueId x = body.addInput("x", f32({4, 8})), w = body.addInput("w", f32({8, 6}));
  body.addOutput(body.node(body.addNode("MatMul", {x, w}, {{"y", f32({4, 6})}})).outputs[0]);
  return wrapInGroup(std::move(body));
}

Graph graphNamed(const std::string& name) {
  if (name == "add") return addBias();
  if (name == "add3x5") return addBias({3, 5});
  if (name == "add2x100") return addBias({2, 100});
  if (name == "center") return centerRows(6, 20);
  return smallMatMul();
}

ScheduleStep step(std::string op, std::string loop, int64_t factor = 0,
                  std::vector<std::string> loops = {}, std::string buffer = "") {
  return {std::move(op), std::move(loop), std::move(loops), factor, std::move(buffer)};
}

Schedule withSteps(std::vector<ScheduleStep> steps, Schedule s = Schedule::serial()) {
  s.steps = std::move(steps);
  return s;
}

Expected<LoopFunc> scheduled(const Graph& g, const Schedule& s) {
  auto f = lowerKernel(g, g.node(g.nodeIds().back()), "k0", s);
  if (!f) return f.status();
  FL_RETURN_IF_ERROR(scheduleKernel(*f, s));
  return f;
}

std::map<std::string, TensorData> inputsFor(const Graph& g) {
  std::map<std::string, TensorData> in;
  uint32_t seed = 1;
  for (ValueId v : g.inputs())
    in[g.value(v).name] = randomTensor(*g.value(v).type.staticShape(), seed++);
  return in;
}

// Largest |compiled - eager| over the outputs; INFINITY with the reason in info.
double vsEager(const Graph& g, const Schedule& s, std::string* info) {
  auto in = inputsFor(g);
  auto eager = runEager(g, in);
  if (!eager) return *info = eager.message(), INFINITY;
  CompileOptions o;
  o.schedule = s;
  o.fallback = false;
  auto m = compileGraph(g, o);
  if (!m) return *info = m.message(), INFINITY;
  auto out = (*m)->run(in);
  if (!out) return *info = out.message(), INFINITY;
  *info = (*m)->loopIrText();
  double worst = 0;
  for (ValueId o2 : g.outputs()) {
    const TensorData* want = eager->find(o2);
    const auto& got = (*out)[o2.index];
    for (int64_t k = 0; k < want->numel(); ++k)
      worst = std::max(worst, double(std::fabs(got->at(k) - want->at(k))));
  }
  return worst;
}

}  // namespace

void CodegenScheduleTest::primitiveText_data() {
  QTest::addColumn<QString>("graph");
  QTest::addColumn<QString>("json");  // the steps, as a schedule's JSON
  QTest::addColumn<QString>("want");
  QTest::newRow("split with tail")
      << "add"
      << R"([{"op":"split","loop":"i1","factor":4}])"
      << "void k0(const float* x /*[2,10]*/, const float* b /*[10]*/, float* y /*[2,10]*/) {\n"
         "  for (int64 i0 = 0; i0 < 2; ++i0) {\n"
         "    for (int64 i1o = 0; i1o < 2; ++i1o) {\n"
         "      for (int64 i1i = 0; i1i < 4; ++i1i) {\n"
         "        y[i0 * 10 + (i1o * 4 + i1i)] = x[i0 * 10 + (i1o * 4 + i1i)] + b[i1o * 4 + i1i];\n"
         "      }\n"
         "    }\n"
         "    for (int64 i1t = 0; i1t < 2; ++i1t) {\n"
         "      y[i0 * 10 + (8 + i1t)] = x[i0 * 10 + (8 + i1t)] + b[8 + i1t];\n"
         "    }\n"
         "  }\n"
         "}\n";
  QTest::newRow("no steps (before)")
      << "add"
      << "[]"
      << "void k0(const float* x /*[2,10]*/, const float* b /*[10]*/, float* y /*[2,10]*/) {\n"
         "  for (int64 i0 = 0; i0 < 2; ++i0) {\n"
         "    for (int64 i1 = 0; i1 < 10; ++i1) {\n"
         "      y[i0 * 10 + i1] = x[i0 * 10 + i1] + b[i1];\n"
         "    }\n"
         "  }\n"
         "}\n";
  QTest::newRow("reorder")
      << "add3x5"
      << R"([{"op":"reorder","loops":["i1","i0"]}])"
      << "void k0(const float* x /*[3,5]*/, const float* b /*[5]*/, float* y /*[3,5]*/) {\n"
         "  for (int64 i1 = 0; i1 < 5; ++i1) {\n"
         "    for (int64 i0 = 0; i0 < 3; ++i0) {\n"
         "      y[i0 * 5 + i1] = x[i0 * 5 + i1] + b[i1];\n"
         "    }\n"
         "  }\n"
         "}\n";
  QTest::newRow("fuse")
      << "add3x5"
      << R"([{"op":"fuse","loops":["i0","i1"]}])"
      << "void k0(const float* x /*[3,5]*/, const float* b /*[5]*/, float* y /*[3,5]*/) {\n"
         "  for (int64 i0_i1 = 0; i0_i1 < 15; ++i0_i1) {\n"
         "    y[i0_i1 / 5 * 5 + i0_i1 % 5] = x[i0_i1 / 5 * 5 + i0_i1 % 5] + b[i0_i1 % 5];\n"
         "  }\n"
         "}\n";
  QTest::newRow("cache_local")
      << "matmul"
      << R"([{"op":"cache_local","buffer":"y","loop":"i0"}])"
      << "void k0(const float* x /*[4,8]*/, const float* w /*[8,6]*/, float* y /*[4,6]*/) {\n"
         "  for (int64 i0 = 0; i0 < 4; ++i0) {\n"
         "    float y_l[6];  // local (registers)\n"
         "    for (int64 i1 = 0; i1 < 6; ++i1) {\n"
         "      float acc0 = 0.0f;\n"
         "      for (int64 i2 = 0; i2 < 8; ++i2) {\n"
         "        acc0 = acc0 + x[i0 * 8 + i2] * w[i2 * 6 + i1];\n"
         "      }\n"
         "      y_l[i1] = acc0;\n"
         "    }\n"
         "    for (int64 y_out = 0; y_out < 6; ++y_out) {  // vectorized\n"
         "      y[i0 * 6 + y_out] = y_l[y_out];\n"
         "    }\n"
         "  }\n"
         "}\n";
}

void CodegenScheduleTest::primitiveText() {
  QFETCH(QString, graph);
  QFETCH(QString, json);
  QFETCH(QString, want);
  auto s = scheduleFromJson(R"({"name":"serial","parallel_outer":false,"vectorize_inner":false,)"
                            R"("reduce_lanes":0,"matmul":{"enabled":false},"steps":)" +
                            json.toStdString() + "}");
  QVERIFY2(s.isOk(), s.message().c_str());
  auto f = scheduled(graphNamed(graph.toStdString()), *s);
  QVERIFY2(f.isOk(), f.message().c_str());
  if (qs(printLoopFunc(*f)) != want) qWarning("%s", printLoopFunc(*f).c_str());
  QCOMPARE(qs(printLoopFunc(*f)), want);
}

void CodegenScheduleTest::primitiveNumerics_data() {
  QTest::addColumn<QString>("graph");
  QTest::addColumn<QString>("steps");
  QTest::addColumn<QString>("mustShow");  // a line of the scheduled loop IR
  auto row = [](const char* name, const char* g, const char* steps, const char* show) {
    QTest::newRow(name) << g << steps << show;
  };
  row("split tail", "add", R"([{"op":"split","loop":"i1","factor":4}])", "i1t < 2");
  row("split exact", "add", R"([{"op":"split","loop":"i1","factor":5}])", "i1i < 5");
  row("split vectorize", "add",
      R"([{"op":"split","loop":"i1","factor":8},{"op":"vectorize","loop":"i1i"}])",
      "i1i < 8; ++i1i) {  // vectorized");
  row("reorder", "add3x5", R"([{"op":"reorder","loops":["i1","i0"]}])",
      "for (int64 i1 = 0; i1 < 5; ++i1) {");
  row("fuse", "add3x5", R"([{"op":"fuse","loops":["i0","i1"]}])", "i0_i1 < 15");
  row("parallel", "add", R"([{"op":"parallel","loop":"i0"}])", "// parallel");
  row("unroll", "add", R"([{"op":"unroll","loop":"i0"}])", "// unrolled");
  row("split unroll", "add",
      R"([{"op":"split","loop":"i1","factor":8},{"op":"split","loop":"i1i","factor":4},)"
      R"({"op":"unroll","loop":"i1io"},{"op":"vectorize","loop":"i1ii"}])",
      "i1io < 2; ++i1io) {  // unrolled");
  row("cache_local output", "matmul", R"([{"op":"cache_local","buffer":"y","loop":"i0"}])",
      "float y_l[6];  // local");
  row("cache_local input", "matmul", R"([{"op":"cache_local","buffer":"x","loop":"i0"}])",
      "x_l[x_in] = x[i0 * 8 + x_in];");
  row("compute_at rows", "center",
      R"([{"op":"compute_at","buffer":"v","loop":"i4"},{"op":"compute_at","buffer":"m","loop":"i4"}])",
      "float m[1];  // local");
  row("compute_at then parallel", "center",
      R"([{"op":"compute_at","buffer":"v","loop":"i4"},{"op":"compute_at","buffer":"m","loop":"i4"},)"
      R"({"op":"parallel","loop":"i4"}])",
      "// parallel");
}

void CodegenScheduleTest::primitiveNumerics() {
  QFETCH(QString, graph);
  QFETCH(QString, steps);
  QFETCH(QString, mustShow);
  Schedule s = Schedule::serial();
  auto parsed = scheduleFromJson(R"({"steps":)" + steps.toStdString() + "}");
  QVERIFY2(parsed.isOk(), parsed.message().c_str());
  s.steps = parsed->steps;
  Graph g = graphNamed(graph.toStdString());
  std::string info;
  double err = vsEager(g, s, &info);
  QVERIFY2(err <= 1e-5, info.c_str());
  QVERIFY2(info.find(mustShow.toStdString()) != std::string::npos, info.c_str());
}

void CodegenScheduleTest::refusals_data() {
  QTest::addColumn<QString>("graph");
  QTest::addColumn<QString>("steps");
  QTest::addColumn<QString>("sentence");
  auto row = [](const char* name, const char* g, const char* steps, const char* why) {
    QTest::newRow(name) << g << steps << why;
  };
  row("no such loop", "add", R"([{"op":"split","loop":"i9","factor":4}])",
      "schedule step split(i9, 4): there is no loop named i9");
  row("split factor", "add", R"([{"op":"split","loop":"i1","factor":10}])",
      "split factor 10 of loop i1 must lie in 2..9 (its extent is 10)");
  row("reorder not one nest", "matmul", R"([{"op":"reorder","loops":["i2","i0"]}])",
      "loops i2..i0 are not one perfect nest");
  row("reorder imperfect", "matmul", R"([{"op":"reorder","loops":["i0","i1","i2"]}])",
      "loops i0..i2 are not perfectly nested: loop i1 holds other statements than the next loop");
  row("vectorize reduction", "matmul", R"([{"op":"vectorize","loop":"i2"}])",
      "loop i2 carries a reduction into acc0, so it cannot be vectorized");
  row("vectorize outer", "add", R"([{"op":"vectorize","loop":"i0"}])",
      "loop i0 is not innermost, so it cannot be vectorized");
  row("parallel reduction", "matmul", R"([{"op":"parallel","loop":"i2"}])",
      "loop i2 carries a reduction into acc0, so it cannot be parallel");
  row("parallel nested", "add", R"([{"op":"parallel","loop":"i0"},{"op":"parallel","loop":"i1"}])",
      "loop i1 lies inside parallel loop i0, so it cannot be parallel");
  row("compose fine", "matmul",
      R"([{"op":"split","loop":"i1","factor":3},{"op":"unroll","loop":"i1o"},)"
      R"({"op":"parallel","loop":"i0"},{"op":"fuse","loops":["i0","i1o"]}])",
      "");  // no tail: i0 holds only i1o, so they fuse
  row("unroll long", "add2x100", R"([{"op":"unroll","loop":"i1"}])",
      "loop i1 has 100 iterations; unroll takes at most 64");
  row("compute_at read elsewhere", "center", R"([{"op":"compute_at","buffer":"m","loop":"i2"}])",
      "temp m is read outside loop i2");
  row("compute_at too deep", "center", R"([{"op":"compute_at","buffer":"v","loop":"i5"}])",
      "the nest writing v has no 2 perfectly nested outer loops to pair with loop i5's");
  row("compute_at not temp", "center", R"([{"op":"compute_at","buffer":"x","loop":"i2"}])",
      "buffer x is not a temp (only temps can move)");
  row("inline a reduction", "center", R"([{"op":"inline","buffer":"m"}])",
      "temp m is not filled by a plain elementwise store");
  row("fuse imperfect", "matmul", R"([{"op":"fuse","loops":["i1","i2"]}])",
      "loop i2 is not the only statement of loop i1, so they cannot be fused");
}

void CodegenScheduleTest::refusals() {
  QFETCH(QString, graph);
  QFETCH(QString, steps);
  QFETCH(QString, sentence);
  auto parsed = scheduleFromJson(R"({"steps":)" + steps.toStdString() + "}");
  QVERIFY2(parsed.isOk(), parsed.message().c_str());
  Schedule s = withSteps(parsed->steps);
  Graph g = graphNamed(graph.toStdString());
  auto f = lowerKernel(g, g.node(g.nodeIds().back()), "k0", s);
  QVERIFY(f.isOk());
  std::string before = printLoopFunc(*f);
  Status r = scheduleKernel(*f, s);
  if (sentence.isEmpty()) {
    QVERIFY2(r.isOk(), r.message().c_str());
    return;
  }
  QVERIFY(!r.isOk());
  QVERIFY2(r.message().find(sentence.toStdString()) != std::string::npos, r.message().c_str());
  QVERIFY(r.message().find("kernel k0") != std::string::npos);
}

void CodegenScheduleTest::computeAtShrinksTemp() {
  Graph g = centerRows(6, 20);
  Schedule s = Schedule::serial();
  s.computeAtRows = false;
  auto before = scheduled(g, s);
  QVERIFY(before.isOk());
  std::string b = printLoopFunc(*before);
  QVERIFY2(b.find("float* m = alloc(6 * sizeof(float));  // temp f32[6,1]") != std::string::npos,
           b.c_str());
  s.steps = {step("compute_at", "i4", 0, {}, "v"), step("compute_at", "i4", 0, {}, "m")};
  auto after = scheduled(g, s);
  QVERIFY2(after.isOk(), after.message().c_str());
  std::string a = printLoopFunc(*after);
  // m and v are now one float per row, filled inside the row loop i4.
  const char* want =
      "void k0(const float* x /*[6,20]*/, float* y /*[6,20]*/) {\n"
      "  for (int64 i4 = 0; i4 < 6; ++i4) {\n"
      "    float m[1];  // local (registers)\n"
      "    float acc0 = 0.0f;\n"
      "    for (int64 i1 = 0; i1 < 20; ++i1) {\n"
      "      acc0 = acc0 + x[i4 * 20 + i1];\n"
      "    }\n"
      "    m[0] = acc0 * 0.05f;\n"
      "    float v[1];  // local (registers)\n"
      "    float acc1 = 0.0f;\n"
      "    for (int64 i3 = 0; i3 < 20; ++i3) {\n"
      "      float e0 = x[i4 * 20 + i3] - m[0];\n"
      "      acc1 = acc1 + e0 * e0;\n"
      "    }\n"
      "    v[0] = acc1 * 0.05f;\n"
      "    for (int64 i5 = 0; i5 < 20; ++i5) {\n"
      "      y[i4 * 20 + i5] = (x[i4 * 20 + i5] - m[0]) / v[0];\n"
      "    }\n"
      "  }\n"
      "}\n";
  if (qs(printLoopFunc(*after)) != QString(want)) qWarning("%s", a.c_str());
  QCOMPARE(qs(printLoopFunc(*after)), QString(want));
  std::string info;
  QVERIFY2(vsEager(g, s, &info) <= 1e-5, info.c_str());
}

void CodegenScheduleTest::defaultComputeAtRows() {
  // The default schedule moves both row statistics into the row loop: no temp
  // is left, and the one row loop is parallel once the work is large enough.
  Graph g = centerRows(512, 256);
  Schedule s = Schedule::defaults();
  auto f = lowerKernel(g, g.node(g.nodeIds().back()), "k0", s);
  QVERIFY(f.isOk());
  std::vector<ScheduleStep> steps = applyDefaultSteps(*f, s);
  std::string text = printLoopFunc(*f);
  QVERIFY2(text.find("alloc(") == std::string::npos, text.c_str());
  int computeAts = 0;
  for (const ScheduleStep& st : steps) computeAts += st.op == "compute_at";
  QVERIFY2(computeAts >= 1, text.c_str());
  QVERIFY2(text.find("// parallel") != std::string::npos, text.c_str());
  std::string info;
  QVERIFY2(vsEager(g, s, &info) <= 1e-4, info.c_str());
  // Off: today's full-size temps.
  s.computeAtRows = false;
  auto f2 = lowerKernel(g, g.node(g.nodeIds().back()), "k0", s);
  QVERIFY(f2.isOk());
  applySchedule(*f2, s);
  QVERIFY(printLoopFunc(*f2).find("alloc(") != std::string::npos);
}

void CodegenScheduleTest::inlineElementwiseTemp() {
  // Built by hand (lowering makes temps only for reductions): t = x * 2 on
  // [3, 4], then y = t + x.
  LoopFunc f;
  f.name = "k0";
  BufferId x = f.addBuffer("x", BufferKind::Input, DType::F32, {3, 4});
  BufferId y = f.addBuffer("y", BufferKind::Output, DType::F32, {3, 4});
  BufferId t = f.addBuffer("t", BufferKind::Temp, DType::F32, {3, 4});
  f.params = {x, y};
  f.numInputs = 1;
  Var i0 = f.addVar("i0", DType::I64), i1 = f.addVar("i1", DType::I64);
  Var i2 = f.addVar("i2", DType::I64);
  ExprRef at = add(mul(varRef(i0), intConst(4)), varRef(i1));
  StmtRef fill = forLoop(
      i0, 3, {forLoop(i1, 4, {store(f.buffer(t), at, mul(load(f.buffer(x), at), floatConst(2)))})});
  StmtRef use = forLoop(i2, 12,
                        {store(f.buffer(y), varRef(i2),
                               add(load(f.buffer(t), varRef(i2)), load(f.buffer(x), varRef(i2))))});
  f.body = allocate(f.buffer(t), {seq({fill, use})});
  Status r = inlineTemp(f, "t");
  QVERIFY2(r.isOk(), r.message().c_str());
  const char* want =
      "void k0(const float* x /*[3,4]*/, float* y /*[3,4]*/) {\n"
      "  for (int64 i2 = 0; i2 < 12; ++i2) {\n"
      "    y[i2] = x[i2 / 4 * 4 + i2 % 4] * 2.0f + x[i2];\n"
      "  }\n"
      "}\n";
  if (qs(printLoopFunc(f)) != QString(want)) qWarning("%s", printLoopFunc(f).c_str());
  QCOMPARE(qs(printLoopFunc(f)), QString(want));
  // Numbers: run the inlined kernel.
  auto jit = JitModule::compile({&f}, 2);
  QVERIFY2(jit.isOk(), jit.message().c_str());
  TensorData xt = randomTensor({3, 4}, 5);
  std::vector<float> out(12);
  void* args[] = {xt.data<float>(), out.data(), nullptr};
  (*jit)->kernel(0)(args);
  std::vector<float> xv = values(xt);
  for (int k = 0; k < 12; ++k) QCOMPARE(out[size_t(k)], xv[size_t(k)] * 2 + xv[size_t(k)]);
  QVERIFY(!inlineTemp(f, "t").isOk());  // no longer a temp
}

void CodegenScheduleTest::stepsJsonRoundTrip() {
  Schedule s = Schedule::defaults();
  s.threads = 1;
  s.computeAtRows = false;
  s.steps = {step("split", "i1", 8), step("reorder", "", 0, {"i1o", "i0"}),
             step("compute_at", "i2", 0, {}, "m"), step("cache_local", "i0", 0, {}, "y")};
  std::string j = s.toJson();
  QVERIFY2(j.find(R"("steps":[{"factor":8,"loop":"i1","op":"split"})") != std::string::npos,
           j.c_str());
  auto back = scheduleFromJson(j);
  QVERIFY2(back.isOk(), back.message().c_str());
  QVERIFY(*back == s);
  // A schedule without the newer fields (an old tuning log) still loads.
  auto old =
      scheduleFromJson(R"({"name":"mr6_nr32","parallel_outer":true,"matmul":{"mr":6,"nr":32}})");
  QVERIFY(old.isOk());
  QVERIFY(old->steps.empty());
  QCOMPARE(old->threads, int64_t(0));
  QVERIFY(Schedule::defaults().toJson().find("steps") == std::string::npos);
}

void CodegenScheduleTest::badStepsAreErrors() {
  auto a = scheduleFromJson(R"({"steps":[{"op":"tile","loop":"i0"}]})");
  QVERIFY(!a.isOk());
  QVERIFY2(a.message().find("unknown schedule step 'tile'") != std::string::npos,
           a.message().c_str());
  auto b = scheduleFromJson(R"({"steps":{"op":"split"}})");
  QVERIFY(!b.isOk());
  QVERIFY(b.message().find("must be a JSON array") != std::string::npos);
  auto c = scheduleFromJson(R"({"threads":3})");
  QVERIFY(!c.isOk());
  // A step that does not apply fails the compile with its sentence.
  Graph g = addBias();
  CompileOptions o;
  o.schedule = withSteps({step("unroll", "i1", 0)});
  o.schedule->steps.push_back(step("split", "i1", 1));
  auto m = compileGraph(g, o);
  QVERIFY(!m.isOk());
  QVERIFY2(m.message().find("split factor 1 of loop i1 must lie in 2..9") != std::string::npos,
           m.message().c_str());
}

QTEST_APPLESS_MAIN(CodegenScheduleTest)
void CodegenScheduleTest::indexDivModFollowsRanges() {
  // A squeeze's flat index after a split loop: e0 = i0*12 + (i1*4 + i2) with
  // i1*4 + i2 < 12, so e0 / 12 is i0 and e0 % 12 is i1*4 + i2. Kept: j / 12
  // over j < 13 (two rows) and (i0 + 11) % 12 (wraps at i0 = 1).
  auto make = [] {
    LoopFunc f;
    f.name = "k0";
    BufferId x = f.addBuffer("x", BufferKind::Input, DType::F32, {48});
    BufferId b = f.addBuffer("b", BufferKind::Input, DType::F32, {4});
    BufferId y = f.addBuffer("y", BufferKind::Output, DType::F32, {48});
    BufferId z = f.addBuffer("z", BufferKind::Output, DType::F32, {13});
    f.params = {x, b, y, z};
    f.numInputs = 2;
    Var i0 = f.addVar("i0", DType::I64), i1 = f.addVar("i1", DType::I64);
    Var i2 = f.addVar("i2", DType::I64), j = f.addVar("j", DType::I64);
    Var e0 = f.addVar("e0", DType::I64);
    ExprRef e = varRef(e0), twelve = intConst(12);
    ExprRef at = add(mul(binary(BinOp::Mod, div(e, twelve), intConst(4)), twelve),
                     binary(BinOp::Mod, e, twelve));
    ExprRef wrap = binary(BinOp::Mod, add(varRef(i0), intConst(11)), twelve);
    StmtRef body = store(f.buffer(y), at,
                         add(add(load(f.buffer(x), e), load(f.buffer(b), div(e, twelve))),
                             load(f.buffer(b), binary(BinOp::Mod, wrap, intConst(4)))));
    ExprRef flat = add(mul(varRef(i0), twelve), add(mul(varRef(i1), intConst(4)), varRef(i2)));
    StmtRef inner = forLoop(i2, 4, {let(e0, flat), body});
    inner->forKind = ForKind::Vectorized;
    StmtRef rows = forLoop(i0, 4, {forLoop(i1, 3, {inner})});
    StmtRef tail =
        forLoop(j, 13, {store(f.buffer(z), varRef(j), load(f.buffer(b), div(varRef(j), twelve)))});
    f.body = seq({rows, tail});
    return f;
  };
  LoopFunc original = make(), f = make();
  QCOMPARE(simplifyIndexDivMod(f), 4);  // e0 / 12 twice, its % 4, e0 % 12
  const QString after = qs(printLoopFunc(f));
  QVERIFY2(after.contains("y[i0 * 12 + (i1 * 4 + i2)] = x[e0] + b[i0] + b[(i0 + 11) % 12 % 4]"),
           qPrintable(after));
  QVERIFY2(after.contains("z[j] = b[j / 12]"), qPrintable(after));
  // Numbers: both forms run to the same outputs.
  auto jitA = JitModule::compile({&original}, 2), jitB = JitModule::compile({&f}, 2);
  QVERIFY2(jitA.isOk() && jitB.isOk(), qPrintable(after));
  TensorData xt = randomTensor({48}, 3), bt = randomTensor({4}, 4);
  std::vector<float> ya(48), yb(48), za(13), zb(13);
  void* argsA[] = {xt.data<float>(), bt.data<float>(), ya.data(), za.data(), nullptr};
  void* argsB[] = {xt.data<float>(), bt.data<float>(), yb.data(), zb.data(), nullptr};
  (*jitA)->kernel(0)(argsA);
  (*jitB)->kernel(0)(argsB);
  QCOMPARE(ya, yb);
  QCOMPARE(za, zb);
}

#include "codegen_schedule_test.moc"
