// Reductions over any axes (lane-parallel when the last axis is reduced),
// LayerNormalization, the newer elementwise ops, and a decomposed LayerNorm
// and a GELU MLP fused by the real pipeline, checked against the eager
// interpreter (the independent reference) or plain loops written here.
#include <QtTest>
#include <set>

#include "../core/fixture_util.h"
#include "codegen/compiler.h"
#include "core/eager/interpreter.h"
#include "core/onnx/import.h"
#include "core/ops/op_util.h"
#include "eager_check.h"
#include "passes/pass_manager.h"
#include "test_util.h"

using namespace fuselens;
using namespace fuselens::testing;

Q_DECLARE_METATYPE(std::vector<int64_t>)

namespace {

// The shape a Reduce* over `axes` (all when empty) leaves, keepdims or not.
Shape reducedShape(const Shape& shape, const Shape& axes, bool keep) {
  Shape out;
  std::set<int64_t> ax;
  for (int64_t k : axes) ax.insert(k < 0 ? k + int64_t(shape.size()) : k);
  for (size_t k = 0; k < shape.size(); ++k) {
    if (!axes.empty() && !ax.count(int64_t(k)))
      out.push_back(shape[k]);
    else if (keep)
      out.push_back(1);
  }
  return out;
}

double againstEager(const Graph& g, const std::map<std::string, TensorData>& in,
                    const std::string& pipeline, std::string* info) {
  return fuselens::test::compiledVsEager(g, in, pipeline, info);
}

ValueId i64Const(Graph& g, const std::string& name, std::vector<int64_t> v) {
  int64_t n = int64_t(v.size());
  return g.addConstant(
      name, std::make_shared<const TensorData>(TensorData::fromVector(DType::I64, {n}, v)));
}

ValueId f32Const(Graph& g, const std::string& name, float v) {
  return g.addConstant(name, std::make_shared<const TensorData>(
                                 TensorData::fromVector(DType::F32, {}, std::vector<float>{v})));
}

}  // namespace

class CodegenReduceTest : public QObject {
  Q_OBJECT

 private slots:
  void reduce_data();
  void reduce();
  void intReduce_data();
  void intReduce();
  void intEdgesMatchOnnxRuntimeExactly_data();
  void intEdgesMatchOnnxRuntimeExactly();
  void layerNorm_data();
  void layerNorm();
  void elementwiseOps_data();
  void elementwiseOps();
  void decomposedLayerNormFuses();
  void unsupportedPowIsAnError();
  void variadicClipAndShapeOps();
};

void CodegenReduceTest::reduce_data() {
  QTest::addColumn<QString>("op");
  QTest::addColumn<Shape>("shape");
  QTest::addColumn<Shape>("axes");  // {}: all
  QTest::addColumn<bool>("keep");
  QTest::newRow("sum last, lanes + tail") << "ReduceSum" << Shape{3, 37} << Shape{-1} << true;
  QTest::newRow("mean last, no keep") << "ReduceMean" << Shape{4, 100} << Shape{1} << false;
  QTest::newRow("max first") << "ReduceMax" << Shape{5, 6} << Shape{0} << true;
  QTest::newRow("min middle") << "ReduceMin" << Shape{2, 7, 3} << Shape{1} << false;
  QTest::newRow("sum two axes incl last") << "ReduceSum" << Shape{2, 5, 40} << Shape{0, 2} << true;
  QTest::newRow("mean all") << "ReduceMean" << Shape{3, 4, 5} << Shape{} << false;
  QTest::newRow("max short row") << "ReduceMax" << Shape{8, 5} << Shape{-1} << true;
  QTest::newRow("l2 last") << "ReduceL2" << Shape{3, 50} << Shape{-1} << false;
  QTest::newRow("l1 first") << "ReduceL1" << Shape{4, 6} << Shape{0} << true;
  QTest::newRow("prod middle") << "ReduceProd" << Shape{2, 3, 4} << Shape{1} << true;
  QTest::newRow("sum square all") << "ReduceSumSquare" << Shape{3, 20} << Shape{} << true;
  // The last axis kept: reduced positions outside, a tile of columns as the vector.
  QTest::newRow("mean over NCHWc spatial")
      << "ReduceMean" << Shape{1, 2, 7, 9, 16} << Shape{2, 3} << true;
  QTest::newRow("mean over sequence, no keep")
      << "ReduceMean" << Shape{2, 5, 24} << Shape{1} << false;
  QTest::newRow("l2 columns") << "ReduceL2" << Shape{6, 2, 10} << Shape{0, 1} << false;
  QTest::newRow("max columns in tiles of 8") << "ReduceMax" << Shape{3, 4, 600} << Shape{0} << true;
  QTest::newRow("mean columns in tiles of 256")
      << "ReduceMean" << Shape{2, 3, 768} << Shape{1} << false;
  QTest::newRow("sum columns, prime width") << "ReduceSum" << Shape{3, 2, 263} << Shape{0} << true;
}

