// The tiled MatMul / Gemm template against plain-loop references: odd sizes
// (tails in rows and columns), several register tiles, constant B (packed at
// compile time) and runtime B (packed by a nest), batches with broadcast, Gemm
// transposes and the fused epilogue applied to the register tile. Also the
// schedule's JSON form.
#include <QtTest>

#include "codegen/compiler.h"
#include "codegen/lower/lower.h"
#include "test_util.h"

using namespace fuselens;
using namespace fuselens::testing;

Q_DECLARE_METATYPE(std::vector<int64_t>)

namespace {

double maxError(const std::vector<float>& got, const std::vector<float>& want) {
  if (got.size() != want.size()) return -1;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    double d =
        std::fabs(double(got[i]) - double(want[i])) / std::max(1.0, std::fabs(double(want[i])));
    if (!(d <= worst)) worst = std::isnan(d) ? INFINITY : d;
  }
  return worst;
}

Schedule tiled(int64_t mr, int64_t nr, int64_t nc = 0) {
  Schedule s = Schedule::defaults();
  s.matmul.mr = mr;
  s.matmul.nr = nr;
  s.matmul.ncPanels = nc;
  s.matmul.minWork = 0;
  return s;
}

std::vector<float> run(const Graph& g, const std::map<std::string, TensorData>& in,
                       const Schedule& s, std::string* loopIr = nullptr) {
  CompileOptions o;
  o.schedule = s;
  auto m = compileGraph(g, o);
  if (!m) {
    qWarning("compile failed: %s", m.message().c_str());
    return {};
  }
  if (loopIr) *loopIr = (*m)->loopIrText();
  auto out = (*m)->run(in);
  if (!out) {
    qWarning("run failed: %s", out.message().c_str());
    return {};
  }
  return values(*(*out)[g.outputs()[0].index]);
}

}  // namespace

class CodegenMatMulTest : public QObject {
  Q_OBJECT

 private slots:
  void matmulBiasRelu_data();
  void matmulBiasRelu();
  void batched_data();
  void batched();
  void gemm_data();
  void gemm();
  void residualEpilogue();
  void gemv_data();
  void gemv();
  void tiledLoopIrShape();
  void scheduleJsonRoundTrip();
  void badScheduleJson();
};

void CodegenMatMulTest::matmulBiasRelu_data() {
  QTest::addColumn<int64_t>("M");
  QTest::addColumn<int64_t>("K");
  QTest::addColumn<int64_t>("N");
  QTest::addColumn<int64_t>("mr");
  QTest::addColumn<int64_t>("nr");
  QTest::addColumn<bool>("constB");
  for (bool c : {true, false}) {
    std::string tag = c ? " const B" : " input B";
    QTest::newRow(("2x1x7 6x16" + tag).c_str())
        << int64_t(2) << int64_t(1) << int64_t(7) << int64_t(6) << int64_t(16) << c;
    QTest::newRow(("7x13x65 6x16" + tag).c_str())
        << int64_t(7) << int64_t(13) << int64_t(65) << int64_t(6) << int64_t(16) << c;
    QTest::newRow(("65x33x129 8x32" + tag).c_str())
        << int64_t(65) << int64_t(33) << int64_t(129) << int64_t(8) << int64_t(32) << c;
    QTest::newRow(("129x65x7 4x8" + tag).c_str())
        << int64_t(129) << int64_t(65) << int64_t(7) << int64_t(4) << int64_t(8) << c;
    QTest::newRow(("64x64x64 3x24" + tag).c_str())
        << int64_t(64) << int64_t(64) << int64_t(64) << int64_t(3) << int64_t(24) << c;
  }
}

