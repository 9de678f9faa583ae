// End-to-end codegen tests: build graphs with the Graph API, compile them
// through lowering, the LLVM JIT and the CPU executor, run them on seeded
// inputs, and compare with plain-loop references computed in the test itself.
#include <xmmintrin.h>

#include <QtTest>
#include <limits>

#include "codegen/compiler.h"
#include "test_util.h"

using namespace fuselens;
using namespace fuselens::testing;

Q_DECLARE_METATYPE(std::vector<int64_t>)

namespace {

constexpr float kTol = 1e-5f;

// Max relative-or-absolute error of got vs want; -1 on a size mismatch.
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

struct Run {
  std::unique_ptr<CompiledModule> module;
  std::vector<std::optional<TensorData>> tensors;
};

Run compileAndRun(const Graph& g, const std::map<std::string, TensorData>& inputs, int opt = 3) {
  Run r;
  auto m = compileGraph(g, CompileOptions{opt});
  if (!m) {
    qWarning("compile failed: %s", m.message().c_str());
    return r;
  }
  auto out = (*m)->run(inputs);
  if (!out) {
    qWarning("run failed: %s", out.message().c_str());
    return r;
  }
  r.module = std::move(*m);
  r.tensors = std::move(*out);
  return r;
}

std::vector<float> outputOf(const Run& r, const Graph& g, size_t i = 0) {
  if (!r.module || !r.tensors[g.outputs()[i].index]) return {};
  return values(*r.tensors[g.outputs()[i].index]);
}

int countOf(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

std::shared_ptr<const TensorData> constant(const Shape& s, uint32_t seed) {
  return std::make_shared<const TensorData>(randomTensor(s, seed));
}

}  // namespace

class CodegenCompileTest : public QObject {
  Q_OBJECT