void CodegenReduceTest::reduce() {
  QFETCH(QString, op);
  QFETCH(Shape, shape);
  QFETCH(Shape, axes);
  QFETCH(bool, keep);
  Graph g;
  ValueId x = g.addInput("x", f32(shape));
  std::vector<ValueId> ins = {x};
  if (!axes.empty()) ins.push_back(i64Const(g, "axes", axes));
  Attributes a;
  a.set("keepdims", int64_t(keep));
  const Shape out = reducedShape(shape, axes, keep);
  g.addOutput(g.node(g.addNode(op.toStdString(), ins, {{"y", f32(out)}}, a)).outputs[0]);
  g.markAsOriginal();
  std::string info;
  double err = againstEager(g, {{"x", randomTensor(shape, 3)}}, "", &info);
  QVERIFY2(err <= 1e-5, info.c_str());
}

// Integer Max/Min compare in i64, Sum/Prod add in f64 and saturate, as eager
// (and ONNX Runtime) do; compiled must equal eager exactly. The data mixes
// small values with the dtype's extremes (Max/Min), or keeps to small values
// (Sum/Prod).
void CodegenReduceTest::intReduce_data() {
  QTest::addColumn<QString>("op");
  QTest::addColumn<int>("dtype");
  QTest::addColumn<Shape>("shape");
  QTest::addColumn<Shape>("axes");  // {}: all
  QTest::addColumn<bool>("keep");
  // data 0: small values, 1: with extremes, 2: near the i32 max, 3: all
  // negative, 4: all positive (so a 0 initial value would show in Max / Min)
  QTest::addColumn<int>("data");
  for (DType t : {DType::I32, DType::I64}) {
    QString tn = QString::fromStdString(std::string(dtypeName(t)));
    int ti = int(t);
    QTest::newRow(qPrintable(tn + " max last, lanes + tail"))
        << "ReduceMax" << ti << Shape{3, 37} << Shape{-1} << true << 1;
    QTest::newRow(qPrintable(tn + " max first, no keep"))
        << "ReduceMax" << ti << Shape{5, 6} << Shape{0} << false << 1;
    QTest::newRow(qPrintable(tn + " min middle"))
        << "ReduceMin" << ti << Shape{2, 7, 3} << Shape{1} << true << 1;
    QTest::newRow(qPrintable(tn + " min all, no keep"))
        << "ReduceMin" << ti << Shape{3, 4, 5} << Shape{} << false << 1;
    QTest::newRow(qPrintable(tn + " sum two axes incl last"))
        << "ReduceSum" << ti << Shape{2, 5, 40} << Shape{0, 2} << true << 0;
    QTest::newRow(qPrintable(tn + " sum first, no keep"))
        << "ReduceSum" << ti << Shape{4, 6} << Shape{0} << false << 0;
    QTest::newRow(qPrintable(tn + " prod middle"))
        << "ReduceProd" << ti << Shape{2, 3, 4} << Shape{1} << true << 0;
    QTest::newRow(qPrintable(tn + " max all negative"))
        << "ReduceMax" << ti << Shape{4, 9} << Shape{-1} << false << 3;
    QTest::newRow(qPrintable(tn + " min all positive"))
        << "ReduceMin" << ti << Shape{4, 9} << Shape{0, 1} << true << 4;
    QTest::newRow(qPrintable(tn + " prod last, no keep"))
        << "ReduceProd" << ti << Shape{3, 18} << Shape{-1} << false << 0;
  }
  // Eager stores the f64 sum saturated: 2 * INT32_MAX must not wrap.
  QTest::newRow("i32 sum saturates")
      << "ReduceSum" << int(DType::I32) << Shape{2, 3} << Shape{1} << false << 2;
}

