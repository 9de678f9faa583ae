// Bisection (session/bisect_report.h). A fault planted in one fused kernel of
// a teaching sample is found by splitting groups, for every fused kernel of
// the model in turn; two faults need both groups; a fault in a single-op
// kernel is not fusion's; by passes, the blamed pass is the one that formed
// the faulty group; a healthy model has nothing to bisect.
#include <QtTest>

#include "session/report_json.h"
#include "session/session.h"
#include "tests/support/test_paths.h"

using namespace fuselens;

namespace {
std::string sample(const char* name) { return fuselens::test::sourcePath("/samples/") + name; }

struct Opened {
  Session s;
  std::map<std::string, TensorData> inputs;
};

std::unique_ptr<Opened> open(const char* name) {
  auto o = std::make_unique<Opened>();
  if (!o->s.open(sample(name)).isOk() || !o->s.optimize(defaultPipeline()).isOk() ||
      !o->s.compile().isOk())
    return nullptr;
  o->inputs = *o->s.randomInputs(5);
  return o;
}

bool isGroup(const Node& n) { return n.op == kFusedOp && n.domain == kFuseLensDomain; }
}  // namespace

class BisectTest : public QObject {
  Q_OBJECT
 private slots:
  void healthyModelHasNothingToBisect() {
    auto o = open("mlp.onnx");
    QVERIFY(o);
    auto rep = o->s.bisect(o->inputs, {}, CompareOptions{});
    QVERIFY2(rep.isOk(), rep.message().c_str());
    QCOMPARE(int(rep->outcome), int(BisectReport::Outcome::Within));
    QCOMPARE(rep->trials.size(), size_t(1));
    QVERIFY(QString::fromStdString(rep->verdict()).startsWith("PASS: "));
  }

  // Every fused kernel of mobilenet_se in turn: the planted fault's group, and
  // only it, is what must be split.
  void everyFaultyGroupIsFound() {
    auto o = open("mobilenet_se.onnx");
    QVERIFY(o);
    const Graph& g = o->s.finalGraph();
    int swept = 0;
    for (const KernelInfo& k : o->s.compiled()->kernels()) {
      const Node& n = g.node(k.node);
      if (!isGroup(n)) continue;
      o->s.perturbations = {{k.name, 1e-2}};
      auto rep = o->s.bisect(o->inputs, {}, CompareOptions{});
      QVERIFY2(rep.isOk(), rep.message().c_str());
      QVERIFY2(rep->outcome == BisectReport::Outcome::Found, rep->verdict().c_str());
      QCOMPARE(rep->groups, std::vector<int>{int(n.attrs.getInt("group", -1))});
      QCOMPARE(rep->kernels, std::vector<std::string>{k.name});
      ++swept;
    }
    QVERIFY(swept >= 4);
  }

  void twoFaultsNeedBothGroups() {
    auto o = open("mobilenet_se.onnx");
    QVERIFY(o);
    const Graph& g = o->s.finalGraph();
    std::vector<const KernelInfo*> fused;
    for (const KernelInfo& k : o->s.compiled()->kernels())
      if (isGroup(g.node(k.node))) fused.push_back(&k);
    QVERIFY(fused.size() >= 3);
    std::vector<int> planted;
    for (const KernelInfo* k : {fused.front(), fused.back()}) {  // far apart
      o->s.perturbations[k->name] = 1e-2;
      planted.push_back(int(g.node(k->node).attrs.getInt("group", -1)));
    }
    auto rep = o->s.bisect(o->inputs, {}, CompareOptions{});
    QVERIFY2(rep.isOk(), rep.message().c_str());
    std::sort(planted.begin(), planted.end());
    QCOMPARE(rep->groups, planted);
  }

  void faultOutsideFusionIsNotFusions() {
    auto o = open("mlp.onnx");
    QVERIFY(o);
    const Graph& g = o->s.finalGraph();
    for (const KernelInfo& k : o->s.compiled()->kernels())
      if (!isGroup(g.node(k.node))) o->s.perturbations = {{k.name, 1e-2}};
    QCOMPARE(o->s.perturbations.size(), size_t(1));  // the softmax runs alone
    auto rep = o->s.bisect(o->inputs, {}, CompareOptions{});
    QVERIFY2(rep.isOk(), rep.message().c_str());
    QCOMPARE(int(rep->outcome), int(BisectReport::Outcome::NotFusion));
    QVERIFY(QString::fromStdString(rep->verdict()).startsWith("NOT FUSION: "));
  }

  // By passes, the fault follows its group: absent until a fusion pass forms
  // it, so that pass is blamed and every snapshot before it is within.
  void passBisectBlamesTheFusionPass() {
    auto o = open("resnet_bottleneck.onnx");
    QVERIFY(o);
    const Graph& g = o->s.finalGraph();
    for (const KernelInfo& k : o->s.compiled()->kernels())
      if (isGroup(g.node(k.node)) && o->s.perturbations.empty()) o->s.perturbations[k.name] = 1e-2;
    BisectRequest req;
    req.by = BisectBy::Passes;
    auto rep = o->s.bisect(o->inputs, req, CompareOptions{});
    QVERIFY2(rep.isOk(), rep.message().c_str());
    QVERIFY2(rep->outcome == BisectReport::Outcome::Found, rep->verdict().c_str());
    QVERIFY(QString::fromStdString(rep->pass).startsWith("fuse-"));
    QCOMPARE(rep->trials.size(), o->s.snapshots().size());
    for (int i = 0; i < rep->passStep; ++i) QVERIFY(rep->trials[size_t(i)].within);
    QVERIFY(!rep->trials.back().within);
    const std::string json = bisectJson(*rep);
    for (const char* field : {"\"by\"", "\"outcome\"", "\"pass\"", "\"pass_step\"", "\"trials\""})
      QVERIFY2(json.find(field) != std::string::npos, field);
  }

  void unknownOutputIsASentence() {
    auto o = open("mlp.onnx");
    QVERIFY(o);
    BisectRequest req;
    req.output = "nope";
    auto rep = o->s.bisect(o->inputs, req, CompareOptions{});
    QVERIFY(!rep.isOk());
    QVERIFY2(rep.message().find("is not a graph output") != std::string::npos,
             rep.message().c_str());
  }
};

QTEST_GUILESS_MAIN(BisectTest)
#include "bisect_test.moc"
