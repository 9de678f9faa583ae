// The compare report's own sentences, which both faces print word for word:
// verdicts (rounding-aware by default, fixed tolerances when asked for), row
// status words, producer labels, and that a reference-fallback tensor is never
// counted as agreement.
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
    r.metrics.toleranceStat = bad ? 2.0 : 0.0;
    r.verdict = bad ? NumericVerdict::BeyondRounding : NumericVerdict::WithinRounding;
    return r;
  }
  // The same row judged by rounding: `ratio` times the expected error.
  CompareRow rounded(ValueId v, const std::string& producer, double ratio,
                     NumericVerdict verdict = NumericVerdict::WithinRounding) const {
    CompareRow r = row(v, producer, 0);
    RoundingCheck c;
    c.count = 4;
    c.expected = 1e-6;
    c.actual = ratio * 1e-6;
    c.ratio = ratio;
    c.verdict = verdict;
    if (verdict == NumericVerdict::Wrong) {
      c.nonFiniteMismatch = 2;
      c.why = "2 NaN/Inf mismatches";
    }
    r.rounding = c;
    r.verdict = verdict;
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
    report.options = Tolerance{};
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
    report.options = Tolerance{};
    report.rows = {f.row(f.y, "k0_fused", 0), f.row(f.z, "k1_relu", 0, true)};
    report.fallbackKernels = "k1_relu (Relu)";
    QCOMPARE(report.verdict(),
             std::string("PASS: 1 tensor within tolerance (atol 0.0001, rtol 0.0001)"));
    QCOMPARE(report.fallbackNote(), std::string("NOTE: 1 tensor not compiled (reference fallback), "
                                                "not compared: kernels k1_relu (Relu)"));
    QCOMPARE(rowStatus(report.rows[1]), std::string("fallback"));
    QCOMPARE(rowStatus(report.rows[0]), std::string("ok"));
    // A fallback row out of tolerance is still not judged.
    report.rows[1].metrics.outOfTolerance = 4;
    report.rows[1].verdict = NumericVerdict::BeyondRounding;
    QVERIFY(report.allWithin());
  }

  void roundingVerdict_data() {
    QTest::addColumn<QList<double>>("ratios");  // per row (x, y, z); negative: wrong
    QTest::addColumn<QString>("expected");
    QTest::newRow("all within rounding")
        << QList<double>{0, 1.5, 7.9}
        << "PASS: 3 tensors within rounding (max error against the f64 reference, margin 8×)";
    QTest::newRow("beyond rounding") << QList<double>{0, 40, 1}
                                     << "FAIL: y (from k0_fused) is the first tensor beyond "
                                        "rounding (40× the expected error)";
    QTest::newRow("wrong") << QList<double>{0, 1, -1}
                           << "FAIL: z (from k1_relu) is the first wrong tensor (2 NaN/Inf "
                              "mismatches)";
  }

  void roundingVerdict() {
    QFETCH(QList<double>, ratios);
    QFETCH(QString, expected);
    Fixture f;
    auto verdictOf = [](double r) {
      return r < 0                 ? NumericVerdict::Wrong
             : r > kRoundingMargin ? NumericVerdict::BeyondRounding
                                   : NumericVerdict::WithinRounding;
    };
    CompareReport report;  // rounding verdicts are the default
    const ValueId vs[] = {f.x, f.y, f.z};
    const char* producers[] = {"graph input", "k0_fused", "k1_relu"};
    for (int i = 0; i < 3; ++i)
      report.rows.push_back(
          f.rounded(vs[i], producers[i], ratios[i] < 0 ? 1.0 : ratios[i], verdictOf(ratios[i])));
    QCOMPARE(QString::fromStdString(report.verdict()), expected);
    QCOMPARE(report.allWithin(), expected.startsWith("PASS"));
    const CompareRow& y = report.rows[1];
    if (ratios[1] > kRoundingMargin)
      QCOMPARE(rowStatus(y), std::string("beyond rounding (40× the expected error)"));
    else
      QCOMPARE(rowStatus(y), std::string("within rounding"));
    if (ratios[2] < 0)
      QCOMPARE(rowStatus(report.rows[2]), std::string("wrong (2 NaN/Inf mismatches)"));
  }

  void errorRatios() {
    Fixture f;
    QCOMPARE(errorRatio(f.rounded(f.y, "k0", 3)), 3.0);
    QVERIFY(std::isinf(errorRatio(f.rounded(f.y, "k0", 1, NumericVerdict::Wrong))));
    CompareRow fixed = f.row(f.y, "k0", 1);  // fixed tolerances: error over allowed error
    QCOMPARE(errorRatio(fixed), 2.0);
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
    rep.options = Tolerance{};
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

  void isolatedRoundingVerdicts() {
    IsolatedReport rep;  // rounding verdicts are the default
    IsolatedRow ok;
    ok.kernel = "k0_fused";
    ok.name = "y";
    ok.own = RoundingCheck{};
    rep.rows = {ok};
    QCOMPARE(isolatedVerdict(rep),
             std::string("PASS: every kernel within rounding when fed eager inputs (max error "
                         "against the f64 reference, margin 8×)"));
    rep.rows[0].verdict = IsolatedVerdict::AccumulatedUpstream;
    QCOMPARE(isolatedVerdict(rep), std::string("FAIL: every kernel is within rounding alone; the "
                                               "end-to-end error accumulated upstream"));
    IsolatedRow bad = ok;
    bad.kernel = "k1_relu";
    bad.name = "z";
    bad.verdict = IsolatedVerdict::KernelDiffers;
    bad.own->ratio = 40;
    bad.own->verdict = NumericVerdict::BeyondRounding;
    rep.rows.push_back(bad);
    QCOMPARE(isolatedVerdict(rep),
             std::string("FAIL: kernel k1_relu is the first whose own error is beyond rounding "
                         "when fed eager inputs (z, beyond rounding (40× the expected error))"));
  }
};

QTEST_GUILESS_MAIN(CompareReportTest)
#include "compare_report_test.moc"