void CodegenReduceTest::intReduce() {
  QFETCH(QString, op);
  QFETCH(int, dtype);
  QFETCH(Shape, shape);
  QFETCH(Shape, axes);
  QFETCH(bool, keep);
  QFETCH(int, data);
  DType t = DType(dtype);
  Graph g;
  ValueId x = g.addInput("x", TensorType::of(t, shape));
  std::vector<ValueId> ins = {x};
  if (!axes.empty()) ins.push_back(i64Const(g, "axes", axes));
  Attributes a;
  a.set("keepdims", int64_t(keep));
  const Shape out = reducedShape(shape, axes, keep);
  g.addOutput(
      g.node(g.addNode(op.toStdString(), ins, {{"y", TensorType::of(t, out)}}, a)).outputs[0]);
  g.markAsOriginal();
  TensorData in(t, shape);
  int64_t lo = t == DType::I32 ? INT32_MIN : INT64_MIN,
          hi = t == DType::I32 ? INT32_MAX : INT64_MAX;
  for (int64_t i = 0; i < in.numel(); ++i) {
    int64_t v = (i * 7 + 3) % 5 - 2;  // -2..2
    if (data == 1 && i % 11 == 4) v = i % 2 ? hi : lo;
    if (data == 1 && i % 13 == 6) v = 1000 * i - 50000;
    if (data == 2) v = hi - i;
    if (data == 3) v = -3 - v;
    if (data == 4) v = 3 + v;
    if (t == DType::I32)
      in.data<int32_t>()[i] = int32_t(v);
    else
      in.data<int64_t>()[i] = v;
  }
  std::string info;
  double err = againstEager(g, {{"x", in}}, "", &info);
  QVERIFY2(err == 0, info.c_str());
}

// The integer edges of tests/fixtures (i64 past 2^53, sums and products that
// overflow, CumSum that wraps): eager and the compiled code both equal ONNX
// Runtime bit for bit. (The fixture tests compare through double, which cannot
// tell 2^60 from 2^60 + 1.)
void CodegenReduceTest::intEdgesMatchOnnxRuntimeExactly_data() {
  QTest::addColumn<QString>("name");
  for (const char* n :
       {"reduce_max_i64_big", "reduce_min_i64_big", "reduce_sum_i64_big", "reduce_sum_i64_overflow",
        "reduce_sum_i32_overflow", "reduce_prod_i64_overflow", "reduce_argmax_i64_big",
        "reduce_argmin_i64_big", "reduce_topk_i64_big", "reduce_cumsum_i64_wrap",
        "reduce_cumsum_i32_wrap"})
    QTest::newRow(n) << QString(n);
}

void CodegenReduceTest::intEdgesMatchOnnxRuntimeExactly() {
  QFETCH(QString, name);
  auto dir = fuselens::test::fixturesDir() / name.toStdString();
  auto m = importOnnxFile((dir / "model.onnx").string());
  QVERIFY2(m.isOk(), m.message().c_str());
  std::string err;
  auto inputs = fuselens::test::loadNpys(dir, "input_", err);
  auto refs = fuselens::test::loadNpys(dir, "output_", err);
  QVERIFY2(err.empty() && !refs.empty(), err.c_str());
  auto eager = runEager(m->graph, inputs);
  QVERIFY2(eager.isOk(), eager.message().c_str());
  auto mod = compileGraph(m->graph, CompileOptions{});
  QVERIFY2(mod.isOk(), mod.message().c_str());
  auto run = (*mod)->run(inputs);
  QVERIFY2(run.isOk(), run.message().c_str());
  for (const auto& [out, ref] : refs) {
    auto v = m->graph.findValue(out);
    QVERIFY(v);
    const TensorData* e = eager->find(*v);
    QVERIFY(e && size_t(v->index) < run->size() && (*run)[v->index]);
    const TensorData& c = *(*run)[v->index];
    for (const TensorData* got : {e, &c}) {
      const char* who = got == e ? "eager" : "compiled";
      QVERIFY2(got->dtype == ref.dtype && got->shape == ref.shape, who);
      for (int64_t i = 0; i < ref.numel(); ++i)
        QVERIFY2(ops::loadI(*got, i) == ops::loadI(ref, i),
                 (std::string(who) + " " + out + "[" + std::to_string(i) +
                  "] = " + std::to_string(ops::loadI(*got, i)) + ", ONNX Runtime " +
                  std::to_string(ops::loadI(ref, i)))
                     .c_str());
    }
  }
}

