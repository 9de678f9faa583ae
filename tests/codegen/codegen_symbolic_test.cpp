// Symbolic kernels: the forms fitted from samples (sym_form.h), and kernels
// generalized over a dim (symbolic_kernel.h) that then run at lengths none of
// the samples had, against plain references, with one compile for all of them.
#include <QTemporaryDir>
#include <QtTest>

#include "codegen/compiler.h"
#include "codegen/kernel_plan.h"
#include "codegen/symbolic/symbolic_plan.h"
#include "test_util.h"

using namespace fuselens;
using namespace fuselens::testing;

namespace {

const std::vector<int64_t>& kSamples = symbolicSampleLengths();

std::vector<std::vector<int64_t>> rowsOf(const std::vector<int64_t>& d0) {
  std::vector<std::vector<int64_t>> rows;
  for (int64_t v : d0) rows.push_back({v});
  return rows;
}

std::vector<int64_t> valuesOf(const std::function<int64_t(int64_t)>& f) {
  std::vector<int64_t> out;
  for (int64_t v : kSamples) out.push_back(f(v));
  return out;
}

// The largest error relative to the reference's magnitude (at least 1).
double relError(const std::vector<float>& got, const std::vector<float>& want) {
  if (got.size() != want.size()) return 1e30;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i)
    worst = std::max(
        worst, std::fabs(double(got[i]) - want[i]) / std::max(1.0, std::fabs(double(want[i]))));
  return worst;
}

// A one-group graph at length n: `kind` picks the kernel.
Graph kernelAt(const QString& kind, int64_t n) {
  Graph body;
  if (kind == "logsoftmax_len") {  // rows of symbolic length: reductions over the dim
    ValueId x = body.addInput("x", f32({6, n}));
    body.addOutput(body.node(body.addNode("LogSoftmax", {x}, {{"y", f32({6, n})}})).outputs[0]);
  } else if (kind == "softmax_rows") {  // a symbolic number of rows
    ValueId x = body.addInput("x", f32({n, 40}));
    body.addOutput(body.node(body.addNode("Softmax", {x}, {{"y", f32({n, 40})}})).outputs[0]);
  } else if (kind == "matmul_relu") {  // M symbolic: the register-tiled MatMul
    ValueId a = body.addInput("a", f32({n, 32}));
    ValueId b = body.addInput("b", f32({32, 24}));
    ValueId y = body.node(body.addNode("MatMul", {a, b}, {{"mm", f32({n, 24})}})).outputs[0];
    body.addOutput(body.node(body.addNode("Relu", {y}, {{"y", f32({n, 24})}})).outputs[0]);
  } else if (kind == "attention") {  // seq x seq scores: temps sized by the dim
    ValueId q = body.addInput("q", f32({2, n, 8}));
    ValueId k = body.addInput("k", f32({2, 8, n}));
    ValueId v = body.addInput("v", f32({2, n, 8}));
    ValueId s = body.node(body.addNode("MatMul", {q, k}, {{"s", f32({2, n, n})}})).outputs[0];
    ValueId p = body.node(body.addNode("Softmax", {s}, {{"p", f32({2, n, n})}})).outputs[0];
    body.addOutput(body.node(body.addNode("MatMul", {p, v}, {{"y", f32({2, n, 8})}})).outputs[0]);
  } else if (kind == "column_mean") {  // the dim kept last: a column reduction over rows
    ValueId x = body.addInput("x", f32({6, n}));
    ValueId axes = body.addInput("axes", TensorType::of(DType::I64, {1}));
    body.addOutput(
        body.node(body.addNode("ReduceMean", {x, axes}, {{"y", f32({1, n})}})).outputs[0]);
    auto zero = std::make_shared<const TensorData>(
        TensorData::fromVector(DType::I64, {1}, std::vector<int64_t>{0}));
    return wrapInGroup(std::move(body), {{"axes", zero}});
  } else {  // mean over the dim: a float that is 1/n
    ValueId x = body.addInput("x", f32({1, 12, n, 1}));
    body.addOutput(
        body.node(body.addNode("GlobalAveragePool", {x}, {{"y", f32({1, 12, 1, 1})}})).outputs[0]);
  }
  return wrapInGroup(std::move(body));
}