 private slots:
  void elementwiseChainFused_data();
  void elementwiseChainFused();
  void matmulBiasReluFused();
  void gemm_data();
  void gemm();
  void batchedMatMul_data();
  void batchedMatMul();
  void softmax_data();
  void softmax();
  void softmaxWithPrologueAndEpilogue();
  void diamondChainStaysLinear();
  void constantInsideBody();
  void transposeReshapeInGroup();
  void matmulFeedingSoftmaxMaterializes();
  void multiKernelGraphWithAlias();
  void singleOpKernels();
  void parallelLargeKernels();
  void optLevelsAgree();
  void tanhTailsAreExactAndRaiseNoUnderflow();
  void expAndSigmoidAcrossTheRange();
  void streamsOfLargeBuffersArePrefetched();
  void unsupportedOpIsAnError();
  void dynamicShapeIsAnError();
  void badInputsAreErrors();
  void cancelStopsTheRun();
};

void CodegenCompileTest::elementwiseChainFused_data() {
  QTest::addColumn<Shape>("xShape");
  QTest::addColumn<Shape>("yShape");
  QTest::newRow("same shape") << Shape{4, 8} << Shape{4, 8};
  QTest::newRow("row broadcast") << Shape{4, 8} << Shape{8};
  QTest::newRow("column broadcast") << Shape{3, 4, 5} << Shape{4, 1};
  QTest::newRow("scalar operand") << Shape{2, 3, 4} << Shape{};
  QTest::newRow("both broadcast") << Shape{3, 1} << Shape{1, 5};
}

// out = tanh(sigmoid((x + y) * x - y) / 2) ... as one loop nest.
void CodegenCompileTest::elementwiseChainFused() {
  QFETCH(Shape, xShape);
  QFETCH(Shape, yShape);
  Shape o = broadcastShape(xShape, yShape);
  Graph body;
  ValueId x = body.addInput("x", f32(xShape)), y = body.addInput("y", f32(yShape));
  auto node = [&](const char* op, std::vector<ValueId> in, const char* name) {
    return body.node(body.addNode(op, in, {{name, f32(o)}})).outputs[0];
  };
  ValueId two = body.addConstant("two", std::make_shared<const TensorData>(TensorData::fromVector(
                                            DType::F32, {}, std::vector<float>{2})));
  ValueId a = node("Add", {x, y}, "a");
  ValueId m = node("Mul", {a, x}, "m");
  ValueId s = node("Sub", {m, y}, "s");
  ValueId sg = node("Sigmoid", {s}, "sg");
  ValueId d = node("Div", {sg, two}, "d");
  ValueId e = node("Exp", {d}, "e");
  ValueId r = node("Relu", {node("Sub", {e, y}, "e2")}, "r");
  body.addOutput(node("Tanh", {r}, "out"));
  Graph g = wrapInGroup(std::move(body));

  TensorData xt = randomTensor(xShape, 1), yt = randomTensor(yShape, 2);
  auto xv = values(xt), yv = values(yt);
  std::vector<float> want(size_t(numel(o)));
  for (int64_t i = 0; i < numel(o); ++i) {
    double xs = bcastAt(xv, xShape, o, i), ys = bcastAt(yv, yShape, o, i);
    double t = (xs + ys) * xs - ys;
    double sig = 1 / (1 + std::exp(-t));
    want[size_t(i)] = float(std::tanh(std::max(std::exp(sig / 2) - ys, 0.0)));
  }
  Run run = compileAndRun(g, {{"x", xt}, {"y", yt}});
  QVERIFY(run.module);
  QCOMPARE(run.module->kernels().size(), size_t(1));
  QCOMPARE(run.module->kernels()[0].name, std::string("k0_fused_add_mul_sub_sigmoid_div_exp_etc"));
  std::string ir = run.module->loopIrText();
  QCOMPARE(countOf(ir, "] = "), 1);  // one store: the whole chain is one expression
  QCOMPARE(countOf(ir, "alloc("), 0);
  QVERIFY2(maxError(outputOf(run, g), want) <= kTol, ir.c_str());
}

void CodegenCompileTest::matmulBiasReluFused() {
  Graph body;
  ValueId x = body.addInput("x", f32({8, 32}));
  ValueId w = body.addInput("w", f32({32, 16}));
  ValueId b = body.addInput("b", f32({16}));
  ValueId mm =
      body.node(body.addNode("MatMul", {x, w}, {{"mm", f32({8, 16})}}, {}, "fc")).outputs[0];
  ValueId a = body.node(body.addNode("Add", {mm, b}, {{"a", f32({8, 16})}})).outputs[0];
  body.addOutput(body.node(body.addNode("Relu", {a}, {{"y", f32({8, 16})}})).outputs[0]);
  auto wt = constant({32, 16}, 3), bt = constant({16}, 4);
  Graph g = wrapInGroup(std::move(body), {{"w", wt}, {"b", bt}});

  TensorData xt = randomTensor({8, 32}, 5);
  Shape os;
  auto want = refMatMul(values(xt), {8, 32}, values(*wt), {32, 16}, &os);
  for (int64_t i = 0; i < 8 * 16; ++i)
    want[size_t(i)] = std::max(want[size_t(i)] + values(*bt)[size_t(i % 16)], 0.0f);
  Run run = compileAndRun(g, {{"x", xt}});
  QVERIFY(run.module);
  QCOMPARE(run.module->kernels()[0].name, std::string("k0_fused_matmul_add_relu"));
  std::string ir = run.module->loopIrText();
  QCOMPARE(countOf(ir, "alloc("), 0);  // the epilogue works on the accumulator
  QVERIFY2(ir.find("y[i0 * 16 + i1] = max(acc0 + b[i1], 0.0f);") != std::string::npos, ir.c_str());
  QVERIFY2(maxError(outputOf(run, g), want) <= kTol, ir.c_str());
  // Functions are named by their key; a comment maps kernel names to them.
  std::string llvmIr = run.module->llvmIrText();
  QVERIFY(llvmIr.find("; k0_fused_matmul_add_relu -> @fl_") != std::string::npos);
  QVERIFY(llvmIr.find("define void @fl_") != std::string::npos);
}

void CodegenCompileTest::gemm_data() {
  QTest::addColumn<bool>("transA");
  QTest::addColumn<bool>("transB");
  QTest::addColumn<double>("alpha");
  QTest::addColumn<double>("beta");
  QTest::addColumn<Shape>("cShape");  // {-1}: no C
  QTest::newRow("plain, C [M,N]") << false << false << 1.0 << 1.0 << Shape{5, 7};
  QTest::newRow("transB, alpha/beta, C [N]") << false << true << 0.5 << 2.0 << Shape{7};
  QTest::newRow("transA transB, C [1]") << true << true << -1.5 << 0.25 << Shape{1};
  QTest::newRow("transA, C [M,1]") << true << false << 1.0 << 1.0 << Shape{5, 1};
  QTest::newRow("no C") << false << true << 2.0 << 1.0 << Shape{-1};
}

void CodegenCompileTest::gemm() {
  QFETCH(bool, transA);
  QFETCH(bool, transB);
  QFETCH(double, alpha);
  QFETCH(double, beta);
  QFETCH(Shape, cShape);
  const int64_t M = 5, K = 6, N = 7;
  bool hasC = cShape != Shape{-1};
  Shape as = transA ? Shape{K, M} : Shape{M, K}, bs = transB ? Shape{N, K} : Shape{K, N};
  Graph g;
  ValueId a = g.addInput("a", f32(as));
  auto bt = constant(bs, 11);
  ValueId b = g.addConstant("b", bt);
  std::vector<ValueId> ins = {a, b};
  TensorData ct = hasC ? randomTensor(cShape, 12) : TensorData();
  if (hasC) ins.push_back(g.addInput("c", f32(cShape)));
  Attributes at;
  at.set("transA", int64_t(transA));
  at.set("transB", int64_t(transB));
  at.set("alpha", alpha);
  at.set("beta", beta);
  g.addOutput(g.node(g.addNode("Gemm", ins, {{"y", f32({M, N})}}, at, "gemm")).outputs[0]);

  TensorData atd = randomTensor(as, 13);
  auto av = values(atd), bv = values(*bt), cv = hasC ? values(ct) : std::vector<float>{};
  std::vector<float> want(size_t(M * N));
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < K; ++p)
        acc += double(av[size_t(transA ? p * M + i : i * K + p)]) *
               double(bv[size_t(transB ? j * K + p : p * N + j)]);
      double c = hasC ? bcastAt(cv, cShape, {M, N}, i * N + j) : 0;
      want[size_t(i * N + j)] = float(alpha * acc + beta * c);
    }
  std::map<std::string, TensorData> inputs = {{"a", atd}};
  if (hasC) inputs["c"] = ct;
  Run run = compileAndRun(g, inputs);
  QVERIFY(run.module);
  QCOMPARE(run.module->kernels()[0].name, std::string("k0_gemm"));
  QVERIFY2(maxError(outputOf(run, g), want) <= kTol, run.module->loopIrText().c_str());
}

