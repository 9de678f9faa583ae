// Every fixture at reduced precision: each model under tests/fixtures with
// reference outputs (the bundled samples included) is opened with the default
// pipeline and --precision f16, then bf16, compiled WITHOUT the reference
// fallback (no kernel may be skipped: every compute class lowers f16/bf16
// operands and results), run, and compared with the eager f32 reference in
// rounding mode at the storage's floor. Each compiled tensor must get a
// verdict (within rounding, or flagged), graph outputs keep their dtype, and
// the floor the verdicts take is the precision the run stores.
// The tally per precision is printed for docs/numerics.md.
#include <QtTest>
#include <map>

#include "../core/fixture_util.h"
#include "core/compare/storage_floor.h"
#include "session/pipeline_choice.h"
#include "session/session.h"

using namespace fuselens;
using namespace fuselens::test;

namespace {

struct Tally {
  int models = 0, between = 0, reduced = 0, within = 0, beyond = 0, wrong = 0;
};

// Kernel-boundary f32 tensors that are neither graph inputs nor outputs.
bool hasF32BetweenKernels(const Graph& g) {
  for (ValueId v : g.valueIds()) {
    const Value& val = g.value(v);
    if (val.type.dtype != DType::F32 || !val.producer.valid() || g.isGraphOutput(v)) continue;
    if (g.node(val.producer).op == kFusedOp) return true;
  }
  return false;
}

}  // namespace

class PrecisionFixturesTest : public QObject {
  Q_OBJECT

  std::map<std::string, Tally> tally_;

 private slots:
  void fixtureRunsReduced_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("dir");
    QTest::addColumn<QString>("precision");
    for (const char* p : {"f16", "bf16"})
      for (const auto& c : fixtureCases())
        if (hasReferenceOutputs(c))
          QTest::newRow((c.name + "@" + p).c_str())
              << QString::fromStdString(c.model.string()) << QString::fromStdString(c.dir.string())
              << QString(p);
  }

  void fixtureRunsReduced() {
    QFETCH(QString, model);
    QFETCH(QString, dir);
    QFETCH(QString, precision);
    const std::string p = precision.toStdString();
    std::string err;
    auto inputs = loadNpys(dir.toStdString(), "input_", err);
    QVERIFY2(err.empty(), err.c_str());

    Session f32;  // the reference pipeline: which tensors cross kernels at f32
    QVERIFY(f32.open(model.toStdString()).isOk());
    QVERIFY(f32.optimize(defaultPipelineText()).isOk());
    QVERIFY(f32.fitToInputs(inputs).isOk());

    Session s;
    QVERIFY(s.open(model.toStdString()).isOk());
    Status opt = s.optimize(*withPrecision(defaultPipelineText(), p));
    QVERIFY2(opt.isOk(), opt.message().c_str());
    Status fit = s.fitToInputs(inputs);
    QVERIFY2(fit.isOk(), fit.message().c_str());
    CompileOptions strict;
    strict.fallback = false;
    Status compiled = s.compile(strict);
    QVERIFY2(compiled.isOk(), compiled.message().c_str());

    const Graph& g = s.finalGraph();
    const Graph& g32 = f32.finalGraph();
    QCOMPARE(g.outputs().size(), g32.outputs().size());
    for (size_t i = 0; i < g.outputs().size(); ++i)
      QCOMPARE(g.value(g.outputs()[i]).type.dtype, g32.value(g32.outputs()[i]).type.dtype);
    // What the run stores reduced is what the verdicts take as their floor.
    const DType stored = storagePrecision(s.original(), g);
    QVERIFY(stored == DType::F32 || stored == *parseDType(p));
    Tally& t = tally_[p];
    ++t.models;
    t.between += hasF32BetweenKernels(g32);
    t.reduced += stored != DType::F32;

    auto rep = s.compare(inputs, CompareOptions());
    QVERIFY2(rep.isOk(), rep.message().c_str());
    for (const CompareRow& r : rep->rows) {
      QVERIFY2(!r.fallback, ("a skipped kernel: " + r.producer).c_str());
      QVERIFY2(r.rounding || !rep->referenceNote.empty(), ("no verdict for " + r.name).c_str());
      if (r.verdict == NumericVerdict::WithinRounding) ++t.within;
      if (r.verdict == NumericVerdict::BeyondRounding) ++t.beyond;
      if (r.verdict == NumericVerdict::Wrong) ++t.wrong;
    }
  }

  void cleanupTestCase() {
    for (const auto& [p, t] : tally_)
      qInfo(
          "%s: %d models, %d with f32 tensors between kernels, %d storing some in %s; "
          "tensors within rounding %d, beyond %d, wrong %d",
          p.c_str(), t.models, t.between, t.reduced, p.c_str(), t.within, t.beyond, t.wrong);
  }
};

QTEST_GUILESS_MAIN(PrecisionFixturesTest)
#include "precision_fixtures_test.moc"
