// Every fixture model compiles and runs to eager's outputs: each model under
// tests/fixtures (bad_models excluded, as they are not models to run) is
// imported, optimized with the default pipeline, compiled WITHOUT the
// reference fallback and compared with the eager interpreter on its stored
// inputs, at the per-family tolerance of tests/core/eager_test.cpp.
//
// kNeedsFallback lists the fixtures whose ops have no code generation yet;
// they must fail the no-fallback compile, and compile and match with the
// fallback. The test fails when a fixture off the list needs the fallback,
// fails to compile or mismatches (coverage cannot silently regress) and when a
// listed fixture no longer needs the fallback (so the list only shrinks).
#include <QtTest>
#include <chrono>
#include <cmath>
#include <cstring>
#include <set>

#include "../core/fixture_compare.h"
#include "../core/fixture_util.h"
#include "codegen/compiler.h"
#include "core/eager/interpreter.h"
#include "core/onnx/import.h"
#include "core/ops/registry.h"
#include "fixture_dims.h"
#include "passes/pass_manager.h"

using namespace fuselens;
using namespace fuselens::test;

namespace {

// Fixtures that need the reference fallback today. Shrink it as lowering grows.
const std::set<std::string> kNeedsFallback = {
    // FALLBACK-LIST-BEGIN
    // FALLBACK-LIST-END
};

}  // namespace

class CodegenFixturesTest : public QObject {
  Q_OBJECT

  double compileSeconds_ = 0;

 private slots:
  void fixtureCompilesAndMatchesEager_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("dir");
    for (const auto& c : fixtureCases()) {
      if (hasReferenceOutputs(c))
        QTest::newRow(c.name.c_str())
            << QString::fromStdString(c.model.string()) << QString::fromStdString(c.dir.string());
    }
  }

  void fixtureCompilesAndMatchesEager() {
    QFETCH(QString, model);
    QFETCH(QString, dir);
    const std::string name = QTest::currentDataTag();
    auto m = importOnnxFile(model.toStdString());
    QVERIFY2(m.isOk(), m.message().c_str());
    std::string err;
    auto inputs = loadNpys(dir.toStdString(), "input_", err);
    QVERIFY2(err.empty(), err.c_str());
    Status bound = bindInputDims(m->graph, inputs);
    QVERIFY2(bound.isOk(), bound.message().c_str());
    auto eager = runEager(m->graph, inputs);
    QVERIFY2(eager.isOk(), eager.message().c_str());
    auto specs = parsePipeline(defaultPipeline());
    QVERIFY2(specs.isOk(), specs.message().c_str());
    auto piped = runPipeline(m->graph, *specs);
    QVERIFY2(piped.isOk(), piped.message().c_str());
    const Graph& opt = piped->snapshots.back().graph();

    auto t0 = std::chrono::steady_clock::now();
    CompileOptions strict;
    strict.fallback = false;
    auto mod = compileGraph(opt, strict);
    bool listed = kNeedsFallback.count(name) != 0;
    if (mod.isOk() && listed)
      QFAIL("compiles without the reference fallback now: take it off kNeedsFallback");
    if (!mod.isOk()) {
      if (!listed)
        QFAIL(("does not compile without the reference fallback: " + mod.message()).c_str());
      CompileOptions loose;
      mod = compileGraph(opt, loose);
      QVERIFY2(mod.isOk(), ("does not compile even with the fallback: " + mod.message()).c_str());
      QVERIFY2(!fallbackKernelList((*mod)->kernels()).empty(),
               "failed without the fallback yet uses no fallback kernel");
    }
    compileSeconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    auto run = (*mod)->run(inputs);
    QVERIFY2(run.isOk(), run.message().c_str());
    FamilyTolerance tol = toleranceFor(name);
    for (size_t i = 0; i < m->graph.outputs().size(); ++i) {
      const TensorData* want = eager->find(m->graph.outputs()[i]);
      QVERIFY(want);
      ValueId o = opt.outputs()[i];
      QVERIFY2(size_t(o.index) < run->size() && (*run)[o.index],
               "the compiled run lacks an output");
      std::string diff = mismatch(*want, *(*run)[o.index], tol.atol, tol.rtol, "eager");
      QVERIFY2(diff.empty(), (opt.value(o).name + ": " + diff).c_str());
    }
  }

  // A listed name that is no fixture any more would keep the list from shrinking.
  void fallbackListNamesFixtures() {
    std::set<std::string> names;
    for (const auto& c : fixtureCases()) names.insert(c.name);
    for (const std::string& n : kNeedsFallback)
      QVERIFY2(names.count(n), ("kNeedsFallback names no fixture: " + n).c_str());
  }

  void cleanupTestCase() { qInfo("compile time over all fixtures: %.1f s", compileSeconds_); }
};

QTEST_GUILESS_MAIN(CodegenFixturesTest)
#include "codegen_fixtures_test.moc"
