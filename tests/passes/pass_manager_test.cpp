// The pass manager as its callers use it: the -O levels parse and the default
// is -O2; a pipeline string round-trips; a failing pass (an error, or a graph
// the verifier rejects) writes a reproducer that replays; every pass of the
// -O3 pipeline, run one at a time on every fixture model, verifies and keeps
// the eager outputs; after fusion every kernel boundary has a reason.
#include "passes/pass_manager.h"

#include <QtTest>
#include <filesystem>

#include "../core/fixture_util.h"
#include "core/compare/compare.h"
#include "core/eager/interpreter.h"
#include "core/io/npy.h"
#include "core/ir/printer.h"
#include "core/onnx/import.h"
#include "passes/explain.h"
#include "passes/registry.h"
#include "passes/simplify.h"
#include "tests/support/test_paths.h"

using namespace fuselens;

namespace {

Graph parse(const char* text) {
  auto g = parseGraph(text);
  if (!g) qFatal("test IR does not parse: %s", g.message().c_str());
  return std::move(*g);
}

const char* kChain = R"(
graph @main(%x: f32[2,3]) -> (f32[2,3]) {
  %one = Constant : f32[] dense<[1.0]>
  %a = Mul(%x, %one) : f32[2,3] loc("a")
  %b = Relu(%a) : f32[2,3] loc("b")
  return %b
})";

QString runError(const Graph& g, const std::string& pipeline, const PipelineOptions& opts) {
  auto specs = parsePipeline(pipeline);
  if (!specs) return QString::fromStdString(specs.message());
  auto r = runPipeline(g, *specs, {}, {}, opts);
  return r ? QString() : QString::fromStdString(r.message());
}

std::string reproducerPath(const QString& error) {
  QRegularExpression re("reproducer written to (\\S+\\.fir)");
  auto m = re.match(error);
  return m.hasMatch() ? m.captured(1).toStdString() : std::string();
}

// Outputs of `g` and `after` on the same seeded inputs agree.
QString sameOutputs(const Graph& g, const Graph& after) {
  std::map<std::string, TensorData> inputs;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const Value& v = g.value(g.inputs()[i]);
    auto t = randomTensor(v.type, 7 + i);
    if (!t) return {};  // dynamic dims: nothing to run
    inputs[v.name] = *t;
  }
  auto a = runEager(g, inputs);
  if (!a) return {};
  auto b = runEager(after, inputs);
  if (!b) return QString::fromStdString("does not run after the pass: " + b.message());
  for (size_t i = 0; i < g.outputs().size(); ++i)
    if (!compareTensors(*a->find(g.outputs()[i]), *b->find(after.outputs()[i]), {1e-5, 1e-5})
             .withinTolerance())
      return QString("output %1 changed").arg(i);
  return {};
}

}  // namespace

class PassManagerTest : public QObject {
  Q_OBJECT
 private slots:
  void levelsParseAndDefaultIsO2() {
    QVERIFY(pipelineForLevel(0).empty());
    for (int level = 0; level <= 3; ++level) {
      auto specs = parsePipeline(pipelineForLevel(level));
      QVERIFY2(specs.isOk(), specs.message().c_str());
      QCOMPARE(pipelineString(*specs), pipelineForLevel(level));
    }
    QCOMPARE(defaultPipeline(), pipelineForLevel(2));
    QVERIFY(QString::fromStdString(defaultPipeline()).contains("fuse-ops"));
    QVERIFY(!QString::fromStdString(pipelineForLevel(1)).contains("fuse-ops"));
  }

  void everyRegisteredPassHasASummaryAndRuns() {
    for (const PassInfo& p : passRegistry()) {
      QVERIFY2(!p.summary.empty(), p.name.c_str());
      auto specs = parsePipeline(p.name);
      QVERIFY2(specs.isOk(), specs.message().c_str());
      auto r = runPipeline(parse(kChain), *specs);
      QVERIFY2(r.isOk(), r.message().c_str());
    }
    QVERIFY(simplifyRuleNames().size() >= 10);
  }

