// The tuner: candidates respect the register file and come best-ranked; a
// short tuning run writes a log keyed by signature and host, the log survives
// a save/load round trip, and a compile that reads it uses the tuned tile and
// still computes the right values. No timing is asserted.
#include <QtTest>

#include "codegen/lower/lower.h"
#include "codegen/schedule/tuner.h"
#include "codegen/target.h"
#include "core/compare/compare.h"
#include "core/eager/interpreter.h"
#include "core/ops/registry.h"
#include "passes/pass_manager.h"
#include "test_util.h"

using namespace fuselens;
using namespace fuselens::testing;

class CodegenTunerTest : public QObject {
  Q_OBJECT

 private slots:
  void candidatesFitRegisters();
  void signatureNamesOpsAndConstants();
  void tuneWritesAndReusesLog();
  void badLogIsAnError();
  void loopCandidatesNameLoops();
  void tunesAndReusesLoopKernel();
  void tunesAndReusesConvTile();
};

void CodegenTunerTest::candidatesFitRegisters() {
  Schedule base = Schedule::defaults();
  auto c = matmulCandidates(base, 128, 3072, 768, 16, 32);
  QVERIFY(c.size() >= 10);
  for (const Schedule& s : c) {
    int64_t nv = s.matmul.nr / 16;
    QVERIFY(s.matmul.mr * nv + nv + 1 <= 32);
    QCOMPARE(s.matmul.nr % 16, int64_t(0));
  }
  // AVX2-sized register file: smaller tiles only.
  for (const Schedule& s : matmulCandidates(base, 64, 64, 64, 8, 16))
    QVERIFY(s.matmul.mr * (s.matmul.nr / 8) + s.matmul.nr / 8 + 1 <= 16);
  // Rows fewer than a tile never get that tile.
  for (const Schedule& s : matmulCandidates(base, 3, 64, 64, 16, 32)) QVERIFY(s.matmul.mr <= 3);
}

void CodegenTunerTest::signatureNamesOpsAndConstants() {
  Graph g;
  ValueId x = g.addInput("x", f32({4, 8}));
  ValueId w = g.addConstant("w", std::make_shared<const TensorData>(randomTensor({8, 2}, 1)));
  Attributes a;
  a.set("transB", int64_t(0));
  NodeId n = g.addNode("Gemm", {x, w}, {{"y", f32({4, 2})}}, a);
  QCOMPARE(kernelSignature(g, g.node(n)),
           std::string("Gemm{transB=0}(f32[4,8],f32[8,2]c)->(f32[4,2])"));
}

void CodegenTunerTest::tuneWritesAndReusesLog() {
  Graph g;
  ValueId x = g.addInput("x", f32({40, 64}));
  auto wt = std::make_shared<const TensorData>(randomTensor({64, 96}, 2));
  ValueId w = g.addConstant("w", wt);
  g.addOutput(g.node(g.addNode("MatMul", {x, w}, {{"y", f32({40, 96})}}, {}, "fc")).outputs[0]);

  TuningLog log;
  TuneOptions o;
  o.budgetSeconds = 2;
  o.runsPerCandidate = 2;
  o.maxCandidatesPerKernel = 4;
  std::vector<double> fractions;
  auto r = tuneGraph(g, o, log, [&](double f, const std::string&) { fractions.push_back(f); });
  QVERIFY2(r.isOk(), r.message().c_str());
  QCOMPARE(r->size(), size_t(1));
  QVERIFY((*r)[0].measured >= 2);
  QVERIFY((*r)[0].bestSeconds <= (*r)[0].defaultSeconds);
  QCOMPARE(fractions.back(), 1.0);
  QCOMPARE(log.entries().size(), size_t(1));

  // Force a recognizable tile into the log, round-trip it, and compile with it.
  TuningEntry e = log.entries()[0];
  e.schedule.matmul.mr = 5;
  e.schedule.matmul.nr = 2 * hostTarget().vectorLanes();
  e.schedule.matmul.minWork = 0;
  log.put(e);
  QCOMPARE(log.entries().size(), size_t(1));
  QTemporaryDir dir;
  std::string path = dir.path().toStdString() + "/tune.json";
  QVERIFY(log.save(path).isOk());
  auto back = TuningLog::load(path);
  QVERIFY(back.isOk());
  QVERIFY(back->find(hostTarget().key(), kernelSignature(g, g.node(g.nodeIds()[0]))) ==
          std::optional<Schedule>(e.schedule));

  CompileOptions co;
  co.tuningLog = path;
  auto m = compileGraph(g, co);
  QVERIFY2(m.isOk(), m.message().c_str());
  std::string tile = "[" + std::to_string(5 * e.schedule.matmul.nr) + "];  // local";
  QVERIFY2((*m)->loopIrText().find(tile) != std::string::npos, (*m)->loopIrText().c_str());
  TensorData xt = randomTensor({40, 64}, 3);
  auto out = (*m)->run({{"x", xt}});
  QVERIFY(out.isOk());
  Shape os;
  auto want = refMatMul(values(xt), {40, 64}, values(*wt), {64, 96}, &os);
  auto got = values(*(*out)[g.outputs()[0].index]);
  for (size_t i = 0; i < want.size(); ++i) QVERIFY(std::fabs(got[i] - want[i]) <= 1e-4f);
}