void CodegenCompileTest::batchedMatMul_data() {
  QTest::addColumn<Shape>("aShape");
  QTest::addColumn<Shape>("bShape");
  QTest::newRow("batch x 2-D") << Shape{3, 4, 5} << Shape{5, 6};
  QTest::newRow("broadcast batch") << Shape{2, 1, 4, 5} << Shape{3, 5, 6};
  QTest::newRow("equal batch") << Shape{2, 3, 4} << Shape{2, 4, 2};
  QTest::newRow("1-D x batch") << Shape{5} << Shape{2, 5, 6};
  QTest::newRow("batch x 1-D") << Shape{3, 4, 5} << Shape{5};
  QTest::newRow("1-D x 1-D") << Shape{7} << Shape{7};
}

void CodegenCompileTest::batchedMatMul() {
  QFETCH(Shape, aShape);
  QFETCH(Shape, bShape);
  TensorData at = randomTensor(aShape, 21), bt = randomTensor(bShape, 22);
  Shape os;
  auto want = refMatMul(values(at), aShape, values(bt), bShape, &os);
  Graph g;
  ValueId a = g.addInput("a", f32(aShape)), b = g.addInput("b", f32(bShape));
  g.addOutput(g.node(g.addNode("MatMul", {a, b}, {{"y", f32(os)}}, {}, "mm")).outputs[0]);
  Run run = compileAndRun(g, {{"a", at}, {"b", bt}});
  QVERIFY(run.module);
  QCOMPARE(run.tensors[g.outputs()[0].index]->shape, os);
  QVERIFY2(maxError(outputOf(run, g), want) <= kTol, run.module->loopIrText().c_str());
}

void CodegenCompileTest::softmax_data() {
  QTest::addColumn<Shape>("shape");
  QTest::addColumn<int>("axis");
  QTest::newRow("last axis (default)") << Shape{3, 7} << -1;
  QTest::newRow("axis 0 of 2-D") << Shape{5, 4} << 0;
  QTest::newRow("middle axis") << Shape{2, 3, 4} << 1;
  QTest::newRow("negative non-last") << Shape{2, 3, 4} << -3;
  QTest::newRow("large logits") << Shape{4, 16} << 1;
  // Lane-parallel max/sum (reduceLanes) with and without a tail.
  QTest::newRow("lanes with tail") << Shape{3, 37} << -1;
  QTest::newRow("long rows") << Shape{2, 1000} << 1;
}

void CodegenCompileTest::softmax() {
  QFETCH(Shape, shape);
  QFETCH(int, axis);
  Graph g;
  ValueId x = g.addInput("x", f32(shape));
  Attributes at;
  if (axis != -1) at.set("axis", int64_t(axis));
  g.addOutput(g.node(g.addNode("Softmax", {x}, {{"y", f32(shape)}}, at, "sm")).outputs[0]);
  bool large = QByteArray(QTest::currentDataTag()) == "large logits";
  TensorData xt = randomTensor(shape, 31, large ? 50.f : -3.f, large ? 120.f : 3.f);
  auto want = refSoftmax(values(xt), shape, axis);
  Run run = compileAndRun(g, {{"x", xt}});
  QVERIFY(run.module);
  QVERIFY2(maxError(outputOf(run, g), want) <= kTol, run.module->loopIrText().c_str());
}

// y = Softmax(x * s) + x: the scale is inlined into all three passes, the Add
// applied to the normalized value before the store.
void CodegenCompileTest::softmaxWithPrologueAndEpilogue() {
  Shape s{6, 10};
  Graph body;
  ValueId x = body.addInput("x", f32(s)), sc = body.addInput("scale", f32({1}));
  ValueId m = body.node(body.addNode("Mul", {x, sc}, {{"m", f32(s)}})).outputs[0];
  ValueId sm = body.node(body.addNode("Softmax", {m}, {{"sm", f32(s)}})).outputs[0];
  body.addOutput(body.node(body.addNode("Add", {sm, x}, {{"y", f32(s)}})).outputs[0]);
  Graph g = wrapInGroup(std::move(body));
  TensorData xt = randomTensor(s, 41),
             st = TensorData::fromVector(DType::F32, {1}, std::vector<float>{0.7f});
  auto xv = values(xt), scaled = xv;
  for (float& v : scaled) v *= 0.7f;
  auto want = refSoftmax(scaled, s, -1);
  for (size_t i = 0; i < want.size(); ++i) want[i] += xv[i];
  Run run = compileAndRun(g, {{"x", xt}, {"scale", st}});
  QVERIFY(run.module);
  std::string ir = run.module->loopIrText();
  QCOMPARE(countOf(ir, "alloc("), 0);
  QCOMPARE(countOf(ir, "] = "), 1);
  QVERIFY2(maxError(outputOf(run, g), want) <= kTol, ir.c_str());
}

// 40 chained SiLUs (x * sigmoid(x)) each read their input twice: inlined as a
// tree that would be 2^40 nodes; shared subexpressions become locals instead.
void CodegenCompileTest::diamondChainStaysLinear() {
  Graph body;
  ValueId x = body.addInput("x", f32({3, 5}));
  for (int k = 0; k < 40; ++k) {
    ValueId s = body.node(body.addNode("Sigmoid", {x}, {{"s" + std::to_string(k), f32({3, 5})}}))
                    .outputs[0];
    x = body.node(body.addNode("Mul", {x, s}, {{"m" + std::to_string(k), f32({3, 5})}})).outputs[0];
  }
  body.addOutput(x);
  Graph g = wrapInGroup(std::move(body));
  TensorData xt = randomTensor({3, 5}, 111, -4, 4);
  std::vector<float> want = values(xt);
  for (float& v : want)
    for (int k = 0; k < 40; ++k) v = v * float(1 / (1 + std::exp(-double(v))));
  Run run = compileAndRun(g, {{"x", xt}});
  QVERIFY(run.module);
  std::string ir = run.module->loopIrText();
  QVERIFY2(ir.size() < 8000, ir.c_str());
  QCOMPARE(countOf(ir, "float e"), 39);  // one local per shared level; level 0 reads a load
  QVERIFY2(maxError(outputOf(run, g), want) <= 1e-4, ir.c_str());
}

