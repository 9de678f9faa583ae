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
// What the default pipeline (-O2, fuse-ops{max-ops=8}) forms, per layer, and
// -O3 (max-ops=16) forms exactly the same: the window is never what stops a
// merge here, the kind rules are. 16 kernels per layer, 13 of them groups:
//
//   kernel                                   why it ends where it ends
//   Q proj   {MatMul, Add}        (x3: Q,K,V) -> Reshape: injective-after-anchor
//   Q split  {Reshape, Transpose} (x3)        -> MatMul qk / ctx: prologue-into-anchor
//   scores   {MatMul, Div, Add}   QK^T, scale and mask fuse as the MatMul's
//                                             epilogue (anchor-epilogue)
//   Softmax  alone                scores -> Softmax: two-anchors (OutEWiseFusable
//                                             group, CommReduce consumer);
//                                             Softmax -> MatMul: two-anchors
//   ctx      MatMul alone         -> Transpose: injective-after-anchor
//   merge    {Transpose, Reshape} -> MatMul o: prologue-into-anchor
//   O proj   {MatMul, Add, Add}   bias + residual as epilogue
//   ln1 mean {ReduceMean, Sub}    res1 -> ReduceMean: two-anchors (reconverge
//                                             tried: both users of res1 are in
//                                             this group, but res1 sits in the
//                                             O-proj MatMul group)
//   ln1 rest {Pow, ReduceMean, Add, Sqrt, Div, Mul, Add}
//                                 Sub -> Pow/Div: two-anchors (reconverge tried:
//                                             mean and variance are two reductions)
//   MLP up   {MatMul, Add, Div, Erf, Add, Mul, Mul}   the MLP epilogue: bias and
//                                             the whole GELU (the Add bias output
//                                             joins by reconverge)
//                                             ln1 -> MatMul ff1: producer-has-other-
//                                             users (the residual Add reads it too)
//   MLP down {MatMul, Add, Add}   GELU -> MatMul ff2: prologue-into-anchor;
//                                             ln1 -> res2: producer-has-other-users
//   ln2      LayerNormalization alone (in layer 11 with the graph's output
//            Identity 'y' as its epilogue: reduce-epilogue)
//                                             res2 -> ln2: two-anchors;
//                                             ln2 -> next layer's Q/K/V MatMuls
//                                             and residual: producer-has-other-users
//
// So against "one attention, one LayerNorm, one MLP-epilogue group per layer":
// the MLP epilogue is one group; attention is three kernels (scores group,
// Softmax, ctx MatMul) because a group holds one anchor (two-anchors); ln1 is
// two groups (two reductions: two-anchors) and ln2 is one kernel, the
// LayerNormalization op, which does not take the residual Add as a prologue
// because that Add is already the epilogue of the FFN MatMul (two-anchors).
#include <QtTest>

#include <algorithm>
#include <filesystem>

#include "core/compare/compare.h"
#include "core/eager/interpreter.h"
#include "core/io/npy.h"
#include "core/onnx/import.h"
#include "passes/explain.h"
#include "passes/pass_manager.h"

using namespace fuselens;

namespace {

constexpr int kLayers = 12;

std::string modelPath() { return FUSELENS_SOURCE_DIR "/tests/fixtures/transformer_12l/model.onnx"; }

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
  if (name.size() < 3 || name[0] != 'l' || !std::isdigit(static_cast<unsigned char>(name[1]))) return -1;
  return std::atoi(name.c_str() + 1);
}

