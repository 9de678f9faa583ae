// If / Loop / Scan as driver kernels (codegen/driver_cf_*.cpp): compiled
// WITHOUT the reference fallback, each control-flow node is a driver kernel
// whose bodies run as compiled code; outputs match the stored ONNX Runtime
// references and the eager interpreter. Also: zero iterations, carried values
// that change shape, a body that cannot compile (one sentence naming the
// node), the loop IR listing of the bodies, and the specialization cache.
#include <QtTest>
#include <chrono>
#include <cmath>
#include <thread>

#include "../core/fixture_compare.h"
#include "../core/fixture_util.h"
#include "codegen/compiler.h"
#include "codegen/driver/specialize.h"
#include "core/eager/interpreter.h"
#include "core/ir/printer.h"
#include "core/onnx/import.h"
#include "passes/pass_manager.h"

using namespace fuselens;
using namespace fuselens::test;

namespace {

// Relative and absolute tolerance alike (fixture_compare.h).
std::string mismatch(const TensorData& ref, const TensorData& got, double tol) {
  return fuselens::test::mismatch(ref, got, tol, tol);
}

bool isControlFlow(const std::string& op) { return op == "If" || op == "Loop" || op == "Scan"; }

CompileOptions strict() {
  CompileOptions o;
  o.fallback = false;
  return o;
}

// A Loop whose trip count is the constant `trips`: acc += w, emits acc * acc.
std::string loopText(int trips) {
  return R"(graph @main(%x: f32[2,3]) -> (f32[2,3], f32[?,2,3]) {
  %M = Constant : i64[] dense<[)" +
         std::to_string(trips) + R"(]>
  %w = Constant : f32[3] dense<[0.5, -1.0, 2.0]>
  %y, %ys = Loop(%M, none, %x, %w) {body=graph @body(%i: i64[], %c: bool[], %acc: f32[2,3], %w: f32[3]) -> (bool[], f32[2,3], f32[2,3]) {
      %a = Add(%acc, %w) : f32[2,3]
      %s = Mul(%a, %a) : f32[2,3]
      return %c, %a, %s
    }, implicit_inputs=["w"]} : f32[2,3], f32[?,2,3] loc("Loop_0")
  return %y, %ys
})";
}

TensorData ramp(std::vector<int64_t> shape) {
  TensorData t(DType::F32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = float(i) * 0.25f - 1.0f;
  return t;
}

}  // namespace

class CodegenControlFlowTest : public QObject {
  Q_OBJECT

 private slots:
  void fixtureRunsCompiled_data() {
    QTest::addColumn<QString>("name");
    for (const auto& c : fixtureCases())
      if (c.name.rfind("cf_", 0) == 0 && hasReferenceOutputs(c))
        QTest::newRow(c.name.c_str()) << QString::fromStdString(c.name);
  }

  // Every cf_* fixture: the default pipeline, then no-fallback compile; each
  // control-flow node is a driver kernel; outputs match ORT and eager.
  void fixtureRunsCompiled() {
    QFETCH(QString, name);
    auto dir = fixturesDir() / name.toStdString();
    auto m = importOnnxFile((dir / "model.onnx").string());
    QVERIFY2(m.isOk(), m.message().c_str());
    std::string err;
    auto inputs = loadNpys(dir, "input_", err);
    auto refs = loadNpys(dir, "output_", err);
    QVERIFY2(err.empty(), err.c_str());
    auto eager = runEager(m->graph, inputs);
    QVERIFY2(eager.isOk(), eager.message().c_str());
    auto specs = parsePipeline(defaultPipeline());
    QVERIFY(specs.isOk());
    auto piped = runPipeline(m->graph, *specs);
    QVERIFY2(piped.isOk(), piped.message().c_str());
    const Graph& opt = piped->snapshots.back().graph();

    auto mod = compileGraph(opt, strict());
    QVERIFY2(mod.isOk(), mod.message().c_str());
    int drivers = 0;
    for (const KernelInfo& k : (*mod)->kernels()) {
      QVERIFY2(!k.fallback, k.name.c_str());
      if (isControlFlow(opt.node(k.node).op)) {
        QVERIFY2(k.driver, k.name.c_str());
        QVERIFY(!k.driverSummary.empty());
        ++drivers;
      }
    }
    QVERIFY(drivers >= 1);
    auto run = (*mod)->run(inputs);
    QVERIFY2(run.isOk(), run.message().c_str());
    for (size_t i = 0; i < opt.outputs().size(); ++i) {
      const std::string out = m->graph.value(m->graph.outputs()[i]).name;
      const auto& got = (*run)[opt.outputs()[i].index];
      QVERIFY2(got, ("no value for output " + out).c_str());
      auto ref = refs.find(out);
      QVERIFY2(ref != refs.end(), ("no ORT reference for " + out).c_str());
      std::string d = mismatch(ref->second, *got, 1e-5);
      QVERIFY2(d.empty(), (out + " vs ORT: " + d).c_str());
      d = mismatch(*eager->find(m->graph.outputs()[i]), *got, 1e-5);
      QVERIFY2(d.empty(), (out + " vs eager: " + d).c_str());
    }
  }

