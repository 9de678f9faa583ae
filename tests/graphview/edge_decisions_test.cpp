// Decisions to drawn edges, and the heat scale, without widgets: decisions
// accumulate over the pipeline (a later one wins), they land on the edges
// whose end nodes carry their names, and the heat scale is logarithmic.
#include "session/graphview/edge_decisions.h"

#include <QtTest>
#include <cmath>

#include "passes/pass_manager.h"
#include "session/graphview/divergence_heat.h"
#include "session/session.h"

using namespace fuselens;
using namespace fuselens::graphview;

namespace {

TensorType f32(std::vector<int64_t> shape) { return TensorType::of(DType::F32, shape); }

// x -> fc (MatMul) -> bias_add (Add) -> relu (Relu) -> y, with node names.
Graph namedChain() {
  Graph g;
  ValueId x = g.addInput("x", f32({1, 4}));
  ValueId w = g.addConstant(
      "W", std::make_shared<const TensorData>(DType::F32, std::vector<int64_t>{4, 3}));
  NodeId mm = g.addNode("MatMul", {x, w}, {{"mm", f32({1, 3})}}, {}, "fc");
  NodeId add = g.addNode("Add", {g.node(mm).outputs[0], g.node(mm).outputs[0]},
                         {{"pre", f32({1, 3})}}, {}, "bias_add");
  NodeId relu = g.addNode("Relu", {g.node(add).outputs[0]}, {{"y", f32({1, 3})}}, {}, "relu");
  g.addOutput(g.node(relu).outputs[0]);
  return g;
}

FusionDecision decision(const std::string& from, const std::string& to, bool accepted,
                        FusionRule rule) {
  FusionDecision d;
  d.producerName = from;
  d.consumerName = to;
  d.accepted = accepted;
  d.rule = rule;
  d.reason = (accepted ? "accepted: " : "rejected: ") + d.ruleId();
  d.passName = "fuse-ops";
  return d;
}

Snapshot snapshot(const std::string& label, std::vector<FusionDecision> decisions) {
  Snapshot s{label, std::make_shared<const Graph>(namedChain()), {}};
  s.record.pass = label;
  s.record.decisions = std::move(decisions);
  return s;
}

int edgeBetween(const GraphLayout& l, const std::string& from, const std::string& to) {
  for (size_t i = 0; i < l.edges.size(); ++i)
    if (l.nodes[size_t(l.edges[i].from)].name == from && l.nodes[size_t(l.edges[i].to)].name == to)
      return static_cast<int>(i);
  return -1;
}

}  // namespace

class EdgeDecisionsTest : public QObject {
  Q_OBJECT

 private slots:
  void layoutCarriesNamesAndOutputs() {
    auto layout = layoutGraph(namedChain());
    QVERIFY(layout.isOk());
    const int e = edgeBetween(*layout, "fc", "bias_add");
    QVERIFY(e >= 0);
    const LayoutNode& fc = layout->nodes[size_t(layout->edges[size_t(e)].from)];
    QCOMPARE(fc.outputs, std::vector<std::string>{"mm"});
    QCOMPARE(layout->nodes[0].name, std::string("x"));  // inputs are named by their value
  }

  void decisionsUpTo_data() {
    QTest::addColumn<int>("row");
    QTest::addColumn<int>("count");
    QTest::addColumn<QString>("ruleOfFcToAdd");
    QTest::newRow("import: none yet") << 0 << 0 << "";
    QTest::newRow("after dce: none made") << 1 << 0 << "";
    QTest::newRow("after fuse-patterns") << 2 << 2 << "pattern-matmul-bias-act";
    QTest::newRow("after fuse-ops: later wins") << 3 << 2 << "elemwise-chain";
    QTest::newRow("past the end clamps") << 99 << 2 << "elemwise-chain";
  }