// Constants the body holds itself: a vector is embedded in the module, a scalar inlined.
void CodegenCompileTest::constantInsideBody() {
  Graph body;
  ValueId x = body.addInput("x", f32({2, 4}));
  auto scale = constant({4}, 121);
  ValueId c = body.addConstant("scale", scale);
  ValueId half = body.addConstant("half", std::make_shared<const TensorData>(TensorData::fromVector(
                                              DType::F32, {1}, std::vector<float>{0.5f})));
  ValueId m = body.node(body.addNode("Mul", {x, c}, {{"m", f32({2, 4})}})).outputs[0];
  body.addOutput(body.node(body.addNode("Add", {m, half}, {{"y", f32({2, 4})}})).outputs[0]);
  Graph g = wrapInGroup(std::move(body));
  TensorData xt = randomTensor({2, 4}, 122);
  std::vector<float> want = values(xt);
  for (size_t i = 0; i < 8; ++i) want[i] = want[i] * values(*scale)[i % 4] + 0.5f;
  Run run = compileAndRun(g, {{"x", xt}});
  QVERIFY(run.module);
  std::string ir = run.module->loopIrText();
  QVERIFY2(ir.find("static const float scale[4]") != std::string::npos, ir.c_str());
  QVERIFY2(ir.find("+ 0.5f") != std::string::npos, ir.c_str());
  QVERIFY2(maxError(outputOf(run, g), want) <= kTol, ir.c_str());
}

// Transpose and Reshape inside a group are index maps: no buffer, one store.
void CodegenCompileTest::transposeReshapeInGroup() {
  Graph body;
  ValueId x = body.addInput("x", f32({2, 3, 4}));
  ValueId bias = body.addInput("bias", f32({4}));
  ValueId shape = body.addInput("shape", TensorType::of(DType::I64, {2}));
  Attributes perm;
  perm.set("perm", std::vector<int64_t>{1, 0, 2});
  ValueId t = body.node(body.addNode("Transpose", {x}, {{"t", f32({3, 2, 4})}}, perm)).outputs[0];
  ValueId r = body.node(body.addNode("Reshape", {t, shape}, {{"r", f32({6, 4})}})).outputs[0];
  ValueId a = body.node(body.addNode("Add", {r, bias}, {{"a", f32({6, 4})}})).outputs[0];
  ValueId t2 = body.node(body.addNode("Transpose", {a}, {{"t2", f32({4, 6})}})).outputs[0];
  body.addOutput(body.node(body.addNode("Relu", {t2}, {{"y", f32({4, 6})}})).outputs[0]);
  auto shapeData = std::make_shared<const TensorData>(
      TensorData::fromVector(DType::I64, {2}, std::vector<int64_t>{6, 4}));
  Graph g = wrapInGroup(std::move(body), {{"shape", shapeData}});

  TensorData xt = randomTensor({2, 3, 4}, 51), bt = randomTensor({4}, 52);
  auto xv = values(xt), bv = values(bt);
  std::vector<float> want(24);
  for (int64_t j = 0; j < 4; ++j)      // y[j][i] = relu(r[i][j] + bias[j])
    for (int64_t i = 0; i < 6; ++i) {  // r[i][j] = t[i/2][i%2][j] = x[i%2][i/2][j]
      float rv = xv[size_t(((i % 2) * 3 + i / 2) * 4 + j)];
      want[size_t(j * 6 + i)] = std::max(rv + bv[size_t(j)], 0.0f);
    }
  Run run = compileAndRun(g, {{"x", xt}, {"bias", bt}});
  QVERIFY(run.module);
  std::string ir = run.module->loopIrText();
  QCOMPARE(countOf(ir, "alloc("), 0);
  QCOMPARE(countOf(ir, "] = "), 1);
  QVERIFY2(maxError(outputOf(run, g), want) <= kTol, ir.c_str());
}

// A MatMul read by a Softmax at other positions than its own must be stored:
// a temp inside the same function, then the softmax with a Relu epilogue.
void CodegenCompileTest::matmulFeedingSoftmaxMaterializes() {
  Graph body;
  ValueId x = body.addInput("x", f32({4, 8})), w = body.addInput("w", f32({8, 5}));
  ValueId mm = body.node(body.addNode("MatMul", {x, w}, {{"mm", f32({4, 5})}})).outputs[0];
  ValueId sm = body.node(body.addNode("Softmax", {mm}, {{"sm", f32({4, 5})}})).outputs[0];
  body.addOutput(body.node(body.addNode("Tanh", {sm}, {{"y", f32({4, 5})}})).outputs[0]);
  body.addOutput(mm);  // also a group output: stored in place of a temp
  Graph g = wrapInGroup(std::move(body));
  TensorData xt = randomTensor({4, 8}, 61), wt = randomTensor({8, 5}, 62);
  Shape os;
  auto mmRef = refMatMul(values(xt), {4, 8}, values(wt), {8, 5}, &os);
  auto want = refSoftmax(mmRef, {4, 5}, -1);
  for (float& v : want) v = std::tanh(v);
  Run run = compileAndRun(g, {{"x", xt}, {"w", wt}});
  QVERIFY(run.module);
  std::string ir = run.module->loopIrText();
  QCOMPARE(countOf(ir, "alloc("), 0);
  QVERIFY2(maxError(outputOf(run, g, 0), want) <= kTol, ir.c_str());
  QVERIFY(maxError(outputOf(run, g, 1), mmRef) <= kTol);

  // The same without the second output: now the MatMul needs a temp.
  Graph body2;
  x = body2.addInput("x", f32({4, 8}));
  w = body2.addInput("w", f32({8, 5}));
  mm = body2.node(body2.addNode("MatMul", {x, w}, {{"mm", f32({4, 5})}})).outputs[0];
  body2.addOutput(body2.node(body2.addNode("Softmax", {mm}, {{"y", f32({4, 5})}})).outputs[0]);
  Graph g2 = wrapInGroup(std::move(body2));
  Run run2 = compileAndRun(g2, {{"x", xt}, {"w", wt}});
  QVERIFY(run2.module);
  QCOMPARE(countOf(run2.module->loopIrText(), "alloc("), 1);
  QVERIFY(maxError(outputOf(run2, g2), refSoftmax(mmRef, {4, 5}, -1)) <= kTol);
}