// y = relu(x @ w + b), tiled with the epilogue on the register tile.
void CodegenMatMulTest::matmulBiasRelu() {
  QFETCH(int64_t, M);
  QFETCH(int64_t, K);
  QFETCH(int64_t, N);
  QFETCH(int64_t, mr);
  QFETCH(int64_t, nr);
  QFETCH(bool, constB);
  Graph body;
  ValueId x = body.addInput("x", f32({M, K})), w = body.addInput("w", f32({K, N}));
  ValueId b = body.addInput("b", f32({N}));
  ValueId mm = body.node(body.addNode("MatMul", {x, w}, {{"mm", f32({M, N})}})).outputs[0];
  ValueId a = body.node(body.addNode("Add", {mm, b}, {{"a", f32({M, N})}})).outputs[0];
  body.addOutput(body.node(body.addNode("Relu", {a}, {{"y", f32({M, N})}})).outputs[0]);
  TensorData xt = randomTensor({M, K}, 1), wt = randomTensor({K, N}, 2), bt = randomTensor({N}, 3);
  std::map<std::string, std::shared_ptr<const TensorData>> consts = {
      {"b", std::make_shared<const TensorData>(bt)}};
  std::map<std::string, TensorData> in = {{"x", xt}};
  if (constB)
    consts["w"] = std::make_shared<const TensorData>(wt);
  else
    in["w"] = wt;
  Graph g = wrapInGroup(std::move(body), consts);
  Shape os;
  auto want = refMatMul(values(xt), {M, K}, values(wt), {K, N}, &os);
  for (int64_t i = 0; i < M * N; ++i)
    want[size_t(i)] = std::max(want[size_t(i)] + values(bt)[size_t(i % N)], 0.0f);
  std::string ir;
  auto got = run(g, in, tiled(mr, nr), &ir);
  QVERIFY2(ir.find("local (registers)") != std::string::npos, ir.c_str());
  QVERIFY2(maxError(got, want) <= 1e-5, ir.c_str());
}

void CodegenMatMulTest::batched_data() {
  QTest::addColumn<Shape>("as");
  QTest::addColumn<Shape>("bs");
  QTest::addColumn<bool>("constB");
  QTest::newRow("3x17x20 @ 20x70 const") << Shape{3, 17, 20} << Shape{20, 70} << true;
  QTest::newRow("3x17x20 @ 3x20x70") << Shape{3, 17, 20} << Shape{3, 20, 70} << false;
  QTest::newRow("2x1x9x31 @ 3x31x45") << Shape{2, 1, 9, 31} << Shape{3, 31, 45} << false;
  QTest::newRow("1x65x40 @ 40x33 const") << Shape{1, 65, 40} << Shape{40, 33} << true;
  QTest::newRow("4x9x8 @ 1x8x129 const") << Shape{4, 9, 8} << Shape{1, 8, 129} << true;
}

void CodegenMatMulTest::batched() {
  QFETCH(Shape, as);
  QFETCH(Shape, bs);
  QFETCH(bool, constB);
  TensorData at = randomTensor(as, 7), bt = randomTensor(bs, 8);
  Shape os;
  auto want = refMatMul(values(at), as, values(bt), bs, &os);
  Graph g;
  ValueId a = g.addInput("a", f32(as));
  ValueId b = constB ? g.addConstant("b", std::make_shared<const TensorData>(bt))
                     : g.addInput("b", f32(bs));
  g.addOutput(g.node(g.addNode("MatMul", {a, b}, {{"y", f32(os)}})).outputs[0]);
  std::map<std::string, TensorData> in = {{"a", at}};
  if (!constB) in["b"] = bt;
  for (auto [mr, nr] : {std::pair<int64_t, int64_t>{4, 16}, {8, 32}}) {
    std::string ir;
    auto got = run(g, in, tiled(mr, nr, 1), &ir);
    QVERIFY2(maxError(got, want) <= 1e-5, ir.c_str());
  }
}

void CodegenMatMulTest::gemm_data() {
  QTest::addColumn<bool>("transA");
  QTest::addColumn<bool>("transB");
  QTest::addColumn<bool>("constB");
  QTest::newRow("plain const") << false << false << true;
  QTest::newRow("transB const") << false << true << true;
  QTest::newRow("transA transB input") << true << true << false;
  QTest::newRow("transA input") << true << false << false;
}