  // `layout` without a block blocks to the target's vector width (the session
  // passes the host's); an explicit block wins; a bad block is one sentence.
  void layoutBlockFollowsTheTargetWidth() {
    const Graph g = parse(R"(
graph @main(%x: f32[1,3,5,5]) -> (f32[1,4,5,5]) {
  %w = Constant : f32[4,3,1,1] dense<[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2]>
  %c = Conv(%x, %w) {kernel_shape=[1, 1]} : f32[1,4,5,5] loc("conv")
  return %c
})");
    auto blockOf = [&](const std::string& pipeline, int lanes) -> int64_t {
      PipelineOptions o;
      o.vectorLanes = lanes;
      auto r = runPipeline(g, *parsePipeline(pipeline), {}, {}, o);
      if (!r) return -1;
      return r->snapshots.back().record.stats.at("block");
    };
    QCOMPARE(blockOf("layout", 16), int64_t(16));
    QCOMPARE(blockOf("layout", 8), int64_t(8));
    QCOMPARE(blockOf("layout", 4), int64_t(8));  // SSE: 8, the narrowest block there is
    QCOMPARE(blockOf("layout{block=auto}", 16), int64_t(16));
    QCOMPARE(blockOf("layout{block=8}", 16), int64_t(8));
    QCOMPARE(blockOf("layout{block=16}", 8), int64_t(16));
    auto bad = parsePipeline("layout{block=4}");
    QVERIFY(bad.isOk());
    auto made = findPass("layout")->create(bad->front().options);
    QVERIFY(!made.isOk());
    QVERIFY2(QString::fromStdString(made.message()).contains("must be 8 or 16"),
             made.message().c_str());
  }

  void emptyPipelineKeepsTheGraph() {
    auto r = runPipeline(parse(kChain), {});
    QVERIFY(r.isOk());
    QCOMPARE(r->snapshots.size(), size_t(1));
  }

  void rewritesAreLoggedInTheRecord() {
    auto r = runPipeline(parse(kChain), *parsePipeline("simplify"));
    QVERIFY(r.isOk());
    const PassRecord& rec = r->snapshots.back().record;
    QVERIFY(rec.changed);
    QCOMPARE(rec.stats.at("mul-one"), int64_t(1));
    QCOMPARE(rec.diagnostics.size(), size_t(1));
    QCOMPARE(QString::fromStdString(rec.diagnostics[0].str()),
             QString("node 'a' (Mul): mul-one: Mul 'a' multiplies by a constant 1"));
  }

  // A pass that edits nothing shares the graph before it (no copy, no second
  // verification); any edit, mutableNode included, gives the graph a new stamp.
  void unchangedPassesShareTheirGraph() {
    Graph g = parse(kChain);
    const Graph copy = g;
    QCOMPARE(copy.stamp(), g.stamp());
    g.mutableNode(*g.findNode("a"));
    QVERIFY(g.stamp() != copy.stamp());
    Graph other = copy;
    other.addOutput(*other.findValue("a"));
    QVERIFY(other.stamp() != copy.stamp() && other.stamp() != g.stamp());

    auto r = runPipeline(copy, *parsePipeline("dce,cse,simplify,cse"));
    QVERIFY(r.isOk());
    const auto& s = r->snapshots;
    QCOMPARE(s.size(), size_t(5));
    QVERIFY(!s[1].record.changed && !s[2].record.changed);
    QCOMPARE(s[1].graphPtr.get(), s[0].graphPtr.get());
    QCOMPARE(s[2].graphPtr.get(), s[0].graphPtr.get());
    QVERIFY(s[3].record.changed);
    QVERIFY(s[3].graphPtr != s[2].graphPtr);
    QCOMPARE(s[3].graph().nodeCount(), size_t(1));  // the Mul by one is gone
    QCOMPARE(s[0].graph().nodeCount(), size_t(2));  // and the import snapshot kept it
    QCOMPARE(s[4].graphPtr.get(), s[3].graphPtr.get());
  }

