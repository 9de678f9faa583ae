// The status bar's compare line, from hand-made reports.
#include "viewer/compare_summary.h"

#include <QtTest>

#include "session/session.h"

using namespace fuselens;
using namespace fuselens::viewer;

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
  CompareRow row(ValueId v, const std::string& producer, double maxAbs, int64_t bad) const {
    CompareRow r;
    r.value = v;
    r.name = g.value(v).name;
    r.producer = producer;
    r.metrics.count = 4;
    r.metrics.maxAbs = maxAbs;
    r.metrics.outOfTolerance = bad;
    return r;
  }
};

}  // namespace

class CompareSummaryTest : public QObject {
  Q_OBJECT

 private slots:
  void summary_data() {
    QTest::addColumn<QList<int>>("bad");  // per row (x, y, z): elements out of tolerance
    QTest::addColumn<QString>("expected");
    QTest::newRow("all within") << QList<int>{0, 0, 0}
                                << "compare: 3 tensors, all within tolerance (max abs 2.4e-07)";
    QTest::newRow("fused group diverges")
        << QList<int>{0, 2, 1} << "compare: 2 of 3 tensors out of tolerance, first at %y (group 3)";
    QTest::newRow("unfused op diverges")
        << QList<int>{0, 0, 4} << "compare: 1 of 3 tensors out of tolerance, first at %z (k1_relu)";
  }

  void summary() {
    QFETCH(QList<int>, bad);
    QFETCH(QString, expected);
    Fixture f;
    CompareReport report;
    report.rows = {f.row(f.x, "graph input", 0, bad[0]), f.row(f.y, "k0_fused", 2.4e-7, bad[1]),
                   f.row(f.z, "k1_relu", 1e-7, bad[2])};
    QCOMPARE(QString::fromStdString(compareSummary(report, f.g)), expected);
  }

  void emptyReport() {
    Fixture f;
    QCOMPARE(compareSummary(CompareReport{}, f.g), std::string("compare: no tensors compared"));
  }

  void singleTensorIsSingular() {
    Fixture f;
    CompareReport report;
    report.rows = {f.row(f.z, "k1_relu", 0, 0)};
    QCOMPARE(compareSummary(report, f.g),
             std::string("compare: 1 tensor, all within tolerance (max abs 0)"));
  }
};

QTEST_GUILESS_MAIN(CompareSummaryTest)
#include "compare_summary_test.moc"