void CodegenReduceTest::layerNorm_data() {
  QTest::addColumn<Shape>("shape");
  QTest::addColumn<int>("axis");
  QTest::addColumn<bool>("bias");
  QTest::newRow("rows of 768") << Shape{4, 768} << -1 << true;
  QTest::newRow("odd row, no bias") << Shape{3, 37} << -1 << false;
  QTest::newRow("axis 1 of 3-D") << Shape{2, 3, 20} << 1 << true;
  QTest::newRow("short rows") << Shape{5, 7} << 1 << true;
}

void CodegenReduceTest::layerNorm() {
  QFETCH(Shape, shape);
  QFETCH(int, axis);
  QFETCH(bool, bias);
  Shape norm(shape.begin() + (axis < 0 ? axis + int64_t(shape.size()) : axis), shape.end());
  Graph g;
  ValueId x = g.addInput("x", f32(shape));
  std::vector<ValueId> ins = {
      x, g.addConstant("scale", std::make_shared<const TensorData>(randomTensor(norm, 4)))};
  if (bias)
    ins.push_back(g.addConstant("bias", std::make_shared<const TensorData>(randomTensor(norm, 5))));
  Attributes a;
  a.set("axis", int64_t(axis));
  a.set("epsilon", 1e-5);
  g.addOutput(g.node(g.addNode("LayerNormalization", ins, {{"y", f32(shape)}}, a)).outputs[0]);
  g.markAsOriginal();
  std::string info;
  double err = againstEager(g, {{"x", randomTensor(shape, 6, -3, 5)}}, "", &info);
  QVERIFY2(err <= 2e-5, info.c_str());
}

void CodegenReduceTest::elementwiseOps_data() {
  QTest::addColumn<QString>("op");
  QTest::addColumn<QString>("attr");
  for (const char* op :
       {"Neg", "Abs", "Sqrt", "Reciprocal", "Erf", "Gelu", "LeakyRelu", "Max", "Min", "Pow"})
    QTest::newRow(op) << op << "";
  QTest::newRow("Gelu tanh") << "Gelu"
                             << "tanh";
  QTest::newRow("Pow 0.5") << "Pow"
                           << "0.5";
}

void CodegenReduceTest::elementwiseOps() {
  QFETCH(QString, op);
  QFETCH(QString, attr);
  Shape s{6, 53};
  Graph g;
  ValueId x = g.addInput("x", f32(s));
  bool positive = op == "Sqrt" || op == "Reciprocal" || (op == "Pow" && attr == "0.5");
  std::vector<ValueId> ins = {x};
  if (op == "Max" || op == "Min") ins.push_back(g.addInput("z", f32({53})));
  if (op == "Pow") ins.push_back(f32Const(g, "p", attr.isEmpty() ? 2.0f : attr.toFloat()));
  Attributes a;
  if (op == "Gelu" && !attr.isEmpty()) a.set("approximate", attr.toStdString());
  if (op == "LeakyRelu") a.set("alpha", 0.2);
  g.addOutput(g.node(g.addNode(op.toStdString(), ins, {{"y", f32(s)}}, a)).outputs[0]);
  g.markAsOriginal();
  std::map<std::string, TensorData> in = {{"x", randomTensor(s, 8, positive ? 0.1f : -4.f, 4.f)}};
  if (ins.size() > 1 && (op == "Max" || op == "Min")) in["z"] = randomTensor({53}, 9, -2, 2);
  std::string info;
  double err = againstEager(g, in, "", &info);
  QVERIFY2(err <= 2e-6 * (op == "Reciprocal" ? 10 : 1),
           (std::to_string(err) + "\n" + info).c_str());
}

