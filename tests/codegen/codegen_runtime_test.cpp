// The CPU runtime: the liveness memory plan (reuse, pinned graph outputs,
// aliases, scratch), runInto through the arena against run, its checks, and
// that a compile runs with the memory-plan pass's plan when it is given one.
#include <QtTest>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>

#include "codegen/compiler.h"
#include "codegen/runtime/memory_plan.h"
#include "codegen/runtime/runtime.h"
#include "core/onnx/import.h"
#include "passes/pass_manager.h"
#include "test_util.h"
#include "tests/support/test_paths.h"

using namespace fuselens;
using namespace fuselens::testing;

namespace {

// x -> Exp -> Tanh -> Exp -> Tanh -> y, four kernels (no fusion), [64,64] each.
Graph chain(ValueId* mid = nullptr) {
  Graph g;
  ValueId v = g.addInput("x", f32({64, 64}));
  const char* ops[] = {"Exp", "Tanh", "Exp", "Tanh"};
  for (int i = 0; i < 4; ++i) {
    v = g.node(g.addNode(ops[i], {v}, {{"t" + std::to_string(i), f32({64, 64})}})).outputs[0];
    if (i == 1 && mid) *mid = v;
  }
  g.addOutput(v);
  return g;
}

}  // namespace

class CodegenRuntimeTest : public QObject {
  Q_OBJECT

 private slots:
  void planReusesDeadTensors();
  void planKeepsOutputsAndAliasesOut();
  void runIntoMatchesRun();
  void runIntoChecksOutputs();
  void runIntoKeepsRunTimeShapes();
  void runsWithTheGivenPlan();
  void parallelForRunsEveryIndexOnce();
  void parallelForStealsFromASlowThread();
};

void CodegenRuntimeTest::planReusesDeadTensors() {
  Graph g = chain();
  std::vector<ValueId> vals;
  for (NodeId id : g.nodeIds()) vals.push_back(g.node(id).outputs[0]);
  auto run = runStepsOf(g);
  QVERIFY(run.isOk());
  QCOMPARE(run->steps.size(), size_t(4));
  MemoryPlan p = arenaLayout(std::make_shared<BufferPlan>(planBuffers(g, *run, {64, false})), 100);
  QCOMPARE(p.offsetOf.size(), size_t(3));  // t0..t2; t3 is the graph output
  QCOMPARE(p.buffers->unsharedBytes, int64_t(3 * 64 * 64 * 4));
  // t0 dies after kernel 1, so t2 takes its place: two tensors' worth.
  QCOMPARE(p.offsetOf[vals[2].index], p.offsetOf[vals[0].index]);
  QVERIFY(p.offsetOf[vals[1].index] != p.offsetOf[vals[0].index]);
  QCOMPARE(p.arenaBytes, int64_t(2 * 64 * 64 * 4));
  QCOMPARE(p.scratchBytes, int64_t(128));  // scratch 100 rounded to 64, a block of its own
  // In place, each elementwise kernel overwrites the input it reads last: one tensor.
  BufferPlan inPlace = planBuffers(g, *run);
  QCOMPARE(inPlace.arenaBytes, int64_t(64 * 64 * 4));
  QCOMPARE(int(inPlace.values[1].how), int(BufferPlan::Entry::How::InPlace));
}

void CodegenRuntimeTest::planKeepsOutputsAndAliasesOut() {
  ValueId mid;
  Graph g = chain(&mid);
  g.addOutput(mid);  // an intermediate that is also a graph output: caller memory
  auto run = runStepsOf(g);
  QVERIFY(run.isOk());
  BufferPlan p = planBuffers(g, *run);
  QVERIFY(!p.find(mid));
  QCOMPARE(p.values.size(), size_t(2));
  QVERIFY(planCovers(p, g, *run));
  QVERIFY(!planCovers(BufferPlan{}, g, *run));  // a plan of nothing places nothing
}

