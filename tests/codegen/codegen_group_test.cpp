// Groups with several anchors (reductions, MatMuls) in one kernel, as a
// pattern-fusion pass forms them: a decomposed softmax, a decomposed
// LayerNorm, and scaled dot-product attention (Q·Kᵀ, scale, mask, softmax, ·V),
// each outlined whole into one Fused node, compiled to ONE kernel and compared
// with the eager interpreter on the unfused graph.
#include <QtTest>

#include "codegen/compiler.h"
#include "core/eager/interpreter.h"
#include "passes/outline_group.h"
#include "test_util.h"

using namespace fuselens;
using namespace fuselens::testing;

namespace {

ValueId i64s(Graph& g, const std::string& name, std::vector<int64_t> v) {
  int64_t n = int64_t(v.size());
  return g.addConstant(
      name, std::make_shared<const TensorData>(TensorData::fromVector(DType::I64, {n}, v)));
}
ValueId scalar(Graph& g, const std::string& name, float v) {
  return g.addConstant(name, std::make_shared<const TensorData>(
                                 TensorData::fromVector(DType::F32, {}, std::vector<float>{v})));
}

struct Builder {
  Graph g;
  int id = 0;
  ValueId op(const char* o, std::vector<ValueId> in, Shape out, Attributes a = {}) {
    std::string n = o + std::to_string(id++);
    return g.node(g.addNode(o, std::move(in), {{n, f32(out)}}, std::move(a), n)).outputs[0];
  }
};

// Outlines every node into one group, compiles (one kernel expected), runs,
// and returns the largest difference from eager on the original graph.
double oneKernelVsEager(Graph g, const std::map<std::string, TensorData>& in, std::string* info,
                        size_t* kernels) {
  g.markAsOriginal();
  auto eager = runEager(g, in);
  if (!eager) return *info = "eager: " + eager.message(), INFINITY;
  Graph fused = g;
  outlineGroup(fused, *fused.topoOrder(), 0, "test");
  CompileOptions opts;
  opts.fallback = false;
  auto m = compileGraph(fused, opts);
  if (!m) return *info = "compile: " + m.message(), INFINITY;
  *kernels = (*m)->kernels().size();
  auto run = (*m)->run(in);
  if (!run) return *info = "run: " + run.message(), INFINITY;
  *info = (*m)->loopIrText();
  double worst = 0;
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    const TensorData* want = eager->find(g.outputs()[i]);
    const auto& got = (*run)[fused.outputs()[i].index];
    if (!want || !got || got->shape != want->shape) return *info = "shape differs", INFINITY;
    for (int64_t k = 0; k < want->numel(); ++k) {
      double d = std::fabs(got->at(k) - want->at(k));
      if (!(d <= worst)) worst = std::isnan(d) ? INFINITY : d;
    }
  }
  return worst;
}

Attributes axisAttr(int64_t a) {
  Attributes at;
  at.set("axis", a);
  return at;
}

}  // namespace

class CodegenGroupTest : public QObject {
  Q_OBJECT

 private slots:
  void decomposedSoftmax();
  void decomposedLayerNorm();
  void attention_data();
  void attention();
};

void CodegenGroupTest::decomposedSoftmax() {
  Shape s{6, 40}, r{6, 1};
  Builder b;
  ValueId x = b.g.addInput("x", f32(s));
  ValueId axes = i64s(b.g, "axes", {-1});
  ValueId mx = b.op("ReduceMax", {x, axes}, r);
  ValueId e = b.op("Exp", {b.op("Sub", {x, mx}, s)}, s);
  ValueId sum = b.op("ReduceSum", {e, axes}, r);
  b.g.addOutput(b.op("Div", {e, sum}, s));
  std::string info;
  size_t kernels = 0;
  double err = oneKernelVsEager(b.g, {{"x", randomTensor(s, 1, -4, 4)}}, &info, &kernels);
  QVERIFY2(err <= 1e-6, info.c_str());
  QCOMPARE(kernels, size_t(1));
}

void CodegenGroupTest::decomposedLayerNorm() {
  Shape s{4, 2, 48}, r{4, 2, 1};
  Builder b;
  ValueId x = b.g.addInput("x", f32(s));
  ValueId axes = i64s(b.g, "axes", {-1});
  ValueId mean = b.op("ReduceMean", {x, axes}, r);
  ValueId d = b.op("Sub", {x, mean}, s);
  ValueId var = b.op("ReduceMean", {b.op("Pow", {d, scalar(b.g, "two", 2)}, s), axes}, r);
  ValueId den = b.op("Sqrt", {b.op("Add", {var, scalar(b.g, "eps", 1e-5f)}, r)}, r);
  ValueId y = b.op("Div", {d, den}, s);
  ValueId gamma =
      b.g.addConstant("gamma", std::make_shared<const TensorData>(randomTensor({48}, 2)));
  ValueId beta = b.g.addConstant("beta", std::make_shared<const TensorData>(randomTensor({48}, 3)));
  b.g.addOutput(b.op("Add", {b.op("Mul", {y, gamma}, s), beta}, s));
  std::string info;
  size_t kernels = 0;
  double err = oneKernelVsEager(b.g, {{"x", randomTensor(s, 4, -2, 5)}}, &info, &kernels);
  QVERIFY2(err <= 1e-5, info.c_str());
  QCOMPARE(kernels, size_t(1));
}

void CodegenGroupTest::attention_data() {
  QTest::addColumn<Shape>("shape");  // [batch, heads, seq, dim]
  QTest::newRow("tiny") << Shape{1, 2, 8, 8};
  QTest::newRow("bert-base head shape") << Shape{1, 12, 128, 64};
}

// softmax(Q·Kᵀ · 1/sqrt(d) + mask) · V, mask broadcast over heads.
void CodegenGroupTest::attention() {
  QFETCH(Shape, shape);
  int64_t seq = shape[2], dim = shape[3];
  Shape scores{shape[0], shape[1], seq, seq};
  Builder b;
  ValueId q = b.g.addInput("q", f32(shape)), k = b.g.addInput("k", f32(shape));
  ValueId v = b.g.addInput("v", f32(shape));
  ValueId mask = b.g.addInput("mask", f32({shape[0], 1, seq, seq}));
  Attributes perm;
  perm.set("perm", std::vector<int64_t>{0, 1, 3, 2});
  ValueId kt = b.op("Transpose", {k}, {shape[0], shape[1], dim, seq}, perm);
  ValueId s = b.op("MatMul", {q, kt}, scores);
  s = b.op("Mul", {s, scalar(b.g, "scale", float(1 / std::sqrt(double(dim))))}, scores);
  s = b.op("Add", {s, mask}, scores);
  ValueId p = b.op("Softmax", {s}, scores, axisAttr(-1));
  b.g.addOutput(b.op("MatMul", {p, v}, shape));
  std::map<std::string, TensorData> in = {
      {"q", randomTensor(shape, 5)},
      {"k", randomTensor(shape, 6)},
      {"v", randomTensor(shape, 7)},
      {"mask", randomTensor({shape[0], 1, seq, seq}, 8, -3, 0)}};
  std::string info;
  size_t kernels = 0;
  double err = oneKernelVsEager(b.g, in, &info, &kernels);
  QVERIFY2(err <= 1e-5, info.substr(0, 4000).c_str());
  QCOMPARE(kernels, size_t(1));
}

QTEST_GUILESS_MAIN(CodegenGroupTest)
#include "codegen_group_test.moc"
