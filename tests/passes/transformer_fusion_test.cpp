// A 12-layer transformer-style encoder through the fusion pipelines: which
// groups form per layer, and for every fusion one would expect but does not
// get, the rule id that explains it. Also: the eager outputs agree before and
// after, and every kernel boundary has a reason (passes/explain.h).
//
// The model, tests/fixtures/transformer_12l/model.onnx, is written by
// tests/passes/make_transformer_12l.py: a post-LN BERT-style encoder (seq 8,
// hidden 16, 2 heads, FFN 64). Per layer: Q/K/V projections (MatMul + Add
// bias), heads split by Reshape + Transpose, MatMul(Q, K^T) -> Div(sqrt dh) ->
// Add(mask) -> Softmax -> MatMul(V), heads merged by Transpose + Reshape,
// output projection + residual Add, ln1 decomposed as torch.onnx writes it
// below opset 17 (ReduceMean, Sub, Pow, ReduceMean, Add eps, Sqrt, Div, Mul,
// Add), FFN MatMul + Add + exact GELU (Div, Erf, Add, Mul, Mul), MatMul + Add
// + residual Add, ln2 as the opset-17 LayerNormalization op.
//
// What the default pipeline (-O2: fuse-patterns, then fuse-ops{max-ops=8},
// both with multi-anchor=1, their default) forms, per layer; -O3 (max-ops=16)
// forms exactly the same: the window is never what stops a merge here, the
// kind rules are. fuse-patterns first rewrites ln1 (decomposed, constants
// exact) to one LayerNormalization op and the exact GELU to one Gelu op,
// groups scaled dot-product attention (pattern-attention: three anchors, which
// codegen runs as consecutive stages of one kernel) and MatMul + bias (+ Gelu).
// 13 kernels per layer, 10 of them groups (fuselens-cli compile counts 12
// launches: K's split, a lone Reshape, is a view):
//
//   kernel                                   why it ends where it ends
//   Q proj   {MatMul, Add}        (x3: Q,K,V) pattern-matmul-bias-act;
//                                             -> Reshape: injective-after-anchor
//   Q split  {Reshape, Transpose} (x2: Q, V)  -> attention: prologue-into-anchor
//   K split  {Reshape}            K's Transpose is inside attention (only the
//                                             scores read it): prologue-into-anchor
//   attention {Transpose, MatMul, Div, Add, Softmax, MatMul}  pattern-attention
//                                             -> Transpose: injective-after-anchor
//   merge, O proj, ln1, MLP up, MLP down, ln2: as in the table below.
//
// With multi-anchor=0 (fuse-patterns{multi-anchor=0}, fuse-ops{multi-anchor=0}:
// one anchor per kernel, the default before codegen lowered several anchors in
// one kernel) attention is three kernels, 15 kernels per layer, 11 groups:
//
//   kernel                                   why it ends where it ends
//   Q proj   {MatMul, Add}        (x3: Q,K,V) pattern-matmul-bias-act;
//                                             -> Reshape: injective-after-anchor
//   Q split  {Reshape, Transpose} (x3)        -> MatMul qk / ctx: prologue-into-anchor
//   scores   {MatMul, Div, Add}   QK^T, scale and mask fuse as the MatMul's
//                                             epilogue (anchor-epilogue)
//   Softmax  alone                scores -> Softmax: two-anchors; Softmax ->
//                                             MatMul: two-anchors (fuse-patterns
//                                             matched pattern-attention but
//                                             rejected it: three anchors, multi-
//                                             anchor groups are off)
//   ctx      MatMul alone         -> Transpose: injective-after-anchor
//   merge    {Transpose, Reshape} -> MatMul o: prologue-into-anchor
//   O proj   {MatMul, Add, Add}   pattern-matmul-bias-act + the residual as
//                                             fuse-ops' epilogue (anchor-epilogue)
//   ln1      LayerNormalization   pattern-layernorm rewrote the 9 ops to one;
//                                             res1 -> ln1: two-anchors
//   MLP up   {MatMul, Add, Gelu}  pattern-gelu rewrote the 5 GELU ops to Gelu,
//                                             then pattern-matmul-bias-act: the
//                                             MLP epilogue group;
//                                             ln1 -> MatMul ff1: producer-has-other-
//                                             users (the residual Add reads it too)
//   MLP down {MatMul, Add, Add}   Gelu -> MatMul ff2: two-anchors (the Gelu
//                                             is the epilogue of MatMul ff1);
//                                             ln1 -> res2: producer-has-other-users
//   ln2      LayerNormalization alone (in layer 11 with the graph's output
//            Identity 'y' as its epilogue: reduce-epilogue)
//                                             res2 -> ln2: two-anchors;
//                                             ln2 -> next layer's Q/K/V MatMuls
//                                             and residual: producer-has-other-users
//
// So against "one attention, one LayerNorm, one MLP-epilogue group per layer",
// by default: attention is one group; the MLP epilogue is one group ({MatMul,
// Add, Gelu}); each LayerNorm is one kernel, the LayerNormalization op, which
// does not take the residual Add as a prologue because that Add is already the
// epilogue of the MatMul before it (two-anchors: an OutEWiseFusable group and a
// CommReduce one; multi-anchor lets only reductions over the same rows share a
// group, rule reduce-chain). With multi-anchor=0, attention is three kernels
// (pattern-attention rejected, two-anchors in fuse-ops, both with the option
// as the hint).
#include <QtTest>
#include <algorithm>
#include <filesystem>