void CodegenTunerTest::badLogIsAnError() {
  QTemporaryDir dir;
  std::string path = dir.path().toStdString() + "/bad.json";
  QFile f(QString::fromStdString(path));
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write("[1, 2]");
  f.close();
  auto l = TuningLog::load(path);
  QVERIFY(!l.isOk());
  QVERIFY(l.message().find("not a FuseLens tuning log") != std::string::npos);
  QVERIFY(TuningLog::load(path + ".missing").isOk());  // no file yet: empty log
}

namespace {

// y = Relu(x + b) on [256, 1000]: a kernel without a product.
Graph addRelu() {
  Graph g;
  ValueId x = g.addInput("x", f32({256, 1000}));
  ValueId b = g.addConstant("b", std::make_shared<const TensorData>(randomTensor({1000}, 4)));
  ValueId a = g.node(g.addNode("Add", {x, b}, {{"a", f32({256, 1000})}}, {}, "add")).outputs[0];
  g.addOutput(g.node(g.addNode("Relu", {a}, {{"y", f32({256, 1000})}}, {}, "relu")).outputs[0]);
  return g;
}

}  // namespace

void CodegenTunerTest::loopCandidatesNameLoops() {
  Graph g = addRelu();
  const Node& relu = g.node(g.nodeIds().back());
  Schedule base = Schedule::defaults();
  auto f = lowerKernel(g, relu, "k", base);
  QVERIFY(f.isOk());
  applyDefaultSteps(*f, base);
  auto c = loopCandidates(base, *f, 16);
  QVERIFY(c.size() >= 4);
  bool oneThread = false, split = false, unrolled = false;
  for (const Schedule& s : c) {
    oneThread |= s.threads == 1;
    for (const ScheduleStep& st : s.steps) {
      split |= st.op == "split" && st.loop == "i1" && st.factor == 16;
      unrolled |= st.op == "unroll";
    }
    // Every candidate applies to the kernel it was made for.
    auto g2 = lowerKernel(g, relu, "k", s);
    QVERIFY(g2.isOk());
    Status r = scheduleKernel(*g2, s);
    QVERIFY2(r.isOk(), (s.name + ": " + r.message()).c_str());
  }
  QVERIFY(oneThread && split && unrolled);
}

void CodegenTunerTest::tunesAndReusesLoopKernel() {
  Graph g = addRelu();
  TuningLog log;
  TuneOptions o;
  o.budgetSeconds = 2;
  o.runsPerCandidate = 2;
  o.maxCandidatesPerKernel = 3;
  auto r = tuneGraph(g, o, log);
  QVERIFY2(r.isOk(), r.message().c_str());
  // The Add and the Relu kernels are both jobs; a slow machine may spend the
  // budget on the first, so only "at least one, each logged" is certain.
  QVERIFY(!r->empty() && r->size() <= 2);
  for (const KernelTuneResult& k : *r)
    QVERIFY(k.measured >= 1 && k.bestSeconds <= k.defaultSeconds);
  QCOMPARE(log.entries().size(), r->size());

  // A logged step list is what the next compile runs.
  const Node& relu = g.node(g.nodeIds().back());
  TuningEntry e;
  e.target = hostTarget().key();
  e.signature = kernelSignature(g, relu);
  e.schedule = Schedule::defaults();
  e.schedule.name = "split16";
  e.schedule.steps = {{"split", "i1", {}, 16, ""}};
  log.put(e);
  QTemporaryDir dir;
  std::string path = dir.path().toStdString() + "/tune.json";
  QVERIFY(log.save(path).isOk());
  auto back = TuningLog::load(path);
  QVERIFY(back.isOk());
  QVERIFY(back->find(e.target, e.signature) == std::optional<Schedule>(e.schedule));
  CompileOptions co;
  co.tuningLog = path;
  auto m = compileGraph(g, co);
  QVERIFY2(m.isOk(), m.message().c_str());
  QVERIFY2((*m)->loopIrText().find("i1i < 16; ++i1i) {  // vectorized") != std::string::npos,
           (*m)->loopIrText().c_str());
  TensorData xt = randomTensor({256, 1000}, 5);
  auto out = (*m)->run({{"x", xt}});
  QVERIFY(out.isOk());
  std::vector<float> xv = values(xt),
                     bv = values(*g.value(g.node(g.nodeIds()[0]).inputs[1]).constant);
  std::vector<float> got = values(*(*out)[g.outputs()[0].index]);
  for (size_t i = 0; i < got.size(); ++i) QCOMPARE(got[i], std::max(0.0f, xv[i] + bv[i % 1000]));
}

