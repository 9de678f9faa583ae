// The compare report's own sentences, which both faces print word for word:
// verdicts, row status words, producer labels, and that a reference-fallback
// tensor is never counted as agreement.
#include <QtTest>

#include "session/session.h"

using namespace fuselens;

namespace {

TensorType f32() { return TensorType::of(DType::F32, {4}); }

// x -> Fused group 3 -> %y -> Relu -> %z
struct Fixture {
  Graph g;
  ValueId x, y, z;
  Fixture() {
    x = g.addInput("x", f32());
    Attributes attrs;
    attrs.set("group", int64_t{3});
    NodeId f = g.addNode(kFusedOp, {x}, {{"y", f32()}}, attrs);
    g.mutableNode(f).domain = kFuseLensDomain;
    y = g.node(f).outputs[0];
    z = g.node(g.addNode("Relu", {y}, {{"z", f32()}})).outputs[0];
  }
  CompareRow row(ValueId v, const std::string& producer, int64_t bad, bool fallback = false) const {
    CompareRow r;
    r.value = v;
    r.name = g.value(v).name;
    r.producer = producer;
    r.fallback = fallback;
    r.metrics.count = 4;
    r.metrics.outOfTolerance = bad;
    return r;
  }
};

}  // namespace

class CompareReportTest : public QObject {
  Q_OBJECT

 private slots:
  void verdict_data() {
    QTest::addColumn<QList<int>>("bad");  // per row (x, y, z): elements out of tolerance
    QTest::addColumn<QString>("expected");
    QTest::newRow("all within") << QList<int>{0, 0, 0}
                                << "PASS: 3 tensors within tolerance (atol 0.0001, rtol 0.0001)";
    QTest::newRow("fused group diverges") << QList<int>{0, 2, 1}
                                          << "FAIL: y (from k0_fused) is the first tensor out of "
                                             "tolerance (atol 0.0001, rtol 0.0001)";
    QTest::newRow("unfused op diverges")
        << QList<int>{0, 0, 4}
        << "FAIL: z (from k1_relu) is the first tensor out of tolerance (atol 0.0001, rtol 0.0001)";
  }

  void verdict() {
    QFETCH(QList<int>, bad);
    QFETCH(QString, expected);
    Fixture f;
    CompareReport report;
    report.rows = {f.row(f.x, "graph input", bad[0]), f.row(f.y, "k0_fused", bad[1]),
                   f.row(f.z, "k1_relu", bad[2])};
    QCOMPARE(QString::fromStdString(report.verdict()), expected);
    QCOMPARE(report.allWithin(), expected.startsWith("PASS"));
  }

  // A fallback tensor is the eager kernel's own output: it is neither counted
  // among the tensors within tolerance nor allowed to fail the run, and the
  // note names its kernel.
  void fallbackIsNeverAgreement() {
    Fixture f;
    CompareReport report;
    report.rows = {f.row(f.y, "k0_fused", 0), f.row(f.z, "k1_relu", 0, true)};
    report.fallbackKernels = "k1_relu (Relu)";
    QCOMPARE(report.verdict(),
             std::string("PASS: 1 tensor within tolerance (atol 0.0001, rtol 0.0001)"));
    QCOMPARE(report.fallbackNote(), std::string("NOTE: 1 tensor not compiled (reference fallback), "
                                                "not compared: kernels k1_relu (Relu)"));
    QCOMPARE(rowStatus(report.rows[1]), std::string("fallback"));
    QCOMPARE(rowStatus(report.rows[0]), std::string("ok"));
    report.rows[1].metrics.outOfTolerance =
        4;  // a fallback row out of tolerance is still not judged
    QVERIFY(report.allWithin());
  }

  void rowStatusWords() {
    Fixture f;
    CompareRow r = f.row(f.z, "k1_relu", 3);
    r.metrics.nanMismatch = 1;
    QCOMPARE(rowStatus(r), std::string("OUT (4 elems)"));
    r.metrics.shapeMatch = false;
    QCOMPARE(rowStatus(r), std::string("SHAPE MISMATCH"));
  }

  void producerLabels() {
    Fixture f;
    QCOMPARE(producerLabel(f.row(f.y, "k0_fused", 0), f.g), std::string("group 3"));
    QCOMPARE(producerLabel(f.row(f.z, "k1_relu", 0), f.g), std::string("k1_relu"));
  }

  void isolatedVerdicts() {
    IsolatedReport rep;
    IsolatedRow ok;
    ok.kernel = "k0_fused";
    ok.name = "y";
    rep.rows = {ok};
    QCOMPARE(isolatedVerdict(rep), std::string("PASS: every kernel within tolerance when fed eager "
                                               "inputs (atol 0.0001, rtol 0.0001)"));
    IsolatedRow bad = ok;
    bad.kernel = "k1_relu";
    bad.name = "z";
    bad.verdict = IsolatedVerdict::KernelDiffers;
    bad.isolated.maxAbs = 0.12;
    rep.rows.push_back(bad);
    QCOMPARE(isolatedVerdict(rep), std::string("FAIL: kernel k1_relu is the first that differs "
                                               "when fed eager inputs (z, max abs 0.12)"));
  }
};

QTEST_GUILESS_MAIN(CompareReportTest)
#include "compare_report_test.moc"
