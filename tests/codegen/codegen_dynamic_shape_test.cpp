// Data-dependent shapes and BatchNormalization training, compiled without the
// reference fallback: NonZero and Range as driver kernels (a compiled count or
// fill, sized on the host), nodes downstream of them compiled at run time for
// the shapes they meet, and BatchNormalization with training_mode=1 lowered
// as a per-channel reduction with its running-statistics outputs.
// Every case is checked against the eager interpreter, and the fixtures also
// against their stored ONNX Runtime outputs.
#include <QtTest>
#include <cmath>
#include <limits>

#include "../core/fixture_util.h"
#include "codegen/compiler.h"
#include "core/eager/interpreter.h"
#include "core/ir/printer.h"
#include "core/onnx/import.h"
#include "eager_check.h"
#include "passes/pass_manager.h"
#include "test_util.h"

using namespace fuselens;
using namespace fuselens::test;

namespace {

// Largest |a - b| relative to atol + rtol * |a|; > 1 is a mismatch. INFINITY on
// a shape or dtype difference.
double worstRatio(const TensorData& want, const TensorData& got, double atol, double rtol) {
  if (want.dtype != got.dtype || want.shape != got.shape) return INFINITY;
  double worst = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    double a = want.at(i), b = got.at(i);
    if (std::isnan(a) && std::isnan(b)) continue;
    double r = std::fabs(a - b) / (atol + rtol * std::fabs(a));
    if (!(r <= worst)) worst = std::isnan(r) ? INFINITY : r;
  }
  return worst;
}

std::string describe(const TensorData& t) { return t.type().str(); }

// Compiles g without the fallback; every kernel must be compiled code.
Expected<std::unique_ptr<CompiledModule>> compileStrict(const Graph& g) {
  CompileOptions opts;
  opts.fallback = false;
  auto m = compileGraph(g, opts);
  if (!m) return m.status();
  for (const KernelInfo& k : (*m)->kernels())
    if (k.fallback) return Status::error("kernel " + k.name + " is a fallback");
  return m;
}

const KernelInfo* kernelOf(const CompiledModule& m, const Graph& g, const std::string& op) {
  for (const KernelInfo& k : m.kernels())
    if (g.node(k.node).op == op) return &k;
  return nullptr;
}

TensorData scalar(DType t, double v) {
  TensorData d(t, {});
  switch (t) {
    case DType::F32:
      d.data<float>()[0] = float(v);
      break;
    case DType::F64:
      d.data<double>()[0] = v;
      break;
    case DType::I32:
      d.data<int32_t>()[0] = int32_t(v);
      break;
    default:
      d.data<int64_t>()[0] = int64_t(v);
      break;
  }
  return d;
}

// Runs g compiled (no fallback) and eagerly on `in`; outputs must agree exactly
// (integers) or within 1e-6 (floats).
void expectCompiledMatchesEager(const Graph& g, const std::map<std::string, TensorData>& in) {
  auto eager = runEager(g, in);
  QVERIFY2(eager, eager.message().c_str());
  auto m = compileStrict(g);
  QVERIFY2(m, m.message().c_str());
  auto run = (*m)->run(in);
  QVERIFY2(run, run.message().c_str());
  for (ValueId o : g.outputs()) {
    const TensorData* want = eager->find(o);
    QVERIFY(want);
    QVERIFY2(size_t(o.index) < run->size() && (*run)[o.index], "no compiled output");
    const TensorData& got = *(*run)[o.index];
    QVERIFY2(worstRatio(*want, got, 1e-6, 1e-6) <= 1,
             (g.value(o).name + ": " + describe(got) + " vs eager " + describe(*want)).c_str());
  }
}

}  // namespace

class CodegenDynamicShapeTest : public QObject {
  Q_OBJECT