namespace {

// Conv [1,16,6,14] * [32,16,3,3] (pads 1, bias) + Relu, the plain graph.
Graph convRelu() {
  Graph g;
  ValueId x = g.addInput("x", f32({1, 16, 6, 14}));
  ValueId w =
      g.addConstant("w", std::make_shared<const TensorData>(randomTensor({32, 16, 3, 3}, 6)));
  ValueId b = g.addConstant("b", std::make_shared<const TensorData>(randomTensor({32}, 7)));
  Attributes a;
  a.set("pads", Shape{1, 1, 1, 1});
  ValueId y = g.node(g.addNode("Conv", {x, w, b}, {{"c", f32({})}}, a, "conv")).outputs[0];
  g.addOutput(g.node(g.addNode("Relu", {y}, {{"y", f32({})}}, {}, "relu")).outputs[0]);
  if (Status s = inferGraphTypes(g); !s.isOk()) qWarning("infer: %s", s.message().c_str());
  g.markAsOriginal();
  return g;
}

}  // namespace

// A blocked conv kernel gets register-tile candidates besides one thread /
// the pool, and a logged tile is what the next compile builds.
void CodegenTunerTest::tunesAndReusesConvTile() {
  Graph g = convRelu();
  auto specs = parsePipeline("layout{block=16},fuse-ops{max-ops=8}");
  QVERIFY(specs.isOk());
  auto p = runPipeline(g, *specs);
  QVERIFY2(p.isOk(), p.message().c_str());
  const Graph& opt = p->snapshots.back().graph();
  std::optional<NodeId> convKernel;
  for (NodeId id : opt.nodeIds())
    if (kernelSignature(opt, opt.node(id)).find("ConvNCHWc") != std::string::npos) convKernel = id;
  QVERIFY(convKernel);
  const int registers = hostTarget().vectorBits >= 512 ? 32 : 16;
  QVERIFY(convCandidates(Schedule::defaults(), opt, hostTarget().vectorLanes(), registers).size() >=
          3);

  TuningLog log;
  TuneOptions o;
  o.budgetSeconds = 4;
  o.runsPerCandidate = 2;
  o.maxCandidatesPerKernel = 4;
  auto r = tuneGraph(opt, o, log);
  QVERIFY2(r.isOk(), r.message().c_str());
  std::string sig = kernelSignature(opt, opt.node(*convKernel));
  bool found = false;
  for (const KernelTuneResult& k : *r) {
    if (k.signature != sig) continue;
    found = true;
    // The conv kernel is the first job and has the budget to time more than
    // the baseline and one thread; 4 seconds is far more than a few compiles.
    QVERIFY2(k.measured > 2, std::to_string(k.measured).c_str());
    QVERIFY(k.bestSeconds <= k.defaultSeconds);
  }
  QVERIFY(found);

  // A 5-pixel x 2-block tile in the log (the automatic rule picks 7 x 2 or
  // 14 x 1 here) is what the next compile builds: acc[2 * 5 * 16] locals.
  TuningEntry e;
  e.target = hostTarget().key();
  e.signature = sig;
  e.schedule = Schedule::defaults();
  e.schedule.name = "conv5x2";
  e.schedule.conv = {5, 2};
  log.put(e);
  QTemporaryDir dir;
  std::string path = dir.path().toStdString() + "/tune.json";
  QVERIFY(log.save(path).isOk());
  auto back = TuningLog::load(path);
  QVERIFY(back.isOk());
  QVERIFY(back->find(e.target, sig) == std::optional<Schedule>(e.schedule));
  CompileOptions co;
  co.tuningLog = path;
  auto m = compileGraph(opt, co);
  QVERIFY2(m.isOk(), m.message().c_str());
  QVERIFY2((*m)->loopIrText().find("[160];  // local") != std::string::npos,
           (*m)->loopIrText().c_str());
  std::map<std::string, TensorData> in = {{"x", randomTensor({1, 16, 6, 14}, 8)}};
  auto eager = runEager(g, in);
  QVERIFY(eager.isOk());
  auto out = (*m)->run(in);
  QVERIFY2(out.isOk(), out.message().c_str());
  ValueId y = opt.outputs()[0];
  const TensorData* want = eager->find(opt.value(y).origin);
  QVERIFY(want && (*out)[y.index]);
  TensorMetrics tm = compareTensors(*want, g.value(opt.value(y).origin).layout, *(*out)[y.index],
                                    opt.value(y).layout, {1e-4, 1e-4});
  QVERIFY2(tm.withinTolerance(), std::to_string(tm.maxAbs).c_str());
}

QTEST_APPLESS_MAIN(CodegenTunerTest)
#include "codegen_tuner_test.moc"
