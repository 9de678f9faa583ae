// Taps (session/tap_compare.h): a value computed inside a fused group,
// compared with eager through the group's tapped variant. For groups of every
// kind that store a tap differently (an elementwise chain in a nest of its own
// and in a MatMul epilogue, a MatMul accumulator and its bias before GELU, a
// softmax's inlined input and its materialized result, a LayerNorm's mean and
// variance, a Conv+BN accumulator in NCHW8c),
// the variant's own outputs are checked here bit for bit against the group
// compiled without the tap, on the same inputs, and the tap against eager
// within rounding. Bad names get one sentence each, and an error planted
// upstream shows in the tap.
#include <QtTest>
#include <cstring>

#include "session/session.h"
#include "tests/support/test_paths.h"

using namespace fuselens;

namespace {

std::string sample(const QString& name) {
  return fuselens::test::sourcePath("/samples/") + name.toStdString();
}

// fusion_limits runs under an 8-op fusion window, which splits its chain of
// twelve into a MatMul epilogue and an elementwise group of its own: both
// kinds of nest a tap goes into. The default 12-op window fuses all but one op.
Session opened(const QString& model) {
  Session s;
  const std::string pipeline =
      model == "fusion_limits.onnx"
          ? "const-fold,cse,simplify,dce,layout{block=8},fuse-patterns,fuse-ops{max-ops=8}"
          : defaultPipeline();
  if (Status st = s.open(sample(model)); !st) qFatal("%s", st.message().c_str());
  if (Status st = s.optimize(pipeline); !st) qFatal("%s", st.message().c_str());
  if (Status st = s.compile(); !st) qFatal("%s", st.message().c_str());
  return s;
}

// The group's outputs from the kernel graph `k` (the group alone) compiled
// and run on the compiled run's tensors for its inputs.
std::vector<TensorData> runAlone(const Graph& g, const KernelGraph& k,
                                 const std::vector<std::optional<TensorData>>& run) {
  std::map<std::string, TensorData> feeds;
  for (const auto& [name, v] : k.feeds) feeds[name] = *run[v.index];
  CompileOptions opts;
  opts.fallback = false;
  auto mod = compileGraph(k.graph, opts);
  if (!mod) qFatal("%s", mod.message().c_str());
  auto got = (*mod)->run(feeds);
  if (!got) qFatal("%s", got.message().c_str());
  std::vector<TensorData> outs;
  for (ValueId v : k.graph.outputs()) outs.push_back(*(*got)[v.index]);
  return outs;
}

const char* const kBertFfn = "/encoder/layer.0/intermediate/dense/";

}  // namespace