  // M = 0: the carried value comes back as given; the scan output is empty,
  // shaped [0, 2, 3] from the body's per-iteration type. M = 3 for contrast.
  void loopZeroAndSomeIterations() {
    for (int trips : {0, 3}) {
      auto g = parseGraph(loopText(trips));
      QVERIFY2(g.isOk(), g.message().c_str());
      auto mod = compileGraph(*g, strict());
      QVERIFY2(mod.isOk(), mod.message().c_str());
      TensorData x = ramp({2, 3});
      auto run = (*mod)->run({{"x", x}});
      QVERIFY2(run.isOk(), run.message().c_str());
      const TensorData& y = *(*run)[g->outputs()[0].index];
      const TensorData& ys = *(*run)[g->outputs()[1].index];
      if (trips == 0) {
        // (eager gives f32[0] here, which its own declared-type check refuses.)
        QCOMPARE(mismatch(x, y, 0), std::string());
        QCOMPARE(ys.shape, (std::vector<int64_t>{0, 2, 3}));
        QCOMPARE(ys.dtype, DType::F32);
      } else {
        auto eager = runEager(*g, {{"x", x}});
        QVERIFY2(eager.isOk(), eager.message().c_str());
        QCOMPARE(mismatch(*eager->find(g->outputs()[0]), y, 1e-6), std::string());
        QCOMPARE(mismatch(*eager->find(g->outputs()[1]), ys, 1e-6), std::string());
        QCOMPARE(ys.shape, (std::vector<int64_t>{3, 2, 3}));
      }
    }
  }