void CodegenMatMulTest::gemm() {
  QFETCH(bool, transA);
  QFETCH(bool, transB);
  QFETCH(bool, constB);
  const int64_t M = 37, K = 29, N = 71;
  const double alpha = 0.5, beta = 2.0;
  Shape as = transA ? Shape{K, M} : Shape{M, K}, bs = transB ? Shape{N, K} : Shape{K, N};
  TensorData at = randomTensor(as, 11), bt = randomTensor(bs, 12), ct = randomTensor({N}, 13);
  Graph g;
  ValueId a = g.addInput("a", f32(as));
  ValueId b = constB ? g.addConstant("b", std::make_shared<const TensorData>(bt))
                     : g.addInput("b", f32(bs));
  ValueId c = g.addConstant("c", std::make_shared<const TensorData>(ct));
  Attributes attrs;
  attrs.set("transA", int64_t(transA));
  attrs.set("transB", int64_t(transB));
  attrs.set("alpha", alpha);
  attrs.set("beta", beta);
  g.addOutput(g.node(g.addNode("Gemm", {a, b, c}, {{"y", f32({M, N})}}, attrs)).outputs[0]);
  std::map<std::string, TensorData> in = {{"a", at}};
  if (!constB) in["b"] = bt;
  auto av = values(at), bv = values(bt), cv = values(ct);
  std::vector<float> want(size_t(M * N));
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k)
        acc += double(av[size_t(transA ? k * M + i : i * K + k)]) *
               double(bv[size_t(transB ? j * K + k : k * N + j)]);
      want[size_t(i * N + j)] = float(alpha * acc + beta * cv[size_t(j)]);
    }
  std::string ir;
  auto got = run(g, in, tiled(6, 16), &ir);
  QVERIFY2(maxError(got, want) <= 1e-5, ir.c_str());
}

// y = (x @ w) + r: the residual is read in the epilogue, no temp.
void CodegenMatMulTest::residualEpilogue() {
  const int64_t M = 33, K = 40, N = 50;
  Graph body;
  ValueId x = body.addInput("x", f32({M, K})), w = body.addInput("w", f32({K, N}));
  ValueId r = body.addInput("r", f32({M, N}));
  ValueId mm = body.node(body.addNode("MatMul", {x, w}, {{"mm", f32({M, N})}})).outputs[0];
  ValueId t = body.node(body.addNode("Tanh", {mm}, {{"t", f32({M, N})}})).outputs[0];
  body.addOutput(body.node(body.addNode("Add", {t, r}, {{"y", f32({M, N})}})).outputs[0]);
  TensorData xt = randomTensor({M, K}, 21), wt = randomTensor({K, N}, 22),
             rt = randomTensor({M, N}, 23);
  Graph g = wrapInGroup(std::move(body), {{"w", std::make_shared<const TensorData>(wt)}});
  Shape os;
  auto want = refMatMul(values(xt), {M, K}, values(wt), {K, N}, &os);
  for (int64_t i = 0; i < M * N; ++i)
    want[size_t(i)] = std::tanh(want[size_t(i)]) + values(rt)[size_t(i)];
  std::string ir;
  auto got = run(g, {{"x", xt}, {"r", rt}}, tiled(8, 32), &ir);
  QVERIFY2(ir.find("alloc(") == std::string::npos, ir.c_str());
  QVERIFY2(maxError(got, want) <= 1e-5, ir.c_str());
}

void CodegenMatMulTest::gemv_data() {
  QTest::addColumn<bool>("gemm");
  QTest::addColumn<int64_t>("K");
  QTest::addColumn<int64_t>("N");
  QTest::addColumn<int64_t>("nr");
  QTest::addColumn<bool>("constB");
  // nr 32: M = 1 doubles it to 64 columns a tile; N = 1000 leaves a 40-wide
  // tail panel, N = 37 one panel narrower than the tile, N = 129 a 1-wide tail.
  QTest::newRow("Gemm transB 1x256x1000 head")
      << true << int64_t(256) << int64_t(1000) << int64_t(32) << true;
  QTest::newRow("Gemm transB 1x7x37") << true << int64_t(7) << int64_t(37) << int64_t(32) << true;
  QTest::newRow("MatMul 1x33x129 nr16")
      << false << int64_t(33) << int64_t(129) << int64_t(16) << true;
  QTest::newRow("MatMul 1x40x70 input B (plain nest)")
      << false << int64_t(40) << int64_t(70) << int64_t(32) << false;
}