#include "core/compare/compare.h"
#include "core/eager/interpreter.h"
#include "core/io/npy.h"
#include "core/onnx/import.h"
#include "passes/explain.h"
#include "passes/pass_manager.h"
#include "tests/support/test_paths.h"

using namespace fuselens;

namespace {

constexpr int kLayers = 12;

std::string modelPath() {
  return fuselens::test::sourcePath("/tests/fixtures/transformer_12l/model.onnx");
}

// One kernel of the final graph: its members' names and ops, in topological order.
struct Kernel {
  std::string name;
  bool fused = false;
  std::vector<std::string> names, ops;
  std::string opsText() const {
    std::string s;
    for (const auto& o : ops) s += (s.empty() ? "" : " ") + o;
    return s;
  }
};

std::vector<Kernel> kernels(const Graph& g) {
  std::vector<Kernel> out;
  auto order = g.topoOrder();
  for (NodeId id : *order) {
    const Node& n = g.node(id);
    Kernel k;
    k.name = n.name;
    if (n.body) {
      k.fused = true;
      auto body = n.body->topoOrder();
      for (NodeId b : *body) {
        k.names.push_back(n.body->node(b).name);
        k.ops.push_back(n.body->node(b).op);
      }
    } else {
      k.names = {n.name};
      k.ops = {n.op};
    }
    out.push_back(std::move(k));
  }
  return out;
}

// "l7_qk" -> 7; the output Identity 'y' belongs to the last layer; other names -> -1.
int layerOf(const std::string& name) {
  if (name == "y") return kLayers - 1;
  if (name.size() < 3 || name[0] != 'l' || !std::isdigit(static_cast<unsigned char>(name[1])))
    return -1;
  return std::atoi(name.c_str() + 1);
}

// The groups one layer is expected to reduce to, by their ops in topological
// order (see the table above), sorted.
std::vector<std::string> expectedLayerKernels(bool multiAnchor) {
  std::vector<std::string> k = {
      "MatMul Add",         "MatMul Add",        "MatMul Add",  // Q, K, V projections
      "Reshape Transpose",  "Reshape Transpose",                // Q and V head splits
      "Transpose Reshape",  "MatMul Add Add",                   // merge heads, O proj + residual
      "LayerNormalization",                                     // ln1, rewritten from 9 ops
      "MatMul Add Gelu",                                        // FFN up + GELU: the MLP epilogue
      "MatMul Add Add",                                         // FFN down + residual
      "LayerNormalization",                                     // ln2
  };
  if (multiAnchor) {
    k.push_back("Reshape");  // K's split: its Transpose is inside attention
    k.push_back("Transpose MatMul Div Add Softmax MatMul");
  } else {
    k.push_back("Reshape Transpose");  // K's split
    k.push_back("MatMul Div Add");     // scores: QK^T, scale and mask
    k.push_back("Softmax");
    k.push_back("MatMul");  // context
  }
  std::sort(k.begin(), k.end());
  return k;
}

const char* const kSingleAnchor =
    "const-fold,cse,simplify,dce,fuse-patterns{multi-anchor=0},fuse-ops{max-ops=8,multi-anchor=0}";

struct Compiled {
  Graph input;
  PipelineResult result;
  const Graph& final() const { return result.snapshots.back().graph(); }
};

Compiled compile(const std::string& pipeline) {
  auto m = importOnnxFile(modelPath());
  if (!m) qFatal("the transformer fixture does not import: %s", m.message().c_str());
  auto specs = parsePipeline(pipeline);
  if (!specs) qFatal("%s", specs.message().c_str());
  auto r = runPipeline(m->graph, *specs);
  if (!r) qFatal("%s fails on the transformer fixture: %s", pipeline.c_str(), r.message().c_str());
  return {std::move(m->graph), std::move(*r)};
}

// level 2 and 3: -O2, -O3; 4: -O2 with multi-anchor=0 (one anchor per kernel).
constexpr int kSingleAnchorLevel = 4;
const Compiled& compiled(int level) {
  static const Compiled o2 = compile(pipelineForLevel(2)), o3 = compile(pipelineForLevel(3)),
                        single = compile(kSingleAnchor);
  return level == 2 ? o2 : level == 3 ? o3 : single;
}

bool holds(const Graph& g, NodeId n, const std::string& member) {
  auto names = memberNames(g.node(n));
  return std::find(names.begin(), names.end(), member) != names.end();
}

// The rule id of the boundary between the kernel holding `from` and the one
// holding `to`; "<fused>" when both sit in one kernel, "<no edge>" when no
// tensor crosses between them, "<no decision>" when nothing explains it.
std::string boundaryRule(const Compiled& c, const std::vector<SplitEdge>& edges,
                         const std::string& from, const std::string& to) {
  const Graph& g = c.final();
  for (NodeId id : g.nodeIds())
    if (holds(g, id, from) && holds(g, id, to)) return "<fused>";
  for (const SplitEdge& e : edges)
    if (holds(g, e.producer, from) && holds(g, e.consumer, to))
      return e.decision ? e.decision->ruleId() : "<no decision>";
  return "<no edge>";
}

}  // namespace