void CodegenRuntimeTest::runIntoMatchesRun() {
  ValueId mid;
  Graph g = chain(&mid);
  g.addOutput(mid);
  g.addOutput(g.inputs()[0]);  // an input as an output: copied
  auto m = compileGraph(g, {});
  QVERIFY2(m.isOk(), m.message().c_str());
  QCOMPARE((*m)->kernels().size(), size_t(4));
  QVERIFY((*m)->memoryPlanText().find("arena") != std::string::npos);
  QCOMPARE((*m)->arenaBytes(), int64_t(64 * 64 * 4));  // t0 and t2 in place: one tensor
  TensorData x = randomTensor({64, 64}, 5);
  auto full = (*m)->run({{"x", x}});
  QVERIFY(full.isOk());
  std::map<std::string, TensorData> out;
  Status s = (*m)->runInto({{"x", x}}, out);
  QVERIFY2(s.isOk(), s.message().c_str());
  QCOMPARE(out.size(), size_t(3));
  QCOMPARE(values(out["t3"]), values(*(*full)[g.outputs()[0].index]));
  QCOMPARE(values(out["t1"]), values(*(*full)[mid.index]));
  QCOMPARE(values(out["x"]), values(x));
  // A second run reuses the caller's tensors.
  const std::byte* before = out["t3"].bytes.data();
  QVERIFY((*m)->runInto({{"x", x}}, out).isOk());
  QCOMPARE(out["t3"].bytes.data(), before);
}

void CodegenRuntimeTest::runIntoChecksOutputs() {
  Graph g = chain();
  auto m = compileGraph(g, {});
  QVERIFY(m.isOk());
  std::map<std::string, TensorData> out = {{"t3", TensorData(DType::F32, {64, 63})}};
  Status s = (*m)->runInto({{"x", randomTensor({64, 64}, 1)}}, out);
  QCOMPARE(s.message(), std::string("output 't3' is f32[64,63]; the graph produces f32[64,64]"));
  std::map<std::string, TensorData> none;
  QCOMPARE((*m)->runInto({{"x", randomTensor({2, 2}, 1)}}, none).message(),
           std::string("input 'x' has shape [2,2]; the graph expects f32[64,64]"));
}

// An If whose branches differ in shape ([1,8] doubled, or the first 3 values
// squeezed to [3]), then a Relu on it: the If's output, the Relu's and the
// graph output are known only at run time. runInto (profile's and the bench's
// runtime) keeps them beside the arena and matches run() on both branches.
void CodegenRuntimeTest::runIntoKeepsRunTimeShapes() {
  auto model = importOnnxFile(fuselens::test::sourcePath("/tests/cli/data/if_dynamic/model.onnx"));
  QVERIFY2(model.isOk(), model.message().c_str());
  const Graph& g = model->graph;
  auto m = compileGraph(g, {});
  QVERIFY2(m.isOk(), m.message().c_str());
  for (float sign : {1.0f, -1.0f}) {
    TensorData x(DType::F32, {1, 8});
    for (int i = 0; i < 8; ++i) x.data<float>()[i] = sign * float(i + 1) * 0.25f;
    auto full = (*m)->run({{"x", x}});
    QVERIFY2(full.isOk(), full.message().c_str());
    const TensorData& want = *(*full)[g.outputs()[0].index];
    std::map<std::string, TensorData> out;
    for (int run = 0; run < 2; ++run) {  // the second run finds the tensor present
      Status s = (*m)->runInto({{"x", x}}, out);
      QVERIFY2(s.isOk(), s.message().c_str());
      const std::vector<int64_t> shape =
          sign > 0 ? std::vector<int64_t>{1, 8} : std::vector<int64_t>{3};
      QCOMPARE(out["y"].shape, shape);
      QCOMPARE(values(out["y"]), values(want));
    }
  }
  auto prof = (*m)->profile({{"x", TensorData(DType::F32, {1, 8})}}, 3);
  QVERIFY2(prof.isOk(), prof.message().c_str());
  QCOMPARE(prof->kernelSeconds.size(), (*m)->kernels().size());
}

QTEST_APPLESS_MAIN(CodegenRuntimeTest)
void CodegenRuntimeTest::runsWithTheGivenPlan() {
  Graph g = chain();
  auto specs = parsePipeline("memory-plan{in-place=0}");  // not the compiler's own default
  QVERIFY(specs.isOk());
  auto piped = runPipeline(g, *specs);
  QVERIFY2(piped.isOk(), piped.message().c_str());
  const auto& plan = piped->snapshots.back().record.bufferPlan;
  QVERIFY(plan);
  QCOMPARE(plan->arenaBytes, int64_t(2 * 64 * 64 * 4));
  CompileOptions opts;
  opts.bufferPlan = plan;
  auto given = compileGraph(piped->snapshots.back().graph(), opts);
  QVERIFY2(given.isOk(), given.message().c_str());
  QCOMPARE((*given)->arenaBytes(), plan->arenaBytes);
  auto own = compileGraph(g, {});  // no plan given: the planner's default, in place
  QVERIFY(own.isOk());
  QCOMPARE((*own)->arenaBytes(), int64_t(64 * 64 * 4));
  TensorData x = randomTensor({64, 64}, 7);
  std::map<std::string, TensorData> a, b;
  QVERIFY((*given)->runInto({{"x", x}}, a).isOk());
  QVERIFY((*own)->runInto({{"x", x}}, b).isOk());
  QCOMPARE(values(a["t3"]), values(b["t3"]));
}