// The groups one layer is expected to reduce to, by their ops in topological
// order (see the table above), sorted.
std::vector<std::string> expectedLayerKernels() {
  std::vector<std::string> k = {
      "MatMul Add",         "Reshape Transpose",  // Q
      "MatMul Add",         "Reshape Transpose",  // K
      "MatMul Add",         "Reshape Transpose",  // V
      "MatMul Div Add",                           // scores: QK^T, scale, mask
      "Softmax",            "MatMul",             // probabilities, context
      "Transpose Reshape",  "MatMul Add Add",     // merge heads, O proj + residual
      "ReduceMean Sub",     "Pow ReduceMean Add Sqrt Div Mul Add",  // ln1
      "MatMul Add Div Erf Add Mul Mul",           // FFN up + GELU: the MLP epilogue
      "MatMul Add Add",                           // FFN down + residual
      "LayerNormalization",                       // ln2
  };
  std::sort(k.begin(), k.end());
  return k;
}

struct Compiled {
  Graph input;
  PipelineResult result;
  const Graph& final() const { return result.snapshots.back().graph; }
};

Compiled compile(int level) {
  auto m = importOnnxFile(modelPath());
  if (!m) qFatal("the transformer fixture does not import: %s", m.message().c_str());
  auto specs = parsePipeline(pipelineForLevel(level));
  if (!specs) qFatal("%s", specs.message().c_str());
  auto r = runPipeline(m->graph, *specs);
  if (!r) qFatal("-O%d fails on the transformer fixture: %s", level, r.message().c_str());
  return {std::move(m->graph), std::move(*r)};
}

const Compiled& compiled(int level) {
  static const Compiled o2 = compile(2), o3 = compile(3);
  return level == 2 ? o2 : o3;
}

bool holds(const Graph& g, NodeId n, const std::string& member) {
  auto names = memberNames(g.node(n));
  return std::find(names.begin(), names.end(), member) != names.end();
}

