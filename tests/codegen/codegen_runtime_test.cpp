// The CPU runtime: the liveness memory plan (reuse, pinned graph outputs,
// aliases, scratch), runInto through the arena against run, and its checks.
#include <QtTest>

#include "codegen/compiler.h"
#include "codegen/memory_plan.h"
#include "test_util.h"

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
};

void CodegenRuntimeTest::planReusesDeadTensors() {
  Graph g = chain();
  std::vector<ValueId> vals;
  for (NodeId id : g.nodeIds()) vals.push_back(g.node(id).outputs[0]);
  std::vector<PlannedKernelUse> ks = {{{g.inputs()[0]}, {vals[0]}, 0},
                                      {{vals[0]}, {vals[1]}, 100},
                                      {{vals[1]}, {vals[2]}, 0},
                                      {{vals[2]}, {vals[3]}, 0}};
  MemoryPlan p = planMemory(g, ks, {});
  QCOMPARE(p.offsetOf.size(), size_t(3));  // t0..t2; t3 is the graph output
  QCOMPARE(p.unsharedBytes, int64_t(3 * 64 * 64 * 4));
  // t0 dies after kernel 1, so t2 takes its place: two tensors' worth.
  QCOMPARE(p.offsetOf[vals[2].index], p.offsetOf[vals[0].index]);
  QVERIFY(p.offsetOf[vals[1].index] != p.offsetOf[vals[0].index]);
  QCOMPARE(p.scratchOffset, int64_t(2 * 64 * 64 * 4));
  QCOMPARE(p.arenaBytes, p.scratchOffset + 128);  // scratch 100 rounded to 64
}

void CodegenRuntimeTest::planKeepsOutputsAndAliasesOut() {
  ValueId mid;
  Graph g = chain(&mid);
  g.addOutput(mid);  // an intermediate that is also a graph output: caller memory
  std::vector<ValueId> vals;
  for (NodeId id : g.nodeIds()) vals.push_back(g.node(id).outputs[0]);
  std::vector<PlannedKernelUse> ks = {{{g.inputs()[0]}, {vals[0]}, 0},
                                      {{vals[0]}, {vals[1]}, 0},
                                      {{vals[1]}, {vals[2]}, 0},
                                      {{vals[2]}, {vals[3]}, 0}};
  MemoryPlan p = planMemory(g, ks, {});
  QVERIFY(!p.offsetOf.count(mid.index));
  QCOMPARE(p.offsetOf.size(), size_t(2));
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

QTEST_APPLESS_MAIN(CodegenRuntimeTest)
#include "codegen_runtime_test.moc"