// fuselens_parallel_for over loops of many sizes, back to back (the way a
// model's kernels post them), from two callers at once and under a thread
// cap: every index runs exactly once, and a cap of 1 keeps the caller alone.
namespace {
struct CountCtx {
  std::vector<std::atomic<int>>* hits;
  std::thread::id caller;
  std::atomic<int>* elsewhere;
};
void countBody(void** ctx, int64_t lo, int64_t hi) {
  auto* c = static_cast<CountCtx*>(ctx[0]);
  if (std::this_thread::get_id() != c->caller) c->elsewhere->fetch_add(1);
  for (int64_t i = lo; i < hi; ++i) (*c->hits)[size_t(i)].fetch_add(1);
}
// Runs one loop of n and says which indices did not run exactly once.
std::string countLoop(int64_t n, std::atomic<int>& elsewhere) {
  std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
  CountCtx c{&hits, std::this_thread::get_id(), &elsewhere};
  void* ctx[] = {&c};
  fuselens_parallel_for(countBody, ctx, n);
  for (int64_t i = 0; i < n; ++i)
    if (hits[size_t(i)].load() != 1)
      return "n=" + std::to_string(n) + ": index " + std::to_string(i) + " ran " +
             std::to_string(hits[size_t(i)].load()) + " times";
  return "";
}
}  // namespace

void CodegenRuntimeTest::parallelForRunsEveryIndexOnce() {
  const int64_t sizes[] = {0, 1, 2, 3, 5, 8, 9, 31, 64, 1000, 70000};
  std::atomic<int> elsewhere{0};
  for (int round = 0; round < 50; ++round)
    for (int64_t n : sizes) {
      std::string bad = countLoop(n, elsewhere);
      QVERIFY2(bad.empty(), bad.c_str());
    }
  // Two callers at once: one has the pool, the other runs serially.
  std::string bad[2];
  std::atomic<int> sink{0};
  {
    std::vector<std::thread> callers;
    for (int t = 0; t < 2; ++t)
      callers.emplace_back([&, t] {
        for (int round = 0; round < 200 && bad[t].empty(); ++round)
          bad[t] = countLoop(sizes[size_t(round) % std::size(sizes)], sink);
      });
    for (auto& th : callers) th.join();
  }
  QVERIFY2(bad[0].empty(), bad[0].c_str());
  QVERIFY2(bad[1].empty(), bad[1].c_str());
  fuselens_set_max_threads(1);
  std::atomic<int> capped{0};
  for (int64_t n : sizes) {
    std::string b = countLoop(n, capped);
    QVERIFY2(b.empty(), b.c_str());
  }
  fuselens_set_max_threads(0);
  QCOMPARE(capped.load(), 0);
}

// Each thread owns a contiguous run of chunks; one that finishes its own
// takes the rest of a slow thread's from the back. Here the caller's first
// chunk sleeps, and the other chunks must still run elsewhere meanwhile.
namespace {
struct StealCtx {
  std::thread::id caller;
  std::mutex m;
  std::set<int64_t> onOthers;
};
void stealBody(void** ctx, int64_t lo, int64_t hi) {
  auto* c = static_cast<StealCtx*>(ctx[0]);
  if (lo == 0 && std::this_thread::get_id() == c->caller)
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  if (std::this_thread::get_id() == c->caller) return;
  std::lock_guard<std::mutex> lock(c->m);
  for (int64_t i = lo; i < hi; ++i) c->onOthers.insert(i);
}
}  // namespace

void CodegenRuntimeTest::parallelForStealsFromASlowThread() {
  if (std::thread::hardware_concurrency() < 2) QSKIP("one hardware thread: no pool");
  fuselens_set_max_threads(2);
  StealCtx c;
  c.caller = std::this_thread::get_id();
  void* ctx[] = {&c};
  // 8 chunks of one index: the caller owns 0-3, the worker 4-7.
  fuselens_parallel_for(stealBody, ctx, 8);
  fuselens_set_max_threads(0);
  std::string got;
  for (int64_t i : c.onOthers) got += std::to_string(i) + " ";
  QVERIFY2(c.onOthers.count(3) && c.onOthers.count(2) && c.onOthers.count(1),
           ("indices run off the caller: " + got).c_str());
  QVERIFY2(!c.onOthers.count(0), got.c_str());
}

#include "codegen_runtime_test.moc"