// The rule id of the boundary between the kernel holding `from` and the one
// holding `to`; "<fused>" when both sit in one kernel, "<no edge>" when no
// tensor crosses between them, "<no decision>" when nothing explains it.
std::string boundaryRule(const Compiled& c, const std::vector<SplitEdge>& edges, const std::string& from,
                         const std::string& to) {
  const Graph& g = c.final();
  for (NodeId id : g.nodeIds())
    if (holds(g, id, from) && holds(g, id, to)) return "<fused>";
  for (const SplitEdge& e : edges)
    if (holds(g, e.producer, from) && holds(g, e.consumer, to))
      return e.decision ? e.decision->rule : "<no decision>";
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
  }

  // Every layer reduces to the same 16 kernels; no kernel spans two layers.
  void groupsPerLayer_data() { levels_data(); }
  void groupsPerLayer() {
    QFETCH(int, level);
    QCOMPARE(pipelineForLevel(2), defaultPipeline());
    std::vector<std::vector<std::string>> perLayer(kLayers);
    for (const Kernel& k : kernels(compiled(level).final())) {
      int layer = layerOf(k.names[0]);
      for (const auto& n : k.names)
        QVERIFY2(layerOf(n) == layer, qPrintable(QString::fromStdString(k.name + " spans layers: " + n)));
      QVERIFY2(layer >= 0, k.names[0].c_str());
      QVERIFY2(layer < kLayers, k.names[0].c_str());
      perLayer[layer].push_back(k.opsText());
    }
    for (int l = 0; l < kLayers; ++l) {
      auto expected = expectedLayerKernels();
      if (l == kLayers - 1) {  // the graph's output Identity is ln2's epilogue (reduce-epilogue)
        std::replace(expected.begin(), expected.end(), std::string("LayerNormalization"),
                     std::string("LayerNormalization Identity"));
        std::sort(expected.begin(), expected.end());
      }
      std::sort(perLayer[l].begin(), perLayer[l].end());
      QVERIFY2(perLayer[l] == expected, qPrintable(QString("layer %1 kernels: %2")
                                                       .arg(l)
                                                       .arg(QString::fromStdString([&] {
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
      const std::vector<std::tuple<std::string, std::string, std::string>> expected = {
          // attention
          {"q", "qh_r", "injective-after-anchor"},
          {"k", "kh_r", "injective-after-anchor"},
          {"v", "vh_r", "injective-after-anchor"},
          {"qh_t", "qk", "prologue-into-anchor"},
          {"kh_t", "qk", "prologue-into-anchor"},
          {"qk", "qk_masked", "<fused>"},  // scale and mask: the MatMul's epilogue
          {"qk_masked", "probs", "two-anchors"},
          {"probs", "ctx", "two-anchors"},
          {"vh_t", "ctx", "prologue-into-anchor"},
          {"ctx", "ctx_t", "injective-after-anchor"},
          {"ctx_r", "o_mm", "prologue-into-anchor"},
          {"o_mm", "res1", "<fused>"},
          // ln1, decomposed: two reductions, two groups
          {"res1", "ln1_mean", "two-anchors"},
          {"ln1_mean", "ln1_sub", "<fused>"},
          {"ln1_sub", "ln1_norm", "two-anchors"},
          {"ln1_pow", "ln1", "<fused>"},
          // MLP
          {"ln1", "ff1_mm", "producer-has-other-users"},
          {"ln1", "res2", "producer-has-other-users"},
          {"ff1_mm", "gelu", "<fused>"},
          {"gelu", "ff2_mm", "prologue-into-anchor"},
          {"ff2_mm", "res2", "<fused>"},
          // ln2, the LayerNormalization op
          {"res2", "ln2", "two-anchors"},
      };
      for (const auto& [from, to, rule] : expected) {
        std::string got = boundaryRule(c, edges, p + from, p + to);
        QVERIFY2(got == rule, qPrintable(QString::fromStdString(p + from + " -> " + p + to + ": " + got +
                                                                ", expected " + rule)));
      }
      if (l > 0)
        for (const char* next : {"q_mm", "k_mm", "v_mm", "res1"}) {
          std::string prev = "l" + std::to_string(l - 1) + "_ln2";
          std::string got = boundaryRule(c, edges, prev, p + next);
          QVERIFY2(got == "producer-has-other-users", qPrintable(QString::fromStdString(prev + " -> " + next + ": " + got)));
        }
    }
    // The sentences name both sides and the deciding fact.
    const FusionDecision* softmax = nullptr;
    for (const SplitEdge& e : edges)
      if (e.decision && e.decision->consumerName == "l5_probs") softmax = e.decision;
    QVERIFY(softmax);
    QCOMPARE(QString::fromStdString(softmax->reason),
             QString("rejected: the group of Add 'l5_qk_masked' is OutEWiseFusable and the group of Softmax "
                     "'l5_probs' is CommReduce; a group holds at most one reduction or complex op"));
  }

  // explain: every edge between two kernels has a rejected decision.
  void everyBoundaryHasAReason_data() { levels_data(); }
  void everyBoundaryHasAReason() {
    QFETCH(int, level);
    const Compiled& c = compiled(level);
    auto edges = splitEdges(c.final(), c.result.decisions);
    // 16 inside each layer (Q/K/V proj -> split x3, Q/K split -> scores x2,
    // scores -> Softmax -> ctx, V split -> ctx, ctx -> merge -> O proj,
    // O proj -> ln1 mean -> ln1 rest, ln1 -> MLP up and down, up -> down,
    // down -> ln2), and ln2 -> the next layer's Q, K, V and residual.
    QCOMPARE(edges.size(), size_t(16 * kLayers + 4 * (kLayers - 1)));
    for (const SplitEdge& e : edges) {
      QVERIFY2(e.decision, qPrintable(QString::fromStdString(e.producerName + " -> " + e.consumerName + ": " + e.reason)));
      QVERIFY(!e.decision->accepted);
      QVERIFY2(!e.decision->rule.empty() && e.reason.rfind("rejected: ", 0) == 0, e.reason.c_str());
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
    auto m = compareTensors(*a->find(before.outputs()[0]), *b->find(c.final().outputs()[0]), {1e-5, 1e-5});
    QVERIFY(m.withinTolerance());
  }
};

QTEST_APPLESS_MAIN(TransformerFusionTest)
#include "transformer_fusion_test.moc"