class TransformerFusionTest : public QObject {
  Q_OBJECT
 private slots:
  void fixtureIsATwelveLayerEncoder() {
    QVERIFY(std::filesystem::file_size(modelPath()) < 300 * 1024);
    const Graph& g = compiled(2).input;
    std::map<std::string, int> ops;
    for (NodeId id : g.nodeIds()) ++ops[g.node(id).op];
    QCOMPARE(ops["Softmax"], kLayers);
    QCOMPARE(ops["LayerNormalization"], kLayers);
    QCOMPARE(ops["ReduceMean"], 2 * kLayers);
    QCOMPARE(ops["Erf"], kLayers);
    QCOMPARE(ops["MatMul"], 8 * kLayers);
  }

  void levels_data() {
    QTest::addColumn<int>("level");
    QTest::newRow("O2 (default)") << 2;
    QTest::newRow("O3") << 3;
    QTest::newRow("multi-anchor=0") << kSingleAnchorLevel;
  }

  // Every layer reduces to the same 13 kernels (15 with multi-anchor=0);
  // no kernel spans two layers.
  void groupsPerLayer_data() { levels_data(); }
  void groupsPerLayer() {
    QFETCH(int, level);
    QCOMPARE(pipelineForLevel(2), defaultPipeline());
    std::vector<std::vector<std::string>> perLayer(kLayers);
    for (const Kernel& k : kernels(compiled(level).final())) {
      int layer = layerOf(k.names[0]);
      for (const auto& n : k.names)
        QVERIFY2(layerOf(n) == layer,
                 qPrintable(QString::fromStdString(k.name + " spans layers: " + n)));
      QVERIFY2(layer >= 0, k.names[0].c_str());
      QVERIFY2(layer < kLayers, k.names[0].c_str());
      perLayer[layer].push_back(k.opsText());
    }
    for (int l = 0; l < kLayers; ++l) {
      auto expected = expectedLayerKernels(level != kSingleAnchorLevel);
      if (l == kLayers - 1) {  // the graph's output Identity is ln2's epilogue (reduce-epilogue)
        *std::find(expected.begin(), expected.end(), std::string("LayerNormalization")) =
            "LayerNormalization Identity";  // ln2 (ln1 is the other LayerNormalization)
        std::sort(expected.begin(), expected.end());
      }
      std::sort(perLayer[l].begin(), perLayer[l].end());
      QVERIFY2(perLayer[l] == expected,
               qPrintable(QString("layer %1 kernels: %2").arg(l).arg(QString::fromStdString([&] {
                 std::string s;
                 for (auto& k : perLayer[l]) s += "{" + k + "} ";
                 return s;
               }()))));
    }
  }