// MatMul kernel -> Reshape alias -> fused Add+Relu group; every boundary tensor comes back.
void CodegenCompileTest::multiKernelGraphWithAlias() {
  Graph g;
  ValueId x = g.addInput("x", f32({2, 6}));
  auto wt = constant({6, 4}, 71);
  ValueId w = g.addConstant("w", wt);
  ValueId mm = g.node(g.addNode("MatMul", {x, w}, {{"mm", f32({2, 4})}}, {}, "mm")).outputs[0];
  auto shapeData = std::make_shared<const TensorData>(
      TensorData::fromVector(DType::I64, {1}, std::vector<int64_t>{8}));
  ValueId shp = g.addConstant("shape", shapeData);
  ValueId flat = g.node(g.addNode("Reshape", {mm, shp}, {{"flat", f32({8})}}, {}, "rs")).outputs[0];
  ValueId bias = g.addInput("bias", f32({8}));
  Graph body;
  ValueId bf = body.addInput("f", f32({8})), bb = body.addInput("b", f32({8}));
  ValueId ba = body.node(body.addNode("Add", {bf, bb}, {{"a", f32({8})}})).outputs[0];
  body.addOutput(body.node(body.addNode("Relu", {ba}, {{"r", f32({8})}})).outputs[0]);
  Attributes at;
  at.set("group", int64_t(1));
  at.set("kind", std::string("ElemWise"));
  NodeId fused = g.addNode(kFusedOp, {flat, bias}, {{"y", f32({8})}}, at, "group1");
  g.mutableNode(fused).domain = kFuseLensDomain;
  g.mutableNode(fused).body = std::make_shared<const Graph>(std::move(body));
  ValueId y = g.node(fused).outputs[0];
  g.addOutput(y);

  TensorData xt = randomTensor({2, 6}, 72), bt = randomTensor({8}, 73);
  Shape os;
  auto mmRef = refMatMul(values(xt), {2, 6}, values(*wt), {6, 4}, &os);
  std::vector<float> want(8);
  for (size_t i = 0; i < 8; ++i) want[i] = std::max(mmRef[i] + values(bt)[i], 0.0f);
  Run run = compileAndRun(g, {{"x", xt}, {"bias", bt}});
  QVERIFY(run.module);
  const auto& ks = run.module->kernels();
  QCOMPARE(ks.size(), size_t(2));
  QCOMPARE(ks[0].name, std::string("k0_matmul"));
  QCOMPARE(ks[1].name, std::string("k1_fused_add_relu"));
  QCOMPARE(ks[1].inputs, (std::vector<ValueId>{flat, bias}));
  QVERIFY(run.tensors[x.index] && run.tensors[mm.index] && run.tensors[flat.index]);
  QCOMPARE(run.tensors[flat.index]->shape, Shape{8});
  QVERIFY(maxError(values(*run.tensors[mm.index]), mmRef) <= kTol);
  QVERIFY(maxError(values(*run.tensors[flat.index]), mmRef) <= kTol);
  QVERIFY(maxError(values(*run.tensors[y.index]), want) <= kTol);
}

// Each supported op alone is a kernel of its own.
void CodegenCompileTest::singleOpKernels() {
  Shape s{3, 5};
  TensorData at = randomTensor(s, 81), bt = randomTensor({5}, 82);
  auto av = values(at), bv = values(bt);
  struct Case {
    const char* op;
    bool binary;
    std::function<float(float, float)> f;
  };
  std::vector<Case> cases = {
      {"Add", true, [](float a, float b) { return a + b; }},
      {"Sub", true, [](float a, float b) { return a - b; }},
      {"Mul", true, [](float a, float b) { return a * b; }},
      {"Div", true, [](float a, float b) { return a / b; }},
      {"Relu", false, [](float a, float) { return std::max(a, 0.0f); }},
      {"Sigmoid", false, [](float a, float) { return float(1 / (1 + std::exp(-double(a)))); }},
      {"Tanh", false, [](float a, float) { return std::tanh(a); }},
      {"Exp", false, [](float a, float) { return std::exp(a); }},
      {"Identity", false, [](float a, float) { return a; }},
  };
  for (const Case& c : cases) {
    Graph g;
    ValueId a = g.addInput("a", f32(s)), b = g.addInput("b", f32({5}));
    std::vector<ValueId> ins = {a};
    if (c.binary) ins.push_back(b);
    g.addOutput(g.node(g.addNode(c.op, ins, {{"y", f32(s)}}, {}, c.op)).outputs[0]);
    std::vector<float> want(15);
    for (size_t i = 0; i < 15; ++i) want[i] = c.f(av[i], bv[i % 5]);
    std::map<std::string, TensorData> inputs = {{"a", at}, {"b", bt}};
    Run run = compileAndRun(g, inputs);
    QVERIFY2(run.module, c.op);
    QVERIFY2(maxError(outputOf(run, g), want) <= kTol, c.op);
  }
}

