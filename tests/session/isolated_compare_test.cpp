// Isolated comparison (session/isolated_compare.h): every kernel compiled
// alone and fed eager inputs. Checks that a clean model passes kernel by kernel,
// that a wrong reference for one kernel's output is blamed on that kernel, that
// an end-to-end error whose kernel is fine alone is called accumulated
// upstream, and that two compiled runs on the same inputs are bitwise equal
// (the comparison is only meaningful if the compiled run is deterministic).
#include <QtTest>

#include "session/session.h"
#include "tests/support/test_paths.h"

using namespace fuselens;

namespace {
std::string sample(const char* name) { return fuselens::test::sourcePath("/samples/") + name; }

TensorData perturbed(const TensorData& t, float by) {
  TensorData copy = t;
  copy.data<float>()[0] += by;
  return copy;
}
}  // namespace

class IsolatedCompareTest : public QObject {
  Q_OBJECT
 private slots:
  void cleanModelPassesKernelByKernel() {
    Session s;
    QVERIFY(s.open(sample("mlp.onnx")).isOk());
    QVERIFY(s.optimize(defaultPipeline()).isOk());
    auto rep = s.compareIsolated(*s.randomInputs(3), Tolerance{1e-4, 1e-4});
    QVERIFY2(rep.isOk(), rep.message().c_str());
    QCOMPARE(rep->rows.size(), size_t(3));  // one output per kernel: two groups and the softmax
    for (const IsolatedRow& r : rep->rows) {
      QCOMPARE(int(r.verdict), int(IsolatedVerdict::Ok));
      QVERIFY(r.endToEnd.has_value());
      QVERIFY(r.isolated.count > 0);
    }
    QVERIFY(rep->allWithin());
    QVERIFY(rep->firstKernelDiffering() == nullptr);
  }

  // The Relu after an If reads a value whose length only the branch decides
  // (f32[1,?]): alone, it is compiled for the shape of the eager tensor it is
  // fed, on both branches, never skipped.
  void aKernelAfterAnIfIsCompiledForItsFeeds() {
    Session s;
    QVERIFY(s.open(fuselens::test::sourcePath("/tests/cli/data/if_dynamic/model.onnx")).isOk());
    QVERIFY(s.optimize(defaultPipeline()).isOk());
    for (float sign : {1.0f, -1.0f}) {
      TensorData x(DType::F32, {1, 8});
      for (int64_t i = 0; i < 8; ++i) x.data<float>()[i] = sign * float(i + 1) * 0.25f;
      auto rep = s.compareIsolated({{"x", x}}, CompareOptions{});
      QVERIFY2(rep.isOk(), rep.message().c_str());
      QCOMPARE(rep->rows.size(), size_t(3));
      for (const IsolatedRow& r : rep->rows) {
        QVERIFY2(r.skipped.empty(), r.skipped.c_str());
        QCOMPARE(int(r.verdict), int(IsolatedVerdict::Ok));
      }
      QCOMPARE(rep->rows.back().isolated.count, sign > 0 ? 8 : 3);
    }
  }