  // For each fusion one would want (one attention group, one LayerNorm group,
  // LN into the next MatMul, ...) that does not happen, the rule that says why.
  void missingFusionsHaveTheirRule_data() { levels_data(); }
  void missingFusionsHaveTheirRule() {
    QFETCH(int, level);
    const Compiled& c = compiled(level);
    auto edges = splitEdges(c.final(), c.result.decisions);
    for (int l = 0; l < kLayers; ++l) {
      std::string p = "l" + std::to_string(l) + "_";
      const bool multi = level != kSingleAnchorLevel;
      const std::string twoAnchorsOrFused = multi ? "<fused>" : "two-anchors";
      const std::vector<std::tuple<std::string, std::string, std::string>> expected = {
          // attention
          {"q", "qh_r", "injective-after-anchor"},
          {"k", "kh_r", "injective-after-anchor"},
          {"v", "vh_r", "injective-after-anchor"},
          {"qh_t", "qk", "prologue-into-anchor"},
          {multi ? "kh_r" : "kh_t", multi ? "kh_t" : "qk", "prologue-into-anchor"},
          {"qk", "qk_masked", "<fused>"},  // scale and mask: the MatMul's epilogue
          {"qk_masked", "probs", twoAnchorsOrFused},
          {"probs", "ctx", twoAnchorsOrFused},
          {"vh_t", "ctx", "prologue-into-anchor"},
          {"ctx", "ctx_t", "injective-after-anchor"},
          {"ctx_r", "o_mm", "prologue-into-anchor"},
          {"o_mm", "res1", "<fused>"},
          // ln1: the LayerNormalization op fuse-patterns wrote
          {"res1", "ln1", "two-anchors"},
          // MLP
          {"ln1", "ff1_mm", "producer-has-other-users"},
          {"ln1", "res2", "producer-has-other-users"},
          {"ff1_mm", "gelu", "<fused>"},
          {"gelu", "ff2_mm", "two-anchors"},  // Gelu is in the ff1 MatMul's group
          {"ff2_mm", "res2", "<fused>"},
          // ln2, the LayerNormalization op
          {"res2", "ln2", "two-anchors"},
      };
      for (const auto& [from, to, rule] : expected) {
        std::string got = boundaryRule(c, edges, p + from, p + to);
        QVERIFY2(got == rule, qPrintable(QString::fromStdString(p + from + " -> " + p + to + ": " +
                                                                got + ", expected " + rule)));
      }
      if (l > 0)
        for (const char* next : {"q_mm", "k_mm", "v_mm", "res1"}) {
          std::string prev = "l" + std::to_string(l - 1) + "_ln2";
          std::string got = boundaryRule(c, edges, prev, p + next);
          QVERIFY2(got == "producer-has-other-users",
                   qPrintable(QString::fromStdString(prev + " -> " + next + ": " + got)));
        }
    }
    // ln1 and GELU were rewritten to one op each, attention matched: decisions say so.
    std::map<std::string, int> accepted, rejected;
    for (const FusionDecision& d : c.result.decisions)
      ++(d.accepted ? accepted : rejected)[d.ruleId()];
    QCOMPARE(accepted["pattern-layernorm"], 9 * kLayers);  // 9 edges inside each decomposed ln1
    QCOMPARE(accepted["pattern-gelu"], 4 * kLayers);       // Div -> Erf -> Add -> Mul -> Mul
    if (level != kSingleAnchorLevel) {
      QCOMPARE(accepted["pattern-attention"],
               5 * kLayers);  // Transpose, MatMul, Div, Add, Softmax, MatMul
      return;
    }
    QCOMPARE(rejected["pattern-attention"],
             2 * kLayers);  // into the Softmax and into the ctx MatMul
    for (const FusionDecision& d : c.result.decisions)
      if (d.rule == FusionRule::PatternAttention)
        QCOMPARE(QString::fromStdString(d.hint),
                 QString("form it with fuse-patterns{multi-anchor=1} (the default): codegen runs "
                         "the anchors as "
                         "stages of one kernel"));
    // The sentences name both sides and the deciding fact.
    const FusionDecision* softmax = nullptr;
    for (const SplitEdge& e : edges)
      if (e.decision && e.decision->consumerName == "l5_probs") softmax = e.decision;
    QVERIFY(softmax);
    QVERIFY2(QString::fromStdString(softmax->hint).contains("pattern-attention"),
             softmax->hint.c_str());
    QCOMPARE(
        QString::fromStdString(softmax->reason),
        QString(
            "rejected: the group of Add 'l5_qk_masked' is OutEWiseFusable and the group of Softmax "
            "'l5_probs' is CommReduce; a group holds at most one reduction or complex op"));
  }