// Big enough for the default schedule's parallel loops; checks the thread pool path.
void CodegenCompileTest::parallelLargeKernels() {
  const int64_t M = 192, K = 96,
                N = 80;  // enough multiply-adds for the tiled MatMul to go parallel
  Graph body;
  ValueId x = body.addInput("x", f32({M, K})), w = body.addInput("w", f32({K, N}));
  ValueId mm = body.node(body.addNode("MatMul", {x, w}, {{"mm", f32({M, N})}})).outputs[0];
  body.addOutput(body.node(body.addNode("Sigmoid", {mm}, {{"y", f32({M, N})}})).outputs[0]);
  Graph g = wrapInGroup(std::move(body));
  TensorData xt = randomTensor({M, K}, 91), wt = randomTensor({K, N}, 92);
  Shape os;
  auto want = refMatMul(values(xt), {M, K}, values(wt), {K, N}, &os);
  for (float& v : want) v = float(1 / (1 + std::exp(-double(v))));
  Run run = compileAndRun(g, {{"x", xt}, {"w", wt}});
  QVERIFY(run.module);
  std::string ir = run.module->loopIrText();
  QVERIFY2(ir.find("// parallel") != std::string::npos, ir.c_str());
  QVERIFY(run.module->llvmIrText().find("fuselens_parallel_for") != std::string::npos);
  for (int rep = 0; rep < 3; ++rep) {
    auto out = run.module->run({{"x", xt}, {"w", wt}});
    QVERIFY(out);
    QVERIFY(maxError(values(*(*out)[g.outputs()[0].index]), want) <= kTol);
  }

  Graph e;
  ValueId a = e.addInput("a", f32({256, 300}));
  e.addOutput(e.node(e.addNode("Tanh", {a}, {{"y", f32({256, 300})}})).outputs[0]);
  TensorData at = randomTensor({256, 300}, 93);
  std::vector<float> wantE = values(at);
  for (float& v : wantE) v = std::tanh(v);
  Run runE = compileAndRun(e, {{"a", at}});
  QVERIFY(runE.module);
  QVERIFY(runE.module->loopIrText().find("// parallel") != std::string::npos);
  QVERIFY(runE.module->loopIrText().find("// vectorized") != std::string::npos);
  QVERIFY(maxError(outputOf(runE, e), wantE) <= kTol);
}

void CodegenCompileTest::optLevelsAgree() {
  Graph body;
  ValueId x = body.addInput("x", f32({5, 9}));
  ValueId sm = body.node(body.addNode("Softmax", {x}, {{"sm", f32({5, 9})}})).outputs[0];
  body.addOutput(body.node(body.addNode("Exp", {sm}, {{"y", f32({5, 9})}})).outputs[0]);
  Graph g = wrapInGroup(std::move(body));
  TensorData xt = randomTensor({5, 9}, 101);
  std::vector<float> want = refSoftmax(values(xt), {5, 9}, -1);
  for (float& v : want) v = std::exp(v);
  for (int opt : {0, 1, 2, 3}) {
    Run run = compileAndRun(g, {{"x", xt}}, opt);
    QVERIFY(run.module);
    QVERIFY2(maxError(outputOf(run, g), want) <= kTol, std::to_string(opt).c_str());
  }
}

void CodegenCompileTest::tanhTailsAreExactAndRaiseNoUnderflow() {
  // Around |x| = 44 the 1 - 2 / (e^2|x| + 1) form made a subnormal quotient
  // (an assist per vector); capped, every tail is exactly +-1, and NaN and
  // the infinities keep their meaning. 64 values: four full vectors.
  std::vector<float> xs = {0.0f,   -0.0f,  1e-6f, 0.3f,  0.62f, 0.63f, 1.0f,  -2.5f, 9.0f,
                           9.5f,   17.0f,  20.0f, 21.0f, 30.0f, 43.9f, 44.0f, 44.2f, -44.1f,
                           44.05f, 44.15f, 60.0f, 88.0f, 89.0f, 1e4f,  3e38f, -3e38f};
  xs.push_back(std::numeric_limits<float>::infinity());
  xs.push_back(-std::numeric_limits<float>::infinity());
  xs.push_back(std::numeric_limits<float>::quiet_NaN());
  while (xs.size() < 64) xs.push_back(float(xs.size()) * 1.7f - 50.0f);
  const int64_t n = int64_t(xs.size());
  Graph g;
  ValueId a = g.addInput("a", f32({n}));
  g.addOutput(g.node(g.addNode("Tanh", {a}, {{"y", f32({n})}})).outputs[0]);
  TensorData at = TensorData::fromVector(DType::F32, {n}, xs);
  // Compiled afresh: the loop IR is the same with or without the cap, so a
  // cached object from another build could stand in for today's emitter.
  qputenv("FUSELENS_CACHE", "0");
  auto restore = qScopeGuard([] { qunsetenv("FUSELENS_CACHE"); });
  _mm_setcsr(_mm_getcsr() & ~0x3fu);  // clear the sticky exception flags
  Run run = compileAndRun(g, {{"a", at}});
  QVERIFY(run.module);
  std::vector<float> y = outputOf(run, g);
  for (size_t i = 0; i < xs.size(); ++i) {
    const float want = std::tanh(xs[i]);
    if (std::isnan(want)) {
      QVERIFY2(std::isnan(y[i]), std::to_string(xs[i]).c_str());
    } else if (std::fabs(xs[i]) >= 9.0f) {
      QCOMPARE(y[i], want);  // +-1 exactly
    } else {
      QVERIFY2(std::fabs(y[i] - want) <= 2e-7f * std::max(1.0f, std::fabs(want)),
               std::to_string(xs[i]).c_str());
    }
  }
  // No lane underflowed (MXCSR UE) on the way; the run was on this thread.
  run = compileAndRun(g, {{"a", at}});
  _mm_setcsr(_mm_getcsr() & ~0x3fu);
  QVERIFY(run.module->run({{"a", at}}));
  QCOMPARE(_mm_getcsr() & 0x10u, 0u);
}