  void verdictsBlameTheRightPlace() {
    Session s;
    QVERIFY(s.open(sample("mlp.onnx")).isOk());
    QVERIFY(s.optimize(defaultPipeline()).isOk());
    QVERIFY(s.compile().isOk());
    auto inputs = *s.randomInputs(3);
    auto eager = runEager(s.original(), inputs);
    QVERIFY(eager.isOk());
    auto run = s.compiled()->run(inputs);
    QVERIFY(run.isOk());
    const Graph& g = s.finalGraph();
    const std::vector<KernelInfo>& ks = s.compiled()->kernels();
    QVERIFY(ks.size() >= 2);

    // The reference of kernel 1's output is off: kernel 1 differs even alone.
    ValueId out1 = ks[1].outputs[0];
    EagerResult wrongRef = *eager;
    wrongRef.tensors[g.value(out1).origin.index] =
        perturbed(*eager->find(g.value(out1).origin), 1.0f);
    auto rep = compareIsolated(g, ks, wrongRef, &*run, Tolerance{1e-4, 1e-4}, {});
    QVERIFY(rep.isOk());
    const IsolatedRow* first = rep->firstKernelDiffering();
    QVERIFY(first != nullptr);
    QCOMPARE(first->kernel, ks[1].name);
    QVERIFY(!rep->allWithin());

    // The compiled end-to-end tensor of kernel 0 is off, the kernel alone is fine.
    ValueId out0 = ks[0].outputs[0];
    std::vector<std::optional<TensorData>> drifted = *run;
    drifted[out0.index] = perturbed(*(*run)[out0.index], 1.0f);
    rep = compareIsolated(g, ks, *eager, &drifted, Tolerance{1e-4, 1e-4}, {});
    QVERIFY(rep.isOk());
    QVERIFY(rep->firstKernelDiffering() == nullptr);
    QCOMPARE(int(rep->rows[0].verdict), int(IsolatedVerdict::AccumulatedUpstream));
    QVERIFY(!rep->allWithin());
  }

  // Rounding verdicts in every layout: two convolutions blocked to NCHW8c, the
  // second fed the eager tensor stored blocked; every kernel checked (none
  // skipped), each with its own and carried error; a perturbed kernel is the
  // first whose own error is beyond rounding, the kernel after it carries it.
  void blockedKernelsAreCheckedAndPerturbationsLocalized() {
    Session s;
    QVERIFY(s.open(fuselens::test::sourcePath("/tests/cli/data/two_convs/model.onnx")).isOk());
    QVERIFY(s.optimize(defaultPipeline()).isOk());
    auto inputs = *s.randomInputs(5);
    auto rep = s.compareIsolated(inputs, CompareOptions{});
    QVERIFY2(rep.isOk(), rep.isOk() ? "" : rep.message().c_str());
    QCOMPARE(rep->kernels.size(), size_t(2));
    for (const IsolatedRow& r : rep->rows) {
      QCOMPARE(int(r.verdict), int(IsolatedVerdict::Ok));
      QVERIFY(r.own && r.carried);
      QVERIFY(r.own->expected > 0);
    }
    QVERIFY(rep->firstKernelDiffering() == nullptr);

    s.perturbations["k0"] = 1e-3;
    rep = s.compareIsolated(inputs, CompareOptions{});
    QVERIFY(rep.isOk());
    const IsolatedRow* first = rep->firstKernelDiffering();
    QVERIFY(first != nullptr);
    QVERIFY(QString::fromStdString(first->kernel).startsWith("k0_"));
    QCOMPARE(int(rep->rows[1].verdict), int(IsolatedVerdict::AccumulatedUpstream));
    auto e2e = s.compare(inputs, CompareOptions{});
    QVERIFY(e2e.isOk());
    QVERIFY(e2e->firstDivergent() != nullptr);
    QCOMPARE(e2e->firstDivergent()->name, std::string("r1"));
  }

  void compiledRunIsDeterministic() {
    Session s;
    QVERIFY(s.open(sample("mlp.onnx")).isOk());
    QVERIFY(s.optimize(defaultPipeline()).isOk());
    QVERIFY(s.compile().isOk());
    auto inputs = *s.randomInputs(11);
    auto a = s.compiled()->run(inputs);
    auto b = s.compiled()->run(inputs);
    QVERIFY(a.isOk() && b.isOk());
    QCOMPARE(a->size(), b->size());
    int compared = 0;
    for (size_t i = 0; i < a->size(); ++i) {
      QCOMPARE((*a)[i].has_value(), (*b)[i].has_value());
      if (!(*a)[i]) continue;
      QVERIFY((*a)[i]->bytes == (*b)[i]->bytes);
      ++compared;
    }
    QVERIFY(compared >= 4);
  }
};

QTEST_GUILESS_MAIN(IsolatedCompareTest)
#include "isolated_compare_test.moc"