// LayerNorm written out as ops (what exporters emit), fused by the pipeline.
void CodegenReduceTest::decomposedLayerNormFuses() {
  Shape s{8, 96};
  Graph g;
  ValueId x = g.addInput("x", f32(s));
  int id = 0;
  auto op = [&](const char* o, std::vector<ValueId> in, Shape out) {
    return g
        .node(
            g.addNode(o, in, {{"v" + std::to_string(id++), f32(out)}}, {}, o + std::to_string(id)))
        .outputs[0];
  };
  ValueId axes = i64Const(g, "axes", {-1});
  ValueId mean = op("ReduceMean", {x, axes}, {8, 1});
  ValueId d = op("Sub", {x, mean}, s);
  ValueId var = op("ReduceMean", {op("Pow", {d, f32Const(g, "two", 2)}, s), axes}, {8, 1});
  ValueId den = op("Sqrt", {op("Add", {var, f32Const(g, "eps", 1e-5f)}, {8, 1})}, {8, 1});
  ValueId y = op("Div", {d, den}, s);
  y = op("Mul",
         {y, g.addConstant("gamma", std::make_shared<const TensorData>(randomTensor({96}, 1)))}, s);
  y = op("Add",
         {y, g.addConstant("beta", std::make_shared<const TensorData>(randomTensor({96}, 2)))}, s);
  g.addOutput(op("Gelu", {y}, s));
  g.markAsOriginal();
  std::string info;
  double err = againstEager(g, {{"x", randomTensor(s, 3, -2, 6)}}, defaultPipeline(), &info);
  QVERIFY2(err <= 2e-5, info.c_str());
}

void CodegenReduceTest::unsupportedPowIsAnError() {
  Graph g;
  ValueId x = g.addInput("x", f32({4}));
  g.addOutput(g.node(g.addNode("Pow", {x, f32Const(g, "p", 1.7f)}, {{"y", f32({4})}}, {}, "pw"))
                  .outputs[0]);
  // Any exponent compiles now (pow in f64, as eager); x > 0 keeps it real.
  std::string info;
  double err = againstEager(g, {{"x", randomTensor({4}, 3, 0.1f, 4.0f)}}, "", &info);
  QVERIFY2(err <= 1e-5, info.c_str());
}

// Sum/Mean/Max of three, Clip with one and two bounds, Unsqueeze and Squeeze
// inside a fused chain and as top-level aliases.
void CodegenReduceTest::variadicClipAndShapeOps() {
  Shape s{4, 30};
  Graph g;
  ValueId x = g.addInput("x", f32(s)), z = g.addInput("z", f32({30}));
  int id = 0;
  auto op = [&](const char* o, std::vector<ValueId> in, Shape out) {
    return g.node(g.addNode(o, in, {{"v" + std::to_string(id++), f32(out)}})).outputs[0];
  };
  ValueId sum = op("Sum", {x, z, x}, s);
  ValueId mean = op("Mean", {sum, z, x}, s);
  ValueId mx = op("Max", {mean, x, z}, s);
  ValueId lo = op("Clip", {mx, f32Const(g, "lo", -0.5f)}, s);
  ValueId both = op("Clip", {lo, f32Const(g, "lo2", -0.25f), f32Const(g, "hi", 0.75f)}, s);
  ValueId u = op("Unsqueeze", {both, i64Const(g, "ax0", {0})}, {1, 4, 30});
  ValueId t = op("Tanh", {u}, {1, 4, 30});
  g.addOutput(op("Squeeze", {t, i64Const(g, "ax1", {0})}, s));
  g.markAsOriginal();
  std::map<std::string, TensorData> in = {{"x", randomTensor(s, 1)}, {"z", randomTensor({30}, 2)}};
  std::string info;
  QVERIFY2(againstEager(g, in, "", &info) <= 1e-6, info.c_str());
  QVERIFY2(againstEager(g, in, defaultPipeline(), &info) <= 1e-6, info.c_str());
}

QTEST_APPLESS_MAIN(CodegenReduceTest)
#include "codegen_reduce_test.moc"
