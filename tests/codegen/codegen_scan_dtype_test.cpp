// ArgMax / ArgMin / TopK / CumSum compiled for every dtype and checked against
// the eager interpreter bit for bit: i64 rows hold values past 2^53 that differ
// by one (a compare through double would call them equal), every row holds
// ties (select_last_index, TopK's lower-index-first order), float rows hold
// -0 and +0, infinities and, for ArgMax/ArgMin, NaN. Each case runs alone and
// through the default pipeline (the data enters through a Neg, or Not for bool,
// that the scan's kernel inlines). TopK with NaN is checked against ONNX
// Runtime's order (NaN the greatest value), written out by hand.
#include <QtTest>
#include <cmath>
#include <cstring>
#include <random>

#include "codegen/compiler.h"
#include "core/eager/interpreter.h"
#include "core/ops/op_util.h"
#include "passes/pass_manager.h"
#include "test_util.h"

using namespace fuselens;
using namespace fuselens::testing;

namespace {

const DType kAll[] = {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I8,
                      DType::U8,  DType::I16, DType::I32, DType::I64,  DType::Bool};

const Shape kShape = {3, 7, 4};

// Input data of dtype t for kShape: few distinct values so rows tie, the
// dtype's edges, and for floats signed zeros, infinities (inf) and NaN (nan).
// CumSum goes without both: inf - inf would compare NaN bit patterns, which
// eager does not define.
TensorData scanInput(DType t, bool inf, bool nan, uint32_t seed) {
  std::mt19937 rng(seed);
  int64_t n = numel(kShape);
  if (t == DType::I64) {  // 2^60 + small: neighbours that double cannot tell apart
    std::vector<int64_t> v(static_cast<size_t>(n));
    for (int64_t& x : v) x = (int64_t(1) << 60) + int64_t(rng() % 4);
    v[1] = std::numeric_limits<int64_t>::min();
    v[5] = -(int64_t(1) << 60) - 1;
    v[6] = -(int64_t(1) << 60);
    return TensorData::fromVector(DType::I64, kShape, v);
  }
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = double(int(rng() % 5)) - 2;
  if (isFloat(t)) {
    v[2] = -0.0, v[6] = 0.0;
    if (inf) v[9] = INFINITY, v[13] = -INFINITY;
    if (nan) v[0] = NAN, v[17] = NAN, v[30] = NAN;  // one row starts with NaN
  } else if (t == DType::U8) {
    v[3] = 255, v[7] = 0;
  } else if (t != DType::Bool) {
    int bits = int(dtypeSize(t)) * 8;
    v[3] = std::ldexp(1.0, bits - 1) - 1, v[7] = -std::ldexp(1.0, bits - 1);
  }
  return ops::castTensor(TensorData::fromVector(DType::F64, kShape, v), t);
}

struct Case {
  std::string op;
  int64_t axis = 1;
  Attributes attrs;
  int64_t k = 0;  // TopK
};

// x -> [Neg / Not] -> op: the optional first node is what the pipeline inlines.
Graph scanGraph(DType t, const Case& c, bool producer) {
  Graph g;
  ValueId x = g.addInput("x", TensorType::of(t, kShape));
  if (producer) {
    const char* op = t == DType::Bool ? "Not" : t == DType::U8 ? "Identity" : "Neg";
    x = g.node(g.addNode(op, {x}, {{"nx", TensorType::of(t, kShape)}}, {}, "pre")).outputs[0];
  }
  Shape out = kShape;
  std::vector<ValueId> ins = {x};
  std::vector<OutputSpec> outs;
  size_t a = size_t(c.axis < 0 ? c.axis + int64_t(kShape.size()) : c.axis);
  if (c.op == "TopK") {
    out[a] = c.k;
    ins.push_back(g.addConstant("k", std::make_shared<const TensorData>(TensorData::fromVector(
                                         DType::I64, {1}, std::vector<int64_t>{c.k}))));
    outs = {{"v", TensorType::of(t, out)}, {"i", TensorType::of(DType::I64, out)}};
  } else if (c.op == "CumSum") {
    ins.push_back(g.addConstant("a", std::make_shared<const TensorData>(TensorData::fromVector(
                                         DType::I64, {}, std::vector<int64_t>{c.axis}))));
    outs = {{"y", TensorType::of(t, out)}};
  } else {
    out[a] = 1;
    if (c.attrs.getInt("keepdims", 1) == 0) out.erase(out.begin() + std::ptrdiff_t(a));
    outs = {{"y", TensorType::of(DType::I64, out)}};
  }
  for (ValueId y : g.node(g.addNode(c.op, ins, outs, c.attrs, "scan")).outputs) g.addOutput(y);
  g.markAsOriginal();
  return g;
}

// Runs g compiled (no fallback) and eagerly; "" when every output agrees bit for bit.
std::string compareExactly(const Graph& g, const TensorData& x, const std::string& pipeline) {
  std::map<std::string, TensorData> in = {{"x", x}};
  auto eager = runEager(g, in);
  if (!eager) return "eager: " + eager.message();
  Graph opt = g;
  if (!pipeline.empty()) {
    auto r = runPipeline(g, *parsePipeline(pipeline));
    if (!r) return "pipeline: " + r.message();
    opt = r->snapshots.back().graph();
  }
  CompileOptions opts;
  opts.fallback = false;
  auto m = compileGraph(opt, opts);
  if (!m) return "compile: " + m.message();
  auto run = (*m)->run(in);
  if (!run) return "run: " + run.message();
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    const TensorData* want = eager->find(g.outputs()[i]);
    const auto& got = (*run)[opt.outputs()[i].index];
    if (!want || !got || got->shape != want->shape || got->dtype != want->dtype)
      return "output " + std::to_string(i) + " differs in shape or dtype";
    size_t w = dtypeSize(want->dtype);
    for (int64_t k = 0; k < want->numel(); ++k)
      if (std::memcmp(got->bytes.data() + k * w, want->bytes.data() + k * w, w) != 0)
        return "output " + std::to_string(i) + " element " + std::to_string(k) + ": " +
               std::to_string(ops::loadI(*got, k)) + " (as integer), eager " +
               std::to_string(ops::loadI(*want, k)) + "\n" + (*m)->loopIrText();
  }
  return {};
}