std::vector<float> reference(const QString& kind, const std::vector<TensorData>& in, int64_t n) {
  auto x = values(in[0]);
  if (kind == "logsoftmax_len") {
    auto y = refSoftmax(x, {6, n}, -1);
    for (float& v : y) v = std::log(v);
    return y;
  }
  if (kind == "softmax_rows") return refSoftmax(x, {n, 40}, -1);
  if (kind == "column_mean") {
    std::vector<float> y(size_t(n), 0);
    for (int64_t r = 0; r < 6; ++r)
      for (int64_t j = 0; j < n; ++j) y[size_t(j)] += x[size_t(r * n + j)];
    for (float& v : y) v /= 6;
    return y;
  }
  if (kind == "attention") {
    Shape s;
    auto p = refSoftmax(refMatMul(x, {2, n, 8}, values(in[1]), {2, 8, n}, &s), {2, n, n}, -1);
    return refMatMul(p, {2, n, n}, values(in[2]), {2, n, 8}, &s);
  }
  if (kind == "matmul_relu") {
    Shape outShape;
    auto y = refMatMul(x, {n, 32}, values(in[1]), {32, 24}, &outShape);
    for (float& v : y) v = std::max(v, 0.0f);
    return y;
  }
  std::vector<float> y(12, 0);
  for (int64_t c = 0; c < 12; ++c)
    for (int64_t r = 0; r < n; ++r) y[size_t(c)] += x[size_t(c * n + r)];
  for (float& v : y) v /= float(n);
  return y;
}

}  // namespace

class CodegenSymbolicTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    cacheHome_ = std::make_unique<QTemporaryDir>();
    qputenv("XDG_CACHE_HOME", cacheHome_->path().toUtf8());
  }

  void fitsTheFormsLoweringMakes() {
    const auto atoms = rowsOf(kSamples);
    struct Case {
      const char* want;
      std::function<int64_t(int64_t)> f;
    };
    const Case cases[] = {
        {"7", [](int64_t) { return 7; }},
        {"3*d0+1", [](int64_t n) { return 3 * n + 1; }},
        {"d0*d0-d0", [](int64_t n) { return n * n - n; }},
        {"floor(d0/8)", [](int64_t n) { return n / 8; }},
        {"mod(d0,8)", [](int64_t n) { return n % 8; }},
        {"floor((d0+15)/16)", [](int64_t n) { return (n + 15) / 16; }},
        {"floor(12*d0/8)", [](int64_t n) { return 12 * n / 8; }},
    };
    for (const Case& c : cases) {
      auto form = fitForm(atoms, valuesOf(c.f));
      QVERIFY2(form, c.want);
      for (int64_t n : {1, 2, 7, 64, 300, 1001})
        QVERIFY2(form->eval({n}) == c.f(n),
                 qPrintable(QString("%1: %2 at %3").arg(c.want).arg(form->str().c_str()).arg(n)));
    }
    // 8*floor(d0/8) is d0 - mod(d0, 8): either form is exact.
    auto split = fitForm(atoms, valuesOf([](int64_t n) { return n / 8 * 8; }));
    QVERIFY(split);
    for (int64_t n : {1, 7, 8, 300}) QCOMPARE(split->eval({n}), n / 8 * 8);
    // Numbers that follow no form of the family are refused, not forced.
    QVERIFY(!fitForm(atoms, {2, 3, 5, 7, 11, 13, 17, 19, 23}));
    QVERIFY(!fitForm(atoms, valuesOf([](int64_t n) { return n % 9 * n; })));
    // Two atoms: a product of both.
    std::vector<std::vector<int64_t>> two;
    std::vector<int64_t> prod;
    for (int64_t v : kSamples) {
      two.push_back({v, (v + 1) / 2});
      prod.push_back(v * ((v + 1) / 2) + 4);
    }
    auto p = fitForm(two, prod);
    QVERIFY(p);
    QCOMPARE(p->eval({300, 150}), int64_t(300 * 150 + 4));
  }

  void kernelsRunAtLengthsNoSampleHad_data() {
    QTest::addColumn<QString>("kind");
    QTest::newRow("log-softmax over the dim") << "logsoftmax_len";
    QTest::newRow("softmax rows") << "softmax_rows";
    QTest::newRow("matmul + relu") << "matmul_relu";
    QTest::newRow("attention") << "attention";
    QTest::newRow("mean over the dim") << "mean";
    QTest::newRow("mean over rows, the dim kept") << "column_mean";
  }

  void kernelsRunAtLengthsNoSampleHad() {
    QFETCH(QString, kind);
    std::vector<Graph> graphs;
    std::vector<KernelPlan> plans;
    for (int64_t n : kSamples) {
      graphs.push_back(kernelAt(kind, n));
      CompileOptions sampleOpts;
      sampleOpts.schedule = symbolicSchedule();
      auto plan = planKernels(graphs.back(), sampleOpts, {}, {});
      QVERIFY2(plan, plan.status().message().c_str());
      plans.push_back(std::move(*plan));
      if (qgetenv("SYMDBG") == kind)
        qWarning("n=%lld buffers=%zu\n%s", (long long)n, plans.back().funcs[0].buffers.size(),
                 printLoopFunc(plans.back().funcs[0]).c_str());
    }
    std::vector<std::pair<const Graph*, const KernelPlan*>> samples;
    for (size_t i = 0; i < plans.size(); ++i) samples.emplace_back(&graphs[i], &plans[i]);
    auto table = std::make_shared<SymbolicKernels>(buildSymbolicKernels(samples));
    for (const auto& [id, why] : table->refused) qWarning("%s: %s", id.c_str(), why.c_str());
    QCOMPARE(table->kernels.size(), size_t(1));
    const SymbolicKernel& k = table->kernels.begin()->second;
    QVERIFY(k.varying > 0);

    CompileOptions opts;
    opts.symbolic = table;
    opts.schedule = symbolicSchedule();
    size_t compiled = 0;
    // 3M: a kernel that kept a buffer of n floats on the stack crashed there.
    std::vector<int64_t> lengths = {1, 2, 7, 64, 300};
    if (kind == "column_mean") lengths.push_back(3000000);
    for (int64_t n : lengths) {
      Graph g = kernelAt(kind, n);
      std::map<std::string, TensorData> feed;
      std::vector<TensorData> in;
      uint32_t seed = 5;
      for (ValueId v : g.inputs()) {
        in.push_back(randomTensor(*g.value(v).type.staticShape(), seed++, -3, 3));
        feed[g.value(v).name] = in.back();
      }
      auto m = compileGraph(g, opts);
      QVERIFY2(m, m.status().message().c_str());
      const CompileStats s = (*m)->stats();
      QVERIFY2(s.symbolicKernels == 1, qPrintable(QString("not symbolic at n=%1").arg(n)));
      compiled += s.compiledKernels;
      auto out = (*m)->run(feed);
      QVERIFY2(out, out.status().message().c_str());
      const double err = relError(values(*(*out)[g.outputs()[0].index]), reference(kind, in, n));
      QVERIFY2(err <= 1e-5f, qPrintable(QString("n=%1: error %2").arg(n).arg(err)));
    }
    // One kernel for every length: compiled at most once (zero when an earlier
    // test compiled the same kernel into this cache folder).
    QVERIFY2(compiled <= 1, qPrintable(QString::number(compiled)));
  }

  void aKernelThatChangesShapeIsRefusedWithAReason() {
    // Samples that are not one kernel (Relu at two lengths, Exp at the
    // third) do not generalize: refused with a sentence, never merged.
    std::vector<Graph> graphs;
    std::vector<KernelPlan> plans;
    for (int64_t n : {3, 5, 9}) {
      Graph body;
      ValueId x = body.addInput("x", f32({n, 4}));
      body.addOutput(body.node(body.addNode("Relu", {x}, {{"y", f32({n, 4})}})).outputs[0]);
      graphs.push_back(wrapInGroup(std::move(body)));
    }
    Graph other;
    ValueId x = other.addInput("x", f32({4, 4}));
    other.addOutput(other.node(other.addNode("Exp", {x}, {{"y", f32({4, 4})}})).outputs[0]);
    graphs[2] = wrapInGroup(std::move(other));
    for (Graph& g : graphs) {
      auto plan = planKernels(g, {}, {}, {});
      QVERIFY(plan);
      plans.push_back(std::move(*plan));
    }
    std::vector<const LoopFunc*> funcs;
    for (const KernelPlan& p : plans) funcs.push_back(&p.funcs[0]);
    auto k = generalizeKernel(funcs);
    QVERIFY(!k);
    QVERIFY2(k.status().message().find("changes with the dim") != std::string::npos,
             k.status().message().c_str());
  }

 private:
  std::unique_ptr<QTemporaryDir> cacheHome_;
};

QTEST_GUILESS_MAIN(CodegenSymbolicTest)
#include "codegen_symbolic_test.moc"