// M = 1 (a classifier head): y = relu(x @ w' + b) through the 1 x 2nr tile
// when w is constant, with the bias and Relu applied on the register tile.
void CodegenMatMulTest::gemv() {
  QFETCH(bool, gemm);
  QFETCH(int64_t, K);
  QFETCH(int64_t, N);
  QFETCH(int64_t, nr);
  QFETCH(bool, constB);
  Shape ws = gemm ? Shape{N, K} : Shape{K, N};  // Gemm: transB
  TensorData xt = randomTensor({1, K}, 31), wt = randomTensor(ws, 32), bt = randomTensor({N}, 33);
  Graph body;
  ValueId x = body.addInput("x", f32({1, K})), w = body.addInput("w", f32(ws));
  ValueId b = body.addInput("b", f32({N}));
  ValueId mm;
  if (gemm) {
    Attributes attrs;
    attrs.set("transB", int64_t(1));
    mm = body.node(body.addNode("Gemm", {x, w, b}, {{"mm", f32({1, N})}}, attrs)).outputs[0];
  } else {
    ValueId p = body.node(body.addNode("MatMul", {x, w}, {{"p", f32({1, N})}})).outputs[0];
    mm = body.node(body.addNode("Add", {p, b}, {{"mm", f32({1, N})}})).outputs[0];
  }
  body.addOutput(body.node(body.addNode("Relu", {mm}, {{"y", f32({1, N})}})).outputs[0]);
  std::map<std::string, std::shared_ptr<const TensorData>> consts = {
      {"b", std::make_shared<const TensorData>(bt)}};
  std::map<std::string, TensorData> in = {{"x", xt}};
  if (constB)
    consts["w"] = std::make_shared<const TensorData>(wt);
  else
    in["w"] = wt;
  Graph g = wrapInGroup(std::move(body), consts);
  auto xv = values(xt), wv = values(wt), bv = values(bt);
  std::vector<float> want(static_cast<size_t>(N));
  for (int64_t j = 0; j < N; ++j) {
    double acc = 0;
    for (int64_t k = 0; k < K; ++k)
      acc += double(xv[size_t(k)]) * double(wv[size_t(gemm ? j * K + k : k * N + j)]);
    want[size_t(j)] = std::max(float(acc + bv[size_t(j)]), 0.0f);
  }
  std::string ir;
  auto got = run(g, in, tiled(8, nr), &ir);
  // A run-time B is not packed for a single row: the plain nest reads it in place.
  QVERIFY2((ir.find("local (registers)") != std::string::npos) == constB, ir.c_str());
  QVERIFY2(maxError(got, want) <= 1e-5, ir.c_str());
}

// The tiled nest as the loop IR prints it: a local tile, fma, vectorized and
// unrolled register loops, a parallel block loop.
void CodegenMatMulTest::tiledLoopIrShape() {
  Graph g;
  ValueId x = g.addInput("x", f32({64, 64}));
  ValueId w = g.addConstant("w", std::make_shared<const TensorData>(randomTensor({64, 256}, 1)));
  g.addOutput(g.node(g.addNode("MatMul", {x, w}, {{"y", f32({64, 256})}})).outputs[0]);
  auto f = lowerKernel(g, g.node(g.nodeIds()[0]), "k0", tiled(8, 32, 1));
  QVERIFY(f.isOk());
  applySchedule(*f, tiled(8, 32, 1));
  std::string text = printLoopFunc(*f);
  QVERIFY2(text.find("float acc") != std::string::npos, text.c_str());
  QVERIFY2(text.find("fma(x[") != std::string::npos, text.c_str());
  QVERIFY2(text.find("// vectorized") != std::string::npos, text.c_str());
  QVERIFY2(text.find("// unrolled") != std::string::npos, text.c_str());
  QVERIFY2(text.find("// parallel") != std::string::npos, text.c_str());
  QCOMPARE(f->prepacked.size(), size_t(1));  // w, packed at compile time
  QCOMPARE(f->numInputs, size_t(3));         // x, w (unread), packed w
}

void CodegenMatMulTest::scheduleJsonRoundTrip() {
  Schedule s = tiled(6, 16, 3);
  s.name = "tuned";
  s.matmul.rowsOuter = true;
  s.parallelMinWork = 77;
  auto back = scheduleFromJson(s.toJson());
  QVERIFY(back.isOk());
  QVERIFY(*back == s);
  auto partial = scheduleFromJson(R"({"matmul": {"mr": 4}})");
  QVERIFY(partial.isOk());
  QCOMPARE(partial->matmul.mr, int64_t(4));
  QCOMPARE(partial->matmul.nr, Schedule().matmul.nr);
}

void CodegenMatMulTest::badScheduleJson() {
  QCOMPARE(scheduleFromJson("[1,2]").message(), std::string("a schedule must be a JSON object"));
  QCOMPARE(scheduleFromJson(R"({"matmul": {"mr": 0}})").message(),
           std::string("matmul tile 0x32 is outside 1..32 x 1..64"));
  QVERIFY(!scheduleFromJson(R"({"matmul": {"mr": "x"}})").isOk());
}

QTEST_APPLESS_MAIN(CodegenMatMulTest)
#include "codegen_matmul_test.moc"