  // The carried value grows each iteration (Concat), so each iteration gets
  // its own specialization; the result matches eager.
  void loopCarriedShapeChanges() {
    auto g = parseGraph(R"(graph @main(%x: f32[1,3]) -> (f32[?,3]) {
  %M = Constant : i64[] dense<[4]>
  %y = Loop(%M, none, %x) {body=graph @body(%i: i64[], %c: bool[], %acc: f32[?,3]) -> (bool[], f32[?,3]) {
      %k = Constant : f32[1,3] dense<[1.0, 2.0, 3.0]>
      %fi = Cast(%i) {to=1} : f32[]
      %row = Mul(%k, %fi) : f32[1,3]
      %a = Concat(%acc, %row) {axis=0} : f32[?,3]
      return %c, %a
    }} : f32[?,3] loc("Loop_0")
  return %y
})");
    QVERIFY2(g.isOk(), g.message().c_str());
    auto mod = compileGraph(*g, strict());
    QVERIFY2(mod.isOk(), mod.message().c_str());
    QVERIFY((*mod)->kernels()[0].driver);
    TensorData x = ramp({1, 3});
    auto run = (*mod)->run({{"x", x}});
    QVERIFY2(run.isOk(), run.message().c_str());
    auto eager = runEager(*g, {{"x", x}});
    QVERIFY2(eager.isOk(), eager.message().c_str());
    const TensorData& y = *(*run)[g->outputs()[0].index];
    QCOMPARE(y.shape, (std::vector<int64_t>{5, 3}));
    QCOMPARE(mismatch(*eager->find(g->outputs()[0]), y, 1e-6), std::string());
  }

  // A branch holding an op codegen cannot lower: one sentence naming the If,
  // the branch and the inner node, at compile time.
  void bodyThatCannotCompileIsOneSentence() {
    auto g = parseGraph(R"(graph @main(%x: f32[2,3], %c: bool[]) -> (f32[2,3]) {
  %y = If(%c, %x) {else_branch=graph @else(%x: f32[2,3]) -> (f32[2,3]) {
      %e = Neg(%x) : f32[2,3]
      return %e
    }, implicit_inputs=["x"], then_branch=graph @then(%x: f32[2,3]) -> (f32[2,3]) {
      %t = NoSuchOp(%x) : f32[2,3] loc("odd")
      return %t
    }} : f32[2,3] loc("If_0")
  return %y
})");
    QVERIFY2(g.isOk(), g.message().c_str());
    auto mod = compileGraph(*g, strict());
    QVERIFY(!mod.isOk());
    const std::string msg = mod.message();
    QVERIFY2(msg.find("If_0") != std::string::npos, msg.c_str());
    QVERIFY2(msg.find("then_branch cannot be compiled") != std::string::npos, msg.c_str());
    QVERIFY2(msg.find("odd") != std::string::npos, msg.c_str());
    QVERIFY2(msg.find('\n') == std::string::npos, msg.c_str());
    // With the fallback the whole If runs as a labelled fallback kernel instead.
    auto loose = compileGraph(*g, CompileOptions{});
    if (loose.isOk()) QVERIFY(!(*loose)->kernels()[0].driver);
  }

  // A Loop with no trip count whose condition never turns false stops only
  // when cancelled (between iterations), well before the 2^24-iteration cap.
  void endlessLoopStopsWhenCancelled() {
    auto g = parseGraph(R"(graph @main(%x: f32[3]) -> (f32[3]) {
  %go = Constant : bool[] dense<[1]>
  %y = Loop(none, %go, %x) {body=graph @body(%i: i64[], %c: bool[], %acc: f32[3]) -> (bool[], f32[3]) {
      %a = Neg(%acc) : f32[3]
      return %c, %a
    }} : f32[3] loc("Loop_0")
  return %y
})");
    QVERIFY2(g.isOk(), g.message().c_str());
    auto mod = compileGraph(*g, strict());
    QVERIFY2(mod.isOk(), mod.message().c_str());
    CancelToken cancel;
    std::string msg;
    std::thread runner([&] {
      std::map<std::string, TensorData> in{{"x", ramp({3})}};
      auto r = (*mod)->run(in, cancel);
      msg = r.isOk() ? "finished" : r.message();
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    cancel.cancel();
    runner.join();
    QVERIFY2(msg.find("cancelled") != std::string::npos, msg.c_str());
  }

  // A branch computing a Reshape target from Shape (exporters' shape
  // arithmetic): folded at specialization, so the branch compiles.
  void shapeArithmeticInBodyFolds() {
    auto g = parseGraph(R"(graph @main(%x: f32[2,3], %c: bool[]) -> (f32[6]) {
  %y = If(%c, %x) {else_branch=graph @else(%x: f32[2,3]) -> (f32[6]) {
      %m = Constant : i64[1] dense<[-1]>
      %f = Reshape(%x, %m) : f32[6]
      %e = Neg(%f) : f32[6]
      return %e
    }, implicit_inputs=["x"], then_branch=graph @then(%x: f32[2,3]) -> (f32[?]) {
      %s = Shape(%x) : i64[2]
      %n = ReduceProd(%s) {keepdims=1} : i64[1]
      %f = Reshape(%x, %n) : f32[?]
      %t = Add(%f, %f) : f32[?]
      return %t
    }} : f32[6] loc("If_0")
  return %y
})");
    QVERIFY2(g.isOk(), g.message().c_str());
    auto mod = compileGraph(*g, strict());
    QVERIFY2(mod.isOk(), mod.message().c_str());
    QVERIFY2((*mod)->kernels()[0].driverSummary.find("both branches compiled") != std::string::npos,
             (*mod)->kernels()[0].driverSummary.c_str());
    TensorData x = ramp({2, 3});
    for (bool c : {true, false}) {
      std::map<std::string, TensorData> in{
          {"x", x}, {"c", TensorData::fromVector(DType::Bool, {}, std::vector<uint8_t>{c})}};
      auto run = (*mod)->run(in);
      QVERIFY2(run.isOk(), run.message().c_str());
      const TensorData& y = *(*run)[g->outputs()[0].index];
      QCOMPARE(y.shape, (std::vector<int64_t>{6}));
      QCOMPARE(y.data<float>()[5], c ? 2 * x.data<float>()[5] : -x.data<float>()[5]);
    }
  }

  // A branch whose shape inference refuses the compile-time types compiles
  // at run time: fine while it is not taken, one sentence when it is.
  void branchRefusingCompileTimeTypesWaitsForRunTime() {
    auto g = parseGraph(R"(graph @main(%x: f32[2,3], %c: bool[]) -> (f32[2,3]) {
  %y = If(%c, %x) {else_branch=graph @else(%x: f32[2,3]) -> (f32[2,3]) {
      %e = Neg(%x) : f32[2,3]
      return %e
    }, implicit_inputs=["x"], then_branch=graph @then(%x: f32[2,3]) -> (f32[*]) {
      %k = Constant : i64[1] dense<[1]>
      %t = Squeeze(%x, %k) : f32[*] loc("sq")
      return %t
    }} : f32[2,3] loc("If_0")
  return %y
})");
    QVERIFY2(g.isOk(), g.message().c_str());
    auto mod = compileGraph(*g, strict());
    QVERIFY2(mod.isOk(), mod.message().c_str());
    QVERIFY((*mod)->loopIrText().find("then_branch (graph 'then'): compiled at run time") !=
            std::string::npos);
    TensorData x = ramp({2, 3});
    auto in = [&](bool c) {
      return std::map<std::string, TensorData>{
          {"x", x}, {"c", TensorData::fromVector(DType::Bool, {}, std::vector<uint8_t>{c})}};
    };
    QVERIFY((*mod)->run(in(false)).isOk());
    auto bad = (*mod)->run(in(true));
    QVERIFY(!bad.isOk());
    QVERIFY2(bad.message().find("If_0") != std::string::npos &&
                 bad.message().find("sq") != std::string::npos,
             bad.message().c_str());
  }

  // The loop IR listing shows both branches' kernels under the driver kernel.
  void loopIrListsBodies() {
    auto m = importOnnxFile((fixturesDir() / "cf_if_else" / "model.onnx").string());
    QVERIFY2(m.isOk(), m.message().c_str());
    auto mod = compileGraph(m->graph, strict());
    QVERIFY2(mod.isOk(), mod.message().c_str());
    const std::string ir = (*mod)->loopIrText();
    QVERIFY2(
        ir.find("driver kernel, If: both branches compiled (1 + 1 kernels)") != std::string::npos,
        ir.c_str());
    QVERIFY2(ir.find("then_branch (graph 'then'), 1 kernel:") != std::string::npos, ir.c_str());
    QVERIFY2(ir.find("else_branch (graph 'else'), 1 kernel:") != std::string::npos, ir.c_str());
    QVERIFY2(ir.find("  void k0_add(") != std::string::npos, ir.c_str());
    QVERIFY2(ir.find("  void k0_mul(") != std::string::npos, ir.c_str());
  }

  // Outer constants a branch reads (an LSTM's W and R) become constants of the
  // branch: its LSTM packs them at compile time (packed_wt / packed_rt in the
  // listing) instead of taking them as inputs copied in every run; both
  // branches still match eager.
  void branchReadsOuterConstantsInPlace() {
    auto dense = [](int n) {
      std::string s;
      for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(0.5 * std::sin(0.7 * i));
      return s;
    };
    auto parsed = parseGraph(R"(graph @main(%c: bool[], %x: f32[3,1,2]) -> (f32[3,1,1,4]) {
  %W = Constant : f32[1,16,2] dense<[)" +
                             dense(32) + R"(]>
  %R = Constant : f32[1,16,4] dense<[)" +
                             dense(64) + R"(]>
  %y = If(%c, %x, %W, %R) {then_branch=graph @then(%x: f32[3,1,2], %W: f32[1,16,2], %R: f32[1,16,4]) -> (f32[3,1,1,4]) {
      %t = LSTM(%x, %W, %R) {hidden_size=4} : f32[3,1,1,4]
      return %t
    }, else_branch=graph @else(%x: f32[3,1,2], %W: f32[1,16,2], %R: f32[1,16,4]) -> (f32[3,1,1,4]) {
      %e = LSTM(%x, %W, %R) {direction="reverse", hidden_size=4} : f32[3,1,1,4]
      return %e
    }, implicit_inputs=["x", "W", "R"]} : f32[3,1,1,4] loc("If_0")
  return %y
})");
    QVERIFY2(parsed.isOk(), parsed.message().c_str());
    const Graph& g = *parsed;
    auto mod = compileGraph(g, strict());
    QVERIFY2(mod.isOk(), mod.message().c_str());
    const std::string ir = (*mod)->loopIrText();
    QVERIFY2(ir.find("packed_wt") != std::string::npos, ir.c_str());
    QVERIFY2(ir.find("packed_rt") != std::string::npos, ir.c_str());
    for (bool c : {true, false}) {
      std::map<std::string, TensorData> in = {
          {"c", TensorData::fromVector(DType::Bool, {}, std::vector<uint8_t>{uint8_t(c)})},
          {"x", ramp({3, 1, 2})}};
      auto eager = runEager(g, in);
      QVERIFY2(eager.isOk(), eager.message().c_str());
      auto run = (*mod)->run(in);
      QVERIFY2(run.isOk(), run.message().c_str());
      std::string d = mismatch(*eager->find(g.outputs()[0]), *(*run)[g.outputs()[0].index], 1e-5);
      QVERIFY2(d.empty(), d.c_str());
    }
  }

  // One module per set of input types, reused; safe from several threads.
  void specializationCachesByTypes() {
    auto g = parseGraph(R"(graph @body(%a: f32[?,3]) -> (f32[?,3]) {
  %k = Constant : f32[3] dense<[1.0, 2.0, 3.0]>
  %b = Add(%a, %k) : f32[?,3]
  return %b
})");
    QVERIFY2(g.isOk(), g.message().c_str());
    SpecializedGraph sg(std::make_shared<const Graph>(*g), strict(), 2);
    QVERIFY(!sg.declaredStatic());
    QVERIFY(!sg.precompileLoopIr().isOk());
    for (int64_t rows : {1, 4, 1, 4}) {
      TensorData a = ramp({rows, 3});
      auto out = sg.run({&a});
      QVERIFY2(out.isOk(), out.message().c_str());
      QCOMPARE((*out)[0].shape, (std::vector<int64_t>{rows, 3}));
      QCOMPARE((*out)[0].data<float>()[rows * 3 - 1], a.data<float>()[rows * 3 - 1] + 3.0f);
    }
    QCOMPARE(sg.compileCount(), size_t(2));
    TensorData c = ramp({7, 3});
    QVERIFY(sg.run({&c}).isOk());
    QCOMPARE(sg.cachedCount(), size_t(2));  // bounded: the oldest is evicted
    std::vector<std::thread> threads;
    std::vector<int> ok(4, 0);
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        TensorData a = ramp({int64_t(1 + t), 3});
        ok[size_t(t)] = sg.run({&a}).isOk();
      });
    for (auto& th : threads) th.join();
    for (int v : ok) QVERIFY(v);
    TensorData wrong(DType::F32, {2, 2});
    QVERIFY(!sg.run({&wrong}).isOk());  // Add cannot broadcast [2,2] with [3]
  }
};

QTEST_GUILESS_MAIN(CodegenControlFlowTest)
#include "codegen_control_flow_test.moc"