  void unverifiableInputIsRejectedBeforeAnyPass() {
    Graph g = parse(kChain);
    g.mutableValue(*g.findValue("a")).users.clear();  // the Relu no longer listed as a user
    QString err = runError(g, "dce", {});
    QVERIFY2(err.contains("the input graph fails verification"), qPrintable(err));
  }

  void verifierFailureWritesAReproducerThatReplays() {
    QTemporaryDir dir;
    PipelineOptions opts;
    opts.reproducerDir = dir.path().toStdString();
    opts.afterPass = [](const PassSpec& spec, Graph& g) {
      if (spec.name == "simplify") g.mutableValue(*g.findValue("b")).users.push_back(NodeId(0));
      return Status::ok();
    };
    QString err = runError(parse(kChain), "const-fold,simplify,dce", opts);
    QVERIFY2(err.startsWith("pass simplify: the graph fails verification after this pass"),
             qPrintable(err));
    std::string path = reproducerPath(err);
    QVERIFY2(std::filesystem::exists(path), qPrintable(err));
    QVERIFY(QString::fromStdString(path).startsWith(dir.path()));
    auto repro = readReproducer(path);
    QVERIFY2(repro.isOk(), repro.message().c_str());
    QCOMPARE(repro->pipeline, std::string("simplify"));
    QCOMPARE(printGraph(repro->graph), printGraph(parse(kChain)));  // the input of the failing pass
    QFile f(QString::fromStdString(path));
    QVERIFY(f.open(QIODevice::ReadOnly));
    QVERIFY(f.readAll().contains("// full pipeline: const-fold,simplify,dce"));
    // Replayed with the same fault it fails again; without it, it runs.
    PipelineOptions replay = opts;
    replay.writeReproducer = false;
    QVERIFY(runError(repro->graph, repro->pipeline, replay).contains("fails verification"));
    QVERIFY(runError(repro->graph, repro->pipeline, {}).isEmpty());
  }