 private slots:
  void fixtureCompiles_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("driverOp");  // the op that must run as a driver kernel
    QTest::newRow("data_nonzero") << "data_nonzero"
                                  << "NonZero";
    QTest::newRow("data_range_f32") << "data_range_f32"
                                    << "Range";
    QTest::newRow("data_range_i64") << "data_range_i64"
                                    << "Range";
    QTest::newRow("norm_batchnorm_training") << "norm_batchnorm_training"
                                             << "";
  }

  // Compiled without the fallback, matching ONNX Runtime's outputs and eager.
  void fixtureCompiles() {
    QFETCH(QString, name);
    QFETCH(QString, driverOp);
    fs::path dir = fixturesDir() / name.toStdString();
    auto m = importOnnxFile((dir / "model.onnx").string());
    QVERIFY2(m, m.message().c_str());
    std::string err;
    auto inputs = loadNpys(dir, "input_", err);
    auto refs = loadNpys(dir, "output_", err);
    QVERIFY2(err.empty(), err.c_str());
    auto eager = runEager(m->graph, inputs);
    QVERIFY2(eager, eager.message().c_str());
    auto specs = parsePipeline(defaultPipeline());
    QVERIFY2(specs, specs.message().c_str());
    auto piped = runPipeline(m->graph, *specs);
    QVERIFY2(piped, piped.message().c_str());
    const Graph& opt = piped->snapshots.back().graph();
    auto mod = compileStrict(opt);
    QVERIFY2(mod, mod.message().c_str());
    if (!driverOp.isEmpty()) {
      const KernelInfo* k = kernelOf(**mod, opt, driverOp.toStdString());
      QVERIFY2(k, "no kernel for the op");
      QVERIFY(k->driver);
      QVERIFY(!k->fallback);
    }
    auto run = (*mod)->run(inputs);
    QVERIFY2(run, run.message().c_str());
    double tol = name.startsWith("norm") ? 1e-4 : 1e-5;
    for (size_t i = 0; i < m->graph.outputs().size(); ++i) {
      const std::string outName = m->graph.value(m->graph.outputs()[i]).name;
      ValueId o = opt.outputs()[i];
      QVERIFY2(size_t(o.index) < run->size() && (*run)[o.index], "no compiled output");
      const TensorData& got = *(*run)[o.index];
      auto ref = refs.find(outName);
      QVERIFY2(ref != refs.end(), ("no stored output " + outName).c_str());
      QVERIFY2(worstRatio(ref->second, got, tol, tol) <= 1,
               (outName + " vs ONNX Runtime: " + describe(got)).c_str());
      QVERIFY2(worstRatio(*eager->find(m->graph.outputs()[i]), got, tol, tol) <= 1,
               (outName + " vs eager").c_str());
    }
  }

  void nonZero_data() {
    QTest::addColumn<QString>("type");  // input type in the IR text
    QTest::addColumn<QVector<double>>("values");
    QTest::newRow("f32 some") << "f32[2,3]" << QVector<double>{0, 1.5, 0, -2, 0, 3};
    QTest::newRow("f32 none") << "f32[2,3]" << QVector<double>{0, 0, 0, 0, 0, 0};
    QTest::newRow("f32 all") << "f32[2,3]" << QVector<double>{1, 2, 3, 4, 5, 6};
    QTest::newRow("f32 nan counts")
        << "f32[4]" << QVector<double>{0, std::numeric_limits<double>::quiet_NaN(), 0, 1};
    QTest::newRow("i64 3d") << "i64[2,2,2]" << QVector<double>{0, 7, 0, 0, -1, 0, 0, 5};
    QTest::newRow("i32 last only") << "i32[5]" << QVector<double>{0, 0, 0, 0, 9};
    QTest::newRow("bool") << "bool[3]" << QVector<double>{1, 0, 1};
  }

  // Counts of none, some and all; the output [rank, count] is sized at run time.
  void nonZero() {
    QFETCH(QString, type);
    QFETCH(QVector<double>, values);
    std::string t = type.toStdString();
    std::string out = "i64[" + std::to_string(std::count(t.begin(), t.end(), ',') + 1) + ",?]";
    auto g = parseGraph("graph @main(%x: " + t + ") -> (" + out +
                        ") {\n  %y = NonZero(%x) : " + out + "\n  return %y\n}");
    QVERIFY2(g, g.message().c_str());
    const TensorType& xt = g->value(g->inputs()[0]).type;
    TensorData x(xt.dtype, *xt.staticShape());
    for (int64_t i = 0; i < x.numel(); ++i) {
      switch (x.dtype) {
        case DType::F32:
          x.data<float>()[i] = float(values[i]);
          break;
        case DType::I64:
          x.data<int64_t>()[i] = int64_t(values[i]);
          break;
        case DType::I32:
          x.data<int32_t>()[i] = int32_t(values[i]);
          break;
        default:
          x.data<bool>()[i] = values[i] != 0;
          break;
      }
    }
    expectCompiledMatchesEager(*g, {{"x", x}});
    auto m = compileStrict(*g);
    QVERIFY2(m, m.message().c_str());
    const KernelInfo* k = kernelOf(**m, *g, "NonZero");
    QVERIFY(k && k->driver);
    QVERIFY((*m)->loopIrText().find("_count") != std::string::npos);
  }

  void range_data() {
    QTest::addColumn<QString>("dtype");
    QTest::addColumn<double>("start");
    QTest::addColumn<double>("limit");
    QTest::addColumn<double>("delta");
    QTest::addColumn<qint64>("count");
    QTest::newRow("f32 up") << "f32" << 1.0 << 3.2 << 0.3 << qint64(8);
    QTest::newRow("f32 negative delta") << "f32" << 5.0 << -2.0 << -1.5 << qint64(5);
    QTest::newRow("f32 empty") << "f32" << 3.0 << 1.0 << 1.0 << qint64(0);
    QTest::newRow("f32 several blocks") << "f32" << -7.5 << 2600.0 << 1.25 << qint64(2086);
    QTest::newRow("f64 up") << "f64" << 0.0 << 1.0 << 0.1 << qint64(10);
    QTest::newRow("i64 up") << "i64" << 2.0 << 20.0 << 3.0 << qint64(6);
    QTest::newRow("i64 negative delta") << "i64" << 10.0 << -10.0 << -4.0 << qint64(5);
    QTest::newRow("i64 empty") << "i64" << 0.0 << 10.0 << -1.0 << qint64(0);
    QTest::newRow("i64 exactly one block") << "i64" << 0.0 << 1024.0 << 1.0 << qint64(1024);
    QTest::newRow("i32 down") << "i32" << 7.0 << 0.0 << -2.0 << qint64(4);
  }

  void range() {
    QFETCH(QString, dtype);
    QFETCH(double, start);
    QFETCH(double, limit);
    QFETCH(double, delta);
    QFETCH(qint64, count);
    std::string t = dtype.toStdString();
    auto g = parseGraph("graph @main(%s: " + t + "[], %l: " + t + "[], %d: " + t + "[]) -> (" + t +
                        "[?]) {\n  %y = Range(%s, %l, %d) : " + t + "[?]\n  return %y\n}");
    QVERIFY2(g, g.message().c_str());
    DType dt = g->value(g->inputs()[0]).type.dtype;
    std::map<std::string, TensorData> in = {
        {"s", scalar(dt, start)}, {"l", scalar(dt, limit)}, {"d", scalar(dt, delta)}};
    expectCompiledMatchesEager(*g, in);
    auto m = compileStrict(*g);
    QVERIFY2(m, m.message().c_str());
    QVERIFY(kernelOf(**m, *g, "Range")->driver);
    auto run = (*m)->run(in);
    QVERIFY2(run, run.message().c_str());
    QVERIFY((*run)[g->outputs()[0].index]->shape == std::vector<int64_t>{count});
  }

  // Bad scalars are one sentence from the run, not a crash or a huge allocation.
  void rangeErrors() {
    auto g = parseGraph(
        "graph @main(%s: f32[], %l: f32[], %d: f32[]) -> (f32[?]) {\n"
        "  %y = Range(%s, %l, %d) : f32[?]\n  return %y\n}");
    QVERIFY2(g, g.message().c_str());
    auto m = compileStrict(*g);
    QVERIFY2(m, m.message().c_str());
    auto zero = (*m)->run(
        {{"s", scalar(DType::F32, 0)}, {"l", scalar(DType::F32, 1)}, {"d", scalar(DType::F32, 0)}});
    QVERIFY(!zero);
    QVERIFY2(zero.message().find("delta is 0") != std::string::npos, zero.message().c_str());
    auto huge = (*m)->run({{"s", scalar(DType::F32, 0)},
                           {"l", scalar(DType::F32, 1e12)},
                           {"d", scalar(DType::F32, 1)}});
    QVERIFY(!huge);
    QVERIFY2(huge.message().find("too long") != std::string::npos, huge.message().c_str());
  }

  // Nodes reading NonZero's output run compiled, specialized for each count;
  // a Reshape whose shape is computed from that output too (small integer
  // inputs become constants of the specialization).
  void downstreamOfNonZero() {
    auto g = parseGraph(
        "graph @main(%x: f32[3,4]) -> (i64[?,2], f32[?], f32[?,2], i64[2]) {\n"
        "  %shape = Constant : i64[1] dense<[-1]>\n"
        "  %four = Constant : i64[] dense<[4]>\n"
        "  %zero = Constant : i64[] dense<[0]>\n"
        "  %one = Constant : i64[] dense<[1]>\n"
        "  %nz = NonZero(%x) : i64[2,?]\n"
        "  %t = Transpose(%nz) {perm=[1, 0]} : i64[?,2]\n"
        "  %flat = Reshape(%x, %shape) : f32[12]\n"
        "  %row = Gather(%t, %zero) {axis=1} : i64[?]\n"
        "  %col = Gather(%t, %one) {axis=1} : i64[?]\n"
        "  %rowoff = Mul(%row, %four) : i64[?]\n"
        "  %pos = Add(%rowoff, %col) : i64[?]\n"
        "  %vals = Gather(%flat, %pos) {axis=0} : f32[?]\n"
        "  %tf = Cast(%t) {to=1} : f32[?,2]\n"
        "  %s = Shape(%t) : i64[2]\n"
        "  %r = Reshape(%tf, %s) : f32[?,2]\n"
        "  return %t, %vals, %r, %s\n"
        "}");
    QVERIFY2(g, g.message().c_str());
    auto m = compileStrict(*g);
    QVERIFY2(m, m.message().c_str());
    const KernelInfo* t = kernelOf(**m, *g, "Transpose");
    QVERIFY(t && t->driver && !t->fallback);
    // Different counts: each meets its own specialization.
    for (uint32_t seed : {1u, 2u, 3u}) {
      TensorData x = testing::randomTensor({3, 4}, seed);
      for (int64_t i = 0; i < x.numel(); ++i)
        if (x.data<float>()[i] < 0.2f * float(seed) - 0.4f) x.data<float>()[i] = 0;
      expectCompiledMatchesEager(*g, {{"x", x}});
    }
    expectCompiledMatchesEager(*g, {{"x", TensorData(DType::F32, {3, 4})}});  // no non-zeros
  }

  // A chain of nodes of run-time shape (Cast, a reduction to a scalar, a
  // broadcast Mul, Flatten, Squeeze), each compiled for the count it meets.
  void chainOfDynamicNodes() {
    auto g = parseGraph(
        "graph @main(%x: f32[6]) -> (f32[?]) {\n"
        "  %ax = Constant : i64[1] dense<[0]>\n"
        "  %nz = NonZero(%x) : i64[1,?]\n"
        "  %f = Cast(%nz) {to=1} : f32[1,?]\n"
        "  %k = ReduceSum(%f) {keepdims=0} : f32[]\n"
        "  %z = Mul(%f, %k) : f32[1,?]\n"
        "  %w = Flatten(%z) {axis=0} : f32[1,?]\n"
        "  %v = Squeeze(%w, %ax) : f32[?]\n"
        "  return %v\n"
        "}");
    QVERIFY2(g, g.message().c_str());
    for (uint32_t seed : {5u, 6u}) {
      TensorData x = testing::randomTensor({6}, seed);
      x.data<float>()[seed % 6] = 0;
      expectCompiledMatchesEager(*g, {{"x", x}});
    }
  }

  // Range's output feeding elementwise ops, a reduction and a Concat, for
  // lengths that change from run to run.
  void downstreamOfRange() {
    auto g = parseGraph(
        "graph @main(%l: i64[]) -> (f32[?], f32[], i64[?]) {\n"
        "  %s = Constant : i64[] dense<[0]>\n"
        "  %d = Constant : i64[] dense<[2]>\n"
        "  %r = Range(%s, %l, %d) : i64[?]\n"
        "  %f = Cast(%r) {to=1} : f32[?]\n"
        "  %sq = Mul(%f, %f) : f32[?]\n"
        "  %sum = ReduceSum(%sq) {keepdims=0} : f32[]\n"
        "  %c = Concat(%r, %r) {axis=0} : i64[?]\n"
        "  return %sq, %sum, %c\n"
        "}");
    QVERIFY2(g, g.message().c_str());
    for (int64_t limit : {9, 1, 0, 3000, 9})
      expectCompiledMatchesEager(*g, {{"l", scalar(DType::I64, double(limit))}});
  }

  void batchNormTraining_data() {
    QTest::addColumn<QVector<qint64>>("shape");
    QTest::newRow("[1,1]") << QVector<qint64>{1, 1};
    QTest::newRow("[4,3]") << QVector<qint64>{4, 3};
    QTest::newRow("[2,3,5]") << QVector<qint64>{2, 3, 5};
    QTest::newRow("[2,4,3,3]") << QVector<qint64>{2, 4, 3, 3};
    QTest::newRow("[3,2,2,2,3]") << QVector<qint64>{3, 2, 2, 2, 3};
    QTest::newRow("[8,16,7,7]") << QVector<qint64>{8, 16, 7, 7};
  }

  // Y, running mean and running variance against eager, with and without the
  // default pipeline (which may fuse the Relu after it).
  void batchNormTraining() {
    QFETCH(QVector<qint64>, shape);
    testing::Shape s(shape.begin(), shape.end());
    std::string xs = formatShape(s), cs = "[" + std::to_string(s[1]) + "]";
    std::string text = "graph @main(%x: f32" + xs + ", %sc: f32" + cs + ", %b: f32" + cs +
                       ", %m: f32" + cs + ", %v: f32" + cs + ") -> (f32" + xs + ", f32" + cs +
                       ", f32" + cs +
                       ") {\n"
                       "  %y, %rm, %rv = BatchNormalization(%x, %sc, %b, %m, %v) {epsilon=0.001, "
                       "momentum=0.8, training_mode=1} : f32" +
                       xs + ", f32" + cs + ", f32" + cs + "\n  %r = Relu(%y) : f32" + xs +
                       "\n  return %r, %rm, %rv\n}";
    auto g = parseGraph(text);
    QVERIFY2(g, g.message().c_str());
    std::map<std::string, TensorData> in = {{"x", testing::randomTensor(s, 1, -2, 3)},
                                            {"sc", testing::randomTensor({s[1]}, 2)},
                                            {"b", testing::randomTensor({s[1]}, 3)},
                                            {"m", testing::randomTensor({s[1]}, 4)},
                                            {"v", testing::randomTensor({s[1]}, 5, 0.5f, 2)}};
    for (const char* pipeline : {"", "default"}) {
      std::string info;
      double d = compiledVsEager(*g, in, pipeline[0] ? defaultPipeline() : "", &info);
      QVERIFY2(d <= 1e-5, (std::string(pipeline) + ": " + std::to_string(d) + "\n" + info).c_str());
    }
  }

  // training_mode=1 with Y alone: the batch statistics still normalize.
  void batchNormTrainingYOnly() {
    auto g = parseGraph(
        "graph @main(%x: f32[3,2,4], %sc: f32[2], %b: f32[2], %m: f32[2], %v: f32[2]) -> "
        "(f32[3,2,4]) {\n"
        "  %y = BatchNormalization(%x, %sc, %b, %m, %v) {training_mode=1} : f32[3,2,4]\n"
        "  return %y\n}");
    QVERIFY2(g, g.message().c_str());
    std::map<std::string, TensorData> in = {{"x", testing::randomTensor({3, 2, 4}, 7)},
                                            {"sc", testing::randomTensor({2}, 8)},
                                            {"b", testing::randomTensor({2}, 9)},
                                            {"m", testing::randomTensor({2}, 10)},
                                            {"v", testing::randomTensor({2}, 11, 0.5f, 2)}};
    std::string info;
    double d = compiledVsEager(*g, in, "", &info);
    QVERIFY2(d <= 1e-5, (std::to_string(d) + "\n" + info).c_str());
  }
};

QTEST_GUILESS_MAIN(CodegenDynamicShapeTest)
#include "codegen_dynamic_shape_test.moc"