  // explain: every edge between two kernels has a rejected decision.
  void everyBoundaryHasAReason_data() { levels_data(); }
  void everyBoundaryHasAReason() {
    QFETCH(int, level);
    const Compiled& c = compiled(level);
    auto edges = splitEdges(c.final(), c.result.decisions);
    // 15 inside each layer (Q/K/V proj -> split x3, Q/K split -> scores x2,
    // scores -> Softmax -> ctx, V split -> ctx, ctx -> merge -> O proj,
    // O proj -> ln1, ln1 -> MLP up and down, up -> down, down -> ln2) with
    // multi-anchor=0, 13 with attention as one group (the default), and ln2 ->
    // the next layer's Q, K, V and residual.
    const size_t inside = level == kSingleAnchorLevel ? 15 : 13;
    QCOMPARE(edges.size(), size_t(inside * kLayers + 4 * (kLayers - 1)));
    for (const SplitEdge& e : edges) {
      QVERIFY2(e.decision, qPrintable(QString::fromStdString(e.producerName + " -> " +
                                                             e.consumerName + ": " + e.reason)));
      QVERIFY(!e.decision->accepted);
      QVERIFY2(!e.decision->ruleId().empty() && e.reason.rfind("rejected: ", 0) == 0,
               e.reason.c_str());
    }
  }

  // Fusion keeps meaning: the same eager outputs before and after the pipeline.
  void eagerOutputsAgree_data() { levels_data(); }
  void eagerOutputsAgree() {
    QFETCH(int, level);
    const Compiled& c = compiled(level);
    const Graph& before = c.input;
    std::map<std::string, TensorData> inputs;
    for (size_t i = 0; i < before.inputs().size(); ++i) {
      const Value& v = before.value(before.inputs()[i]);
      auto t = randomTensor(v.type, 11 + i);
      QVERIFY2(t.isOk(), t.message().c_str());
      inputs[v.name] = *t;
    }
    QCOMPARE(inputs.size(), size_t(2));  // x and mask
    auto a = runEager(before, inputs);
    QVERIFY2(a.isOk(), a.message().c_str());
    auto b = runEager(c.final(), inputs);
    QVERIFY2(b.isOk(), b.message().c_str());
    QCOMPARE(c.final().outputs().size(), before.outputs().size());
    auto m = compareTensors(*a->find(before.outputs()[0]), *b->find(c.final().outputs()[0]),
                            {1e-5, 1e-5});
    QVERIFY(m.withinTolerance());
  }
};

QTEST_APPLESS_MAIN(TransformerFusionTest)
#include "transformer_fusion_test.moc"