  void decisionsUpTo() {
    QFETCH(int, row);
    QFETCH(int, count);
    QFETCH(QString, ruleOfFcToAdd);
    std::vector<Snapshot> snaps;
    snaps.push_back(snapshot("import", {}));
    snaps.push_back(snapshot("dce", {}));
    snaps.push_back(snapshot("fuse-patterns",
                             {decision("fc", "bias_add", true, FusionRule::PatternMatMulBiasAct),
                              decision("bias_add", "relu", false, FusionRule::Opaque)}));
    snaps.push_back(
        snapshot("fuse-ops", {decision("fc", "bias_add", true, FusionRule::ElemwiseChain)}));
    const auto got = graphview::decisionsUpTo(snaps, row);
    QCOMPARE(int(got.size()), count);
    QString rule;
    for (const FusionDecision& d : got)
      if (d.producerName == "fc" && d.consumerName == "bias_add")
        rule = QString::fromStdString(d.ruleId());
    QCOMPARE(rule, ruleOfFcToAdd);
  }

  void matchByNames_data() {
    QTest::addColumn<QString>("from");
    QTest::addColumn<QString>("to");
    QTest::addColumn<bool>("matched");
    QTest::newRow("op to op") << "fc"
                              << "bias_add" << true;
    QTest::newRow("second edge") << "bias_add"
                                 << "relu" << true;
    QTest::newRow("reversed names") << "relu"
                                    << "bias_add" << false;
    QTest::newRow("input edge: never") << "x"
                                       << "fc" << false;
    QTest::newRow("unknown node") << "fc"
                                  << "nowhere" << false;
  }

  void matchByNames() {
    QFETCH(QString, from);
    QFETCH(QString, to);
    QFETCH(bool, matched);
    auto layout = layoutGraph(namedChain());
    QVERIFY(layout.isOk());
    const std::vector<FusionDecision> ds = {
        decision(from.toStdString(), to.toStdString(), false, FusionRule::FusionWindow)};
    const std::vector<int> match = matchEdgeDecisions(*layout, ds);
    QCOMPARE(match.size(), layout->edges.size());
    const int hits = int(std::count(match.begin(), match.end(), 0));
    QCOMPARE(hits, matched ? 1 : 0);
    if (matched)
      QCOMPARE(match[size_t(edgeBetween(*layout, from.toStdString(), to.toStdString()))], 0);
  }

  // The scale is error over expected error, log: 0.1 to 1e4, five decades.
  void heatScale_data() {
    QTest::addColumn<double>("ratio");
    QTest::addColumn<bool>("within");
    QTest::addColumn<double>("fraction");
    QTest::newRow("exact") << 0.0 << true << 0.0;
    QTest::newRow("at the low end") << kHeatLow << true << 0.0;
    QTest::newRow("one expected error") << 1.0 << true << 0.2;
    QTest::newRow("mid scale") << std::pow(10.0, 1.5) << true << 0.5;
    QTest::newRow("at the high end") << kHeatHigh << true << 1.0;
    QTest::newRow("beyond the high end") << 1e7 << true << 1.0;
    QTest::newRow("NaN is hot") << double(NAN) << true << 1.0;
    QTest::newRow("infinity is hot") << double(INFINITY) << true << 1.0;
    QTest::newRow("beyond rounding is never cool") << 1e-2 << false << 0.6;
  }

  void heatScale() {
    QFETCH(double, ratio);
    QFETCH(bool, within);
    QFETCH(double, fraction);
    ValueHeat h;
    h.ratio = ratio;
    h.within = within;
    QVERIFY2(std::abs(heatFraction(h) - fraction) < 1e-9,
             qPrintable(QString::number(heatFraction(h))));
  }

  void heatByValueKeysNames() {
    CompareReport report;
    CompareRow ok;
    ok.name = "mm";
    ok.metrics.maxRel = 1e-7;
    CompareRow bad;
    bad.name = "y";
    bad.metrics.shapeMatch = false;
    bad.verdict = NumericVerdict::Wrong;
    CompareRow host;  // a reference-fallback tensor: not compiled, so no heat at all
    host.name = "loop_out";
    host.fallback = true;
    report.rows = {ok, bad, host};
    const auto heat = heatByValue(report);
    QCOMPARE(heat.size(), size_t(2));
    QVERIFY(!heat.count("loop_out"));
    QVERIFY(heat.at("mm").within);
    QVERIFY(!heat.at("y").within);
    QCOMPARE(heatFraction(heat.at("y")), 1.0);  // a shape mismatch is as far off as it gets
  }
};

QTEST_GUILESS_MAIN(EdgeDecisionsTest)
#include "edge_decisions_test.moc"