Attributes attrs(std::initializer_list<std::pair<const char*, int64_t>> kv) {
  Attributes a;
  for (auto& [k, v] : kv) a.set(k, v);
  return a;
}

}  // namespace

Q_DECLARE_METATYPE(DType)

class CodegenScanDtypeTest : public QObject {
  Q_OBJECT

 private slots:
  void exactAgainstEager_data();
  void exactAgainstEager();
  void topKRanksNanGreatest();
  void topKWithoutConstantKIsAnError();
};

void CodegenScanDtypeTest::exactAgainstEager_data() {
  QTest::addColumn<DType>("dtype");
  QTest::addColumn<QString>("op");
  QTest::addColumn<int>("axis");
  QTest::addColumn<int>("last");  // select_last_index; TopK: largest; CumSum: exclusive
  QTest::addColumn<int>("keep");  // keepdims; TopK: k; CumSum: reverse
  QTest::addColumn<bool>("pipeline");
  for (DType t : kAll)
    for (bool pipe : {false, true}) {
      auto row = [&](const char* op, int axis, int a, int b) {
        std::string name = std::string(dtypeName(t)) + " " + op + " axis " + std::to_string(axis) +
                           " " + std::to_string(a) + "/" + std::to_string(b) +
                           (pipe ? ", pipeline" : "");
        QTest::newRow(name.c_str()) << t << QString(op) << axis << a << b << pipe;
      };
      for (const char* op : {"ArgMax", "ArgMin"})
        for (int last : {0, 1})
          for (int keep : {0, 1}) row(op, last ? -1 : 1, last, keep);
      row("TopK", -1, 1, 3);
      row("TopK", 1, 0, 7);  // the whole axis: a full stable sort
      row("CumSum", 1, 0, 0);
      row("CumSum", -1, 1, 1);
    }
}