  void passErrorWritesAReproducerWithConstantsInFull() {
    QTemporaryDir dir;
    PipelineOptions opts;
    opts.reproducerDir = dir.path().toStdString();
    opts.afterPass = [](const PassSpec& spec, Graph&) {
      return spec.name == "cse" ? Status::error("injected failure") : Status::ok();
    };
    Graph g = parse(R"(
graph @main(%x: f32[20]) -> (f32[20]) {
  %w = Constant : f32[20] dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.5]>
  %y = Add(%x, %w) : f32[20] loc("y")
  return %y
})");
    QString err = runError(g, "cse", opts);
    QVERIFY2(err.startsWith("pass cse: injected failure; reproducer written to"), qPrintable(err));
    auto repro = readReproducer(reproducerPath(err));
    QVERIFY2(repro.isOk(), repro.message().c_str());
    QCOMPARE(repro->graph.value(*repro->graph.findValue("w")).constant->at(19), 20.5);
  }

  void readReproducerRejectsOtherFiles() {
    auto r = readReproducer(fuselens::test::sourcePath("/README.md"));
    QVERIFY(!r.isOk());
    QVERIFY(QString::fromStdString(r.message()).contains("not a fuselens reproducer"));
  }

  // Every pass of -O3, alone and in order, on every fixture model: verified
  // (runPipeline does that) and the same eager outputs.
  void everyPassKeepsFixtureOutputs_data() {
    QTest::addColumn<QString>("model");
    for (const auto& c : test::fixtureCases())
      QTest::newRow(c.name.c_str()) << QString::fromStdString(c.model.string());
  }
  void everyPassKeepsFixtureOutputs() {
    QFETCH(QString, model);
    auto m = importOnnxFile(model.toStdString());
    QVERIFY2(m.isOk(), m.message().c_str());
    auto specs = parsePipeline(pipelineForLevel(3));
    QVERIFY(specs.isOk());
    for (const PassSpec& spec : *specs) {
      auto alone = runPipeline(m->graph, {spec});
      QVERIFY2(alone.isOk(), alone.message().c_str());
      QString diff = sameOutputs(m->graph, alone->snapshots.back().graph());
      QVERIFY2(diff.isEmpty(), qPrintable(QString::fromStdString(spec.str()) + ": " + diff));
    }
    auto all = runPipeline(m->graph, *specs);
    QVERIFY2(all.isOk(), all.message().c_str());
    for (const Snapshot& s : all->snapshots) {
      QString diff = sameOutputs(m->graph, s.graph());
      QVERIFY2(diff.isEmpty(), qPrintable(QString::fromStdString(s.label) + ": " + diff));
    }
    for (const SplitEdge& e : splitEdges(all->snapshots.back().graph(), all->decisions))
      QVERIFY2(e.decision, qPrintable(QString::fromStdString(e.producerName + " -> " +
                                                             e.consumerName + ": " + e.reason)));
  }

  // The multi-anchor groups (attention, two-reduction softmax/LayerNorm) keep
  // meaning too, and every boundary still has its reason.
  void multiAnchorKeepsFixtureOutputs_data() { everyPassKeepsFixtureOutputs_data(); }
  void multiAnchorKeepsFixtureOutputs() {
    QFETCH(QString, model);
    auto m = importOnnxFile(model.toStdString());
    QVERIFY2(m.isOk(), m.message().c_str());
    auto specs = parsePipeline(
        "const-fold,cse,simplify,dce,fuse-patterns{multi-anchor=1},"
        "fuse-ops{max-ops=16,multi-anchor=1}");
    QVERIFY2(specs.isOk(), specs.message().c_str());
    auto all = runPipeline(m->graph, *specs);
    QVERIFY2(all.isOk(), all.message().c_str());
    QString diff = sameOutputs(m->graph, all->snapshots.back().graph());
    QVERIFY2(diff.isEmpty(), qPrintable(diff));
    for (const SplitEdge& e : splitEdges(all->snapshots.back().graph(), all->decisions))
      QVERIFY2(e.decision, qPrintable(QString::fromStdString(e.producerName + " -> " +
                                                             e.consumerName + ": " + e.reason)));
  }

  // The issue's example pipeline parses and runs; memory-plan leaves its plan
  // as data: every planned value has a buffer inside the arena.
  void issuePipelineRunsAndLeavesABufferPlan() {
    auto specs = parsePipeline(
        "const-fold,dce,cse,simplify,fuse-patterns,fuse-ops{max-ops=8},layout{block=8},memory-"
        "plan");
    QVERIFY2(specs.isOk(), specs.message().c_str());
    // Two MatMuls and a Softmax: three kernels, two intermediates in the arena.
    auto r = runPipeline(parse(R"(
graph @main(%x: f32[2,3], %w: f32[3,3]) -> (f32[2,3]) {
  %m = MatMul(%x, %w) : f32[2,3]
  %s = Softmax(%m) : f32[2,3]
  %y = MatMul(%s, %w) : f32[2,3]
  return %y
})"),
                         *specs);
    QVERIFY2(r.isOk(), r.message().c_str());
    const PassRecord& rec = r->snapshots.back().record;
    QVERIFY(rec.bufferPlan);
    QVERIFY(!rec.bufferPlan->values.empty());
    QCOMPARE(int64_t(rec.bufferPlan->bufferBytes.size()), rec.stats.at("buffers"));
    QCOMPARE(rec.bufferPlan->arenaBytes, rec.stats.at("peak bytes after"));
    for (const auto& e : rec.bufferPlan->values) {
      QVERIFY(e.buffer >= 0 && size_t(e.buffer) < rec.bufferPlan->bufferBytes.size());
      QVERIFY(e.offset + e.bytes <= rec.bufferPlan->arenaBytes);
      QVERIFY(r->snapshots.back().graph().hasValue(e.value));
    }
    QVERIFY(!r->snapshots[r->snapshots.size() - 2].record.bufferPlan);  // only memory-plan sets one
  }
};

QTEST_APPLESS_MAIN(PassManagerTest)
#include "pass_manager_test.moc"