// Exp and Sigmoid on a dense sweep past both ends of f32's range: about 1 ulp
// wherever the result is a normal number, +inf above 88.72 (and finite just
// below it), 0 rather than a subnormal at the bottom, NaN and the infinities
// kept, and no lane raising MXCSR's underflow flag (an assist per vector;
// inputs under 1e-19 are left out, their r * r underflows by rights).
void CodegenCompileTest::expAndSigmoidAcrossTheRange() {
  std::vector<float> xs;
  for (double v = -105.0; v <= 100.0; v += 0.00125) xs.push_back(float(v));
  for (float v : {88.72f, 88.7228f, 88.7229f, 88.5f, 88.376f, 88.3763f, -86.99f, -87.0f, -87.33f,
                  -87.34f, -88.0f, -103.98f, 0.0f, -0.0f, 3e38f, -3e38f})
    xs.push_back(v);
  xs.push_back(std::numeric_limits<float>::infinity());
  xs.push_back(-std::numeric_limits<float>::infinity());
  xs.push_back(std::numeric_limits<float>::quiet_NaN());
  const int64_t n = int64_t(xs.size());
  const TensorData at = TensorData::fromVector(DType::F32, {n}, xs);
  qputenv("FUSELENS_CACHE", "0");  // today's emitter, not a cached object
  auto restore = qScopeGuard([] { qunsetenv("FUSELENS_CACHE"); });
  for (const char* op : {"Exp", "Sigmoid"}) {
    const bool isExp = std::string(op) == "Exp";
    Graph g;
    ValueId a = g.addInput("a", f32({n}));
    g.addOutput(g.node(g.addNode(op, {a}, {{"y", f32({n})}})).outputs[0]);
    Run run = compileAndRun(g, {{"a", at}});
    QVERIFY(run.module);
    _mm_setcsr(_mm_getcsr() & ~0x3fu);
    auto out = run.module->run({{"a", at}});
    QVERIFY(out);
    QCOMPARE(_mm_getcsr() & 0x10u, 0u);  // no underflow on this thread
    const std::vector<float> y = outputOf(run, g);
    for (size_t i = 0; i < xs.size(); ++i) {
      const double x = xs[i];
      const double want = isExp ? std::exp(x) : 1 / (1 + std::exp(-x));
      const std::string at = std::string(op) + "(" + std::to_string(x) +
                             ") = " + std::to_string(y[i]) + ", want " + std::to_string(want);
      if (std::isnan(x)) {
        QVERIFY2(std::isnan(y[i]), at.c_str());
      } else if (want > std::numeric_limits<float>::max()) {
        QVERIFY2(y[i] == std::numeric_limits<float>::infinity(), at.c_str());
      } else if (want < 1.8e-38) {  // 0 or, near 2^-125, the normal value
        QVERIFY2(y[i] == 0.0f || std::fabs(y[i] - want) <= 2.5e-7 * want, at.c_str());
      } else {
        QVERIFY2(std::fabs(y[i] - want) <= 2.5e-7 * want, at.c_str());
      }
    }
  }
}

// A long vectorized loop over a 2 MiB input prefetches ahead (and still
// computes the same values, the chunked loop and its tail included); the same
// kernel over a small input, which stays in cache, does not.
void CodegenCompileTest::streamsOfLargeBuffersArePrefetched() {
  // x * sigmoid(x) over [rows, cols], checked against its f64 value; the IR.
  auto silu = [](const Shape& s, uint64_t seed) {
    Graph g;
    ValueId x = g.addInput("x", f32(s));
    ValueId sg = g.node(g.addNode("Sigmoid", {x}, {{"sg", f32(s)}})).outputs[0];
    g.addOutput(g.node(g.addNode("Mul", {sg, x}, {{"y", f32(s)}})).outputs[0]);
    const TensorData xt = randomTensor(s, seed);
    std::vector<float> want = values(xt);
    for (float& v : want) v = float(v / (1 + std::exp(-double(v))));
    Run run = compileAndRun(g, {{"x", xt}});
    if (!run.module) return std::string("no module");
    if (maxError(outputOf(run, g), want) > kTol) return std::string("wrong values");
    return run.module->llvmIrText();
  };
  for (int64_t rows : {int64_t(520), int64_t(4)}) {
    // 1000 = 15 chunks of 64 and a tail of 40
    const std::string ir = silu({rows, 1000}, 7);
    QVERIFY2(ir.find("define") != std::string::npos, ir.c_str());
    QCOMPARE(ir.find("llvm.prefetch") != std::string::npos, rows == 520);
  }
  // Whole chunks run as explicit vectors: no run-time overlap check of x and
  // y (LLVM's vectorizer adds one, and a kernel running in place, y over x,
  // failed it and took the scalar loop).
  const std::string ir = silu({520, 1024}, 8);
  QVERIFY2(ir.find("llvm.prefetch") != std::string::npos, ir.c_str());
  QVERIFY2(ir.find("memcheck") == std::string::npos && ir.find("diff.check") == std::string::npos,
           ir.c_str());
}