void CodegenScanDtypeTest::exactAgainstEager() {
  QFETCH(DType, dtype);
  QFETCH(QString, op);
  QFETCH(int, axis);
  QFETCH(int, last);
  QFETCH(int, keep);
  QFETCH(bool, pipeline);
  Case c{op.toStdString(), axis, {}, 0};
  if (c.op == "TopK") {
    c.attrs = attrs({{"axis", axis}, {"largest", last}});
    c.k = keep;
  } else if (c.op == "CumSum") {
    c.attrs = attrs({{"exclusive", last}, {"reverse", keep}});
  } else {
    c.attrs = attrs({{"axis", axis}, {"select_last_index", last}, {"keepdims", keep}});
  }
  // No NaN for TopK (eager's sort has no NaN order) or CumSum (see scanInput).
  bool inf = c.op != "CumSum", nan = c.op == "ArgMax" || c.op == "ArgMin";
  Graph g = scanGraph(dtype, c, pipeline);
  std::string err =
      compareExactly(g, scanInput(dtype, inf, nan, 5), pipeline ? defaultPipeline() : "");
  QVERIFY2(err.empty(), err.c_str());
}

// ONNX Runtime's order with NaN: NaN is the greatest value, so the NaNs come
// first (by index) when largest and last when smallest; each element once.
void CodegenScanDtypeTest::topKRanksNanGreatest() {
  for (int largest : {1, 0}) {
    Graph g;
    ValueId x = g.addInput("x", f32({1, 6}));
    ValueId k = g.addConstant("k", std::make_shared<const TensorData>(TensorData::fromVector(
                                       DType::I64, {1}, std::vector<int64_t>{6})));
    NodeId id =
        g.addNode("TopK", {x, k}, {{"v", f32({1, 6})}, {"i", TensorType::of(DType::I64, {1, 6})}},
                  attrs({{"axis", -1}, {"largest", largest}}), "topk");
    for (ValueId y : g.node(id).outputs) g.addOutput(y);
    CompileOptions opts;
    opts.fallback = false;
    auto m = compileGraph(g, opts);
    QVERIFY2(m.isOk(), m.message().c_str());
    std::vector<float> in = {NAN, 1, 3, NAN, 2, 3};
    auto run = (*m)->run({{"x", TensorData::fromVector(DType::F32, {1, 6}, in)}});
    QVERIFY2(run.isOk(), run.message().c_str());
    std::vector<int64_t> want =
        largest ? std::vector<int64_t>{0, 3, 2, 5, 4, 1} : std::vector<int64_t>{1, 4, 2, 5, 0, 3};
    const TensorData& vals = *(*run)[g.outputs()[0].index];
    const TensorData& idx = *(*run)[g.outputs()[1].index];
    for (size_t j = 0; j < want.size(); ++j) {
      QCOMPARE(idx.data<int64_t>()[j], want[j]);
      float v = vals.data<float>()[j], w = in[size_t(want[j])];
      QVERIFY(std::isnan(w) ? std::isnan(v) : v == w);
    }
    // Eager's sort follows the same order.
    EagerOptions eo;
    auto ref = runEager(g, {{"x", TensorData::fromVector(DType::F32, {1, 6}, in)}}, eo);
    QVERIFY2(ref.isOk(), ref.message().c_str());
    const TensorData* eidx = ref->find(g.outputs()[1]);
    QVERIFY(eidx);
    for (size_t j = 0; j < want.size(); ++j) QCOMPARE(eidx->data<int64_t>()[j], want[j]);
  }
}

void CodegenScanDtypeTest::topKWithoutConstantKIsAnError() {
  Graph g;
  ValueId x = g.addInput("x", TensorType::of(DType::I64, {2, 5}));
  ValueId k = g.addInput("k", TensorType::of(DType::I64, {1}));
  NodeId id = g.addNode(
      "TopK", {x, k},
      {{"v", TensorType::of(DType::I64, {2, 3})}, {"i", TensorType::of(DType::I64, {2, 3})}}, {},
      "topk");
  for (ValueId y : g.node(id).outputs) g.addOutput(y);
  CompileOptions opts;
  opts.fallback = false;
  auto m = compileGraph(g, opts);
  QVERIFY(!m.isOk());
  QVERIFY2(m.message().find("node 'topk' (TopK): TopK needs a constant k") != std::string::npos,
           m.message().c_str());
}

QTEST_GUILESS_MAIN(CodegenScanDtypeTest)
#include "codegen_scan_dtype_test.moc"
