// One memory plan: on every fixture model, the peak the memory-plan pass
// reports ("peak bytes after") is the arena the CPU executor allocates. The
// graph is optimized with the default pipeline plus memory-plan and compiled
// WITHOUT handing the compiler the pass's plan, so the compiler's own call of
// the planner must agree with the pass's. Where the fixture has inputs, the
// arena run (runInto, with reuse and in-place updates) must give the same
// bytes as run, where every kernel output has its own tensor.
#include <QtTest>
#include <cstring>

#include "../core/fixture_util.h"
#include "codegen/compiler.h"
#include "core/onnx/import.h"
#include "fixture_dims.h"
#include "passes/pass_manager.h"

using namespace fuselens;
using namespace fuselens::test;

class CodegenMemoryPlanTest : public QObject {
  Q_OBJECT

  int compared_ = 0, arenaRuns_ = 0;

 private slots:
  void reportedPeakIsTheArena_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("dir");
    for (const auto& c : fixtureCases())
      QTest::newRow(c.name.c_str())
          << QString::fromStdString(c.model.string()) << QString::fromStdString(c.dir.string());
  }

  void reportedPeakIsTheArena() {
    QFETCH(QString, model);
    QFETCH(QString, dir);
    auto m = importOnnxFile(model.toStdString());
    QVERIFY2(m.isOk(), m.message().c_str());
    std::map<std::string, TensorData> inputs;
    std::string err;
    if (std::filesystem::is_directory(dir.toStdString()))
      inputs = loadNpys(dir.toStdString(), "input_", err);
    QVERIFY2(err.empty(), err.c_str());
    Status bound = bindInputDims(m->graph, inputs);
    QVERIFY2(bound.isOk(), bound.message().c_str());
    auto specs = parsePipeline(defaultPipeline() + ",memory-plan");
    QVERIFY2(specs.isOk(), specs.message().c_str());
    auto piped = runPipeline(m->graph, *specs);
    QVERIFY2(piped.isOk(), piped.message().c_str());
    const Snapshot& last = piped->snapshots.back();
    QVERIFY(last.record.bufferPlan);
    const int64_t peak = last.record.stats.at("peak bytes after");

    CompileOptions opts;
    opts.optLevel = 1;
    opts.tuningLog = "";
    auto mod = compileGraph(last.graph(), opts);
    if (!mod.isOk() && !hasReferenceOutputs({"", model.toStdString(), dir.toStdString()}))
      QSKIP(("not a runnable model (no reference outputs) and does not compile: " + mod.message())
                .c_str());
    QVERIFY2(mod.isOk(), mod.message().c_str());
    QCOMPARE((*mod)->arenaBytes(), peak);
    ++compared_;

    bool staticOutputs = !inputs.empty();
    for (ValueId o : last.graph().outputs()) staticOutputs &= last.graph().value(o).type.isStatic();
    if (!staticOutputs || inputs.size() != last.graph().inputs().size()) return;
    auto full = (*mod)->run(inputs);
    QVERIFY2(full.isOk(), full.message().c_str());
    std::map<std::string, TensorData> out;
    Status s = (*mod)->runInto(inputs, out);
    if (!s && s.message().find("run time") != std::string::npos) return;  // dynamic inside
    QVERIFY2(s.isOk(), s.message().c_str());
    for (ValueId o : last.graph().outputs()) {
      const auto& want = (*full)[o.index];
      const TensorData& got = out.at(last.graph().value(o).name);
      QVERIFY(want);
      QVERIFY2(want->bytes.size() == got.bytes.size() &&
                   std::memcmp(want->bytes.data(), got.bytes.data(), got.bytes.size()) == 0,
               ("the arena run differs from run at output " + last.graph().value(o).name).c_str());
    }
    ++arenaRuns_;
  }

  void cleanupTestCase() {
    qInfo("reported peak == executor arena on %d fixtures; arena run == run on %d", compared_,
          arenaRuns_);
  }
};

QTEST_GUILESS_MAIN(CodegenMemoryPlanTest)
#include "codegen_memory_plan_test.moc"