void CodegenCompileTest::unsupportedOpIsAnError() {
  Graph body;
  ValueId x = body.addInput("x", f32({1, 3, 8, 8})), w = body.addInput("w", f32({3, 4, 3, 3}));
  // Hardmax has neither code generation nor an eager kernel, so not even the
  // reference fallback can stand in.
  ValueId c = body.node(body.addNode("Hardmax", {x, w}, {{"c", f32({1, 4, 10, 10})}}, {}, "hm1"))
                  .outputs[0];
  body.addOutput(body.node(body.addNode("Relu", {c}, {{"y", f32({1, 4, 10, 10})}})).outputs[0]);
  Graph g = wrapInGroup(std::move(body));
  auto m = compileGraph(g, {});
  QVERIFY(!m);
  QCOMPARE(m.message(), std::string("node 'hm1' (Hardmax): no code generation for op Hardmax"));

  // With the fallback off, the lowering's sentence is the error.
  Graph top;
  ValueId a = top.addInput("a", f32({4}));
  top.addOutput(top.node(top.addNode("Hardmax", {a}, {{"f", f32({4})}}, {}, "hm")).outputs[0]);
  CompileOptions strict;
  strict.fallback = false;
  auto m2 = compileGraph(top, strict);
  QVERIFY(!m2);
  QCOMPARE(m2.message(), std::string("node 'hm' (Hardmax): no code generation for op Hardmax"));

  // Shapes that do not multiply are a sentence too, not a crash.
  Graph bad;
  ValueId p = bad.addInput("p", f32({2, 3})), q = bad.addInput("q", f32({4, 5}));
  bad.addOutput(bad.node(bad.addNode("MatMul", {p, q}, {{"r", f32({2, 5})}}, {}, "mm")).outputs[0]);
  auto m3 = compileGraph(bad, {});
  QVERIFY(!m3);
  QVERIFY2(m3.message().find("do not multiply") != std::string::npos, m3.message().c_str());
}

void CodegenCompileTest::dynamicShapeIsAnError() {
  Graph g;
  TensorType dyn;
  dyn.shape = {Dim::named("seq"), Dim::fixed(4)};
  ValueId x = g.addInput("x", dyn);
  g.addOutput(g.node(g.addNode("Relu", {x}, {{"y", dyn}}, {}, "r")).outputs[0]);
  auto m = compileGraph(g, {});
  QVERIFY(!m);
  QVERIFY2(m.message().find("static shapes") != std::string::npos, m.message().c_str());
  QVERIFY2(m.message().find("f32[seq,4]") != std::string::npos, m.message().c_str());
}

void CodegenCompileTest::badInputsAreErrors() {
  Graph g;
  ValueId x = g.addInput("x", f32({2, 3}));
  g.addOutput(g.node(g.addNode("Relu", {x}, {{"y", f32({2, 3})}}, {}, "r")).outputs[0]);
  auto m = compileGraph(g, {});
  QVERIFY(m);
  auto missing = (*m)->run({});
  QVERIFY(!missing);
  QCOMPARE(missing.message(), std::string("input 'x' (f32[2,3]) is missing"));
  auto shape = (*m)->run({{"x", randomTensor({3, 2}, 1)}});
  QVERIFY(!shape);
  QCOMPARE(shape.message(), std::string("input 'x' has shape [3,2]; the graph expects f32[2,3]"));
  auto dtype = (*m)->run({{"x", TensorData(DType::F64, {2, 3})}});
  QVERIFY(!dtype);
  QCOMPARE(dtype.message(), std::string("input 'x' is f64; the graph expects f32"));
  auto extra = (*m)->run({{"x", randomTensor({2, 3}, 1)}, {"z", randomTensor({1}, 1)}});
  QVERIFY(!extra);
  QCOMPARE(extra.message(), std::string("there is no graph input named 'z'; the inputs are x"));
}

void CodegenCompileTest::cancelStopsTheRun() {
  Graph g;
  ValueId x = g.addInput("x", f32({4}));
  ValueId a = g.node(g.addNode("Relu", {x}, {{"a", f32({4})}}, {}, "r")).outputs[0];
  g.addOutput(g.node(g.addNode("Exp", {a}, {{"y", f32({4})}}, {}, "e")).outputs[0]);
  std::vector<double> fractions;
  auto m = compileGraph(g, {}, [&](double f, const std::string&) { fractions.push_back(f); });
  QVERIFY(m);
  QVERIFY(fractions.size() >= 3);
  QVERIFY(std::is_sorted(fractions.begin(), fractions.end()));
  QCOMPARE(fractions.back(), 1.0);
  CancelToken cancel;
  cancel.cancel();
  auto out = (*m)->run({{"x", randomTensor({4}, 1)}}, cancel);
  QVERIFY(!out);
  QVERIFY2(out.message().find("cancelled") != std::string::npos, out.message().c_str());
  auto comp = compileGraph(g, {}, {}, cancel);
  QVERIFY(!comp);
  QVERIFY(comp.message().find("cancelled") != std::string::npos);
}

QTEST_APPLESS_MAIN(CodegenCompileTest)
#include "codegen_compile_test.moc"