class TapCompareTest : public QObject {
  Q_OBJECT
 private slots:
  void tapLeavesOutputsAndMatchesEager_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("tap");
    QTest::newRow("elementwise chain, a nest of its own") << "fusion_limits.onnx"
                                                          << "/chain/Tanh_2_output_0";
    QTest::newRow("elementwise chain, in a MatMul epilogue") << "fusion_limits.onnx"
                                                             << "/chain/Tanh_output_0";
    QTest::newRow("MatMul accumulator before bias + GELU")
        << "bert_layer.onnx" << QString(kBertFfn) + "MatMul_output_0";
    QTest::newRow("MatMul + bias before GELU")
        << "bert_layer.onnx" << QString(kBertFfn) + "Add_output_0";
    QTest::newRow("softmax input (scores + mask)")
        << "bert_layer.onnx"
        << "/encoder/layer.0/attention/self/Add_output_0";
    QTest::newRow("softmax result inside attention (a materialized temp)")
        << "bert_layer.onnx"
        << "/encoder/layer.0/attention/self/Softmax_output_0";
    QTest::newRow("softmax result feeding a LayerNorm") << "reduce_fusion.onnx"
                                                        << "/softmax/Div_output_0";
    QTest::newRow("LayerNorm mean (f16, written out)") << "f16_layernorm.onnx"
                                                       << "/ln_f16/ReduceMean_output_0";
    QTest::newRow("LayerNorm variance (f16, written out)") << "f16_layernorm.onnx"
                                                           << "/ln_f16/ReduceMean_1_output_0";
    QTest::newRow("LayerNorm centred input, read by two nests") << "f16_layernorm.onnx"
                                                                << "/ln_f16/Sub_output_0";
    QTest::newRow("Conv + BN accumulator, NCHW8c, before ReLU")
        << "resnet_bottleneck.onnx"
        << "/layer1/0/block1/bn/BatchNormalization_output_0";
    QTest::newRow("Conv + BN accumulator, NCHW8c, before residual + ReLU")
        << "resnet_bottleneck.onnx"
        << "/layer1/0/block3/bn/BatchNormalization_output_0";
  }

  void tapLeavesOutputsAndMatchesEager() {
    QFETCH(QString, model);
    QFETCH(QString, tap);
    Session s = opened(model);
    auto inputs = *s.randomInputs(7);
    const Graph& g = s.finalGraph();
    const std::vector<KernelInfo>& ks = s.compiled()->kernels();
    auto target = findTap(s.original(), g, ks, tap.toStdString());
    QVERIFY2(target.isOk(), target.isOk() ? "" : target.message().c_str());

    // Bit for bit: the group with and without the tap, on the same inputs.
    const Node& node = g.node(ks[target->kernel].node);
    auto run = s.compiled()->run(inputs);
    QVERIFY(run.isOk());
    std::vector<TensorData> plain = runAlone(g, extractKernelGraph(g, node), *run);
    std::vector<TensorData> tapped =
        runAlone(g, extractKernelGraph(g, node, {target->bodyValue}), *run);
    QCOMPARE(tapped.size(), plain.size() + 1);
    for (size_t o = 0; o < plain.size(); ++o) {
      QCOMPARE(tapped[o].shape, plain[o].shape);
      QVERIFY2(tapped[o].bytes == plain[o].bytes, g.value(node.outputs[o]).name.c_str());
    }

    // Through the session: the tap is within rounding of eager.
    auto rep = s.compareTaps({tap.toStdString()}, inputs, CompareOptions{});
    QVERIFY2(rep.isOk(), rep.isOk() ? "" : rep.message().c_str());
    QCOMPARE(rep->rows.size(), size_t(1));
    const TapRow& r = rep->rows[0];
    QVERIFY2(r.outputsIdentical, r.outputsNote.c_str());
    QCOMPARE(r.kernel, ks[target->kernel].name);
    QVERIFY(r.group >= 0);
    QVERIFY(r.row.rounding.has_value());
    QVERIFY(r.row.metrics.count > 0);
    QVERIFY2(r.row.verdict == NumericVerdict::WithinRounding, rowStatus(r.row).c_str());
    QVERIFY(rep->allWithin());
    QVERIFY(QString::fromStdString(rep->verdict()).startsWith("PASS: 1 tap within rounding"));
    QCOMPARE(s.lastTaps()->rows.size(), size_t(1));
  }

  // An error planted in the first conv reaches the second conv's accumulator:
  // the tap inside the second group is beyond rounding, and that group's
  // outputs still match the compiled run's.
  void tapSeesErrorCarriedIn() {
    Session s = opened("resnet_bottleneck.onnx");
    s.perturbations["k0"] = 1e-2;
    auto rep = s.compareTaps({"/layer1/0/block2/bn/BatchNormalization_output_0"},
                             *s.randomInputs(3), CompareOptions{});
    QVERIFY2(rep.isOk(), rep.isOk() ? "" : rep.message().c_str());
    const TapRow& r = rep->rows[0];
    QVERIFY(r.outputsIdentical);
    QVERIFY(r.row.verdict != NumericVerdict::WithinRounding);
    QVERIFY(!rep->allWithin());
    QVERIFY(QString::fromStdString(rep->verdict()).startsWith("FAIL: tap "));
  }

  void badNamesAreOneSentence_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("tap");
    QTest::addColumn<QString>("says");
    QTest::newRow("no such tensor") << "mlp.onnx"
                                    << "nope"
                                    << "no tensor named 'nope'";
    QTest::newRow("kernel boundary") << "mlp.onnx"
                                     << "y"
                                     << "kernel-boundary tensor";
    QTest::newRow("a constant") << "mlp.onnx"
                                << "W1"
                                << "is a constant";
    QTest::newRow("rewritten into one op") << "reduce_fusion.onnx"
                                           << "/softmax/ReduceMax_output_0"
                                           << "not computed by compiled code";
  }

  void badNamesAreOneSentence() {
    QFETCH(QString, model);
    QFETCH(QString, tap);
    QFETCH(QString, says);
    Session s = opened(model);
    auto rep = s.compareTaps({tap.toStdString()}, *s.randomInputs(1), CompareOptions{});
    QVERIFY(!rep.isOk());
    const QString message = QString::fromStdString(rep.message());
    QVERIFY2(message.contains(says), qPrintable(message));
    QVERIFY(!message.contains('\n'));
    QVERIFY(!s.lastTaps());
  }
};

QTEST_GUILESS_MAIN(TapCompareTest)
#include "tap_compare_test.moc"
