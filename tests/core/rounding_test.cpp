// Rounding-aware verdicts (core/compare/rounding.h) on hand-made tensors: the
// expected error from an f32 sample against an exact tensor, the verdict words,
// the edge cases (NaN against NaN, infinities, zero-size tensors, integers
// compared exactly), the check stats, ulps, the blocked-layout store that
// isolated compare feeds kernels with, and the eager runs behind it all (the
// f64 widening and the f32-summing contractions).
#include "core/compare/rounding.h"

#include <QtTest>
#include <cmath>
#include <limits>

#include "core/eager/interpreter.h"
#include "core/ir/layout_store.h"

using namespace fuselens;

namespace {

TensorData f32(std::vector<float> v) {
  return TensorData::fromVector(DType::F32, {int64_t(v.size())}, v);
}
TensorData f64(std::vector<double> v) {
  return TensorData::fromVector(DType::F64, {int64_t(v.size())}, v);
}
TensorData i64(std::vector<int64_t> v) {
  return TensorData::fromVector(DType::I64, {int64_t(v.size())}, v);
}

RoundingCheck check(const TensorData& exact, const TensorData& sample, const TensorData& actual,
                    const CompareOptions& opts = {}) {
  return checkRounding(exact, sample, {}, actual, {}, opts);
}

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

}  // namespace

class RoundingTest : public QObject {
  Q_OBJECT
 private slots:
  void ulps() {
    QCOMPARE(ulpOf(1.0, DType::F32), std::ldexp(1.0, -23));
    QCOMPARE(ulpOf(-3.0, DType::F32), std::ldexp(1.0, -22));
    QCOMPARE(ulpOf(0.0, DType::F32), std::ldexp(1.0, -149));
    QCOMPARE(ulpOf(1.0, DType::F16), std::ldexp(1.0, -10));
    QCOMPARE(ulpOf(1.0, DType::F64), std::ldexp(1.0, -52));
  }

  void errorLikeTheSampleIsWithinRounding() {
    // The sample is off by 3e-6 at one element; the compiled run by 2e-6 elsewhere.
    auto c = check(f64({1, 2, 3}), f32({1, 2.000003f, 3}), f32({1.000002f, 2, 3}));
    QCOMPARE(int(c.verdict), int(NumericVerdict::WithinRounding));
    QVERIFY(c.expected > 2.9e-6 && c.expected < 3.2e-6);
    QVERIFY(c.ratio < 1);
    QCOMPARE(verdictText(c), std::string("within rounding"));
  }

  void farBeyondTheSampleIsBeyondRounding() {
    auto c = check(f64({1, 2, 3}), f32({1, 2, 3}), f32({1, 2.01f, 3}));
    QCOMPARE(int(c.verdict), int(NumericVerdict::BeyondRounding));
    QVERIFY(c.ratio > 1000);
    QVERIFY(QString::fromStdString(verdictText(c)).startsWith("beyond rounding ("));
    QVERIFY(QString::fromStdString(verdictText(c)).endsWith("× the expected error)"));
  }

  void theUlpFloorExplainsOneRounding() {
    // Exact and sample agree; the compiled value is the neighbouring f32.
    const float one = 1.0f, next = std::nextafter(one, 2.0f);
    auto c = check(f64({1.0}), f32({one}), f32({next}));
    QCOMPARE(int(c.verdict), int(NumericVerdict::WithinRounding));
    QCOMPARE(c.ratio, 1.0);
  }

  void largeSignFlipsAreWrong() {
    auto c = check(f64({5, -5, 1}), f32({5, -5, 1}), f32({-5, -5, 1}));
    QCOMPARE(int(c.verdict), int(NumericVerdict::Wrong));
    QCOMPARE(c.signFlips, int64_t(1));
    QCOMPARE(verdictText(c), std::string("wrong (1 large value with the wrong sign)"));
  }

  void collapsedCosineIsWrong() {
    // No large sign flip (the values are small against the error), but the direction is lost.
    auto c = check(f64({1e-3, 0, 0}), f32({1e-3f, 0, 0}), f32({0, 1e-3f, 0}));
    QCOMPARE(int(c.verdict), int(NumericVerdict::Wrong));
    QVERIFY(QString::fromStdString(c.why).startsWith("cosine "));
  }

  void nanAgainstNanAgrees() {
    auto c = check(f64({kNaN, 1}), f32({NAN, 1}), f32({NAN, 1}));
    QCOMPARE(int(c.verdict), int(NumericVerdict::WithinRounding));
    QCOMPARE(c.nonFiniteMismatch, int64_t(0));
    auto bad = check(f64({1, 1}), f32({1, 1}), f32({NAN, 1}));
    QCOMPARE(int(bad.verdict), int(NumericVerdict::Wrong));
    QCOMPARE(verdictText(bad), std::string("wrong (1 NaN/Inf mismatch)"));
  }

  void infinities() {
    // The same infinity agrees; the other sign, or a finite value, does not.
    QCOMPARE(int(check(f64({INFINITY}), f32({kInf}), f32({kInf})).verdict),
             int(NumericVerdict::WithinRounding));
    QCOMPARE(int(check(f64({INFINITY}), f32({kInf}), f32({-kInf})).verdict),
             int(NumericVerdict::Wrong));
    QCOMPARE(int(check(f64({-INFINITY}), f32({-kInf}), f32({3})).verdict),
             int(NumericVerdict::Wrong));
    // f32 overflows where f64 does not: an infinity the f32 sample shares is rounding's.
    QCOMPARE(int(check(f64({1e39}), f32({kInf}), f32({kInf})).verdict),
             int(NumericVerdict::WithinRounding));
  }

  void zeroSizeTensorsAgree() {
    auto c = check(TensorData(DType::F64, {0, 3}), TensorData(DType::F32, {0, 3}),
                   TensorData(DType::F32, {0, 3}));
    QCOMPARE(int(c.verdict), int(NumericVerdict::WithinRounding));
    QCOMPARE(c.count, int64_t(0));
    QCOMPARE(c.ratio, 0.0);
  }

  void integersCompareExactly() {
    QCOMPARE(int(check(i64({1, 2}), i64({1, 2}), i64({1, 2})).verdict),
             int(NumericVerdict::WithinRounding));
    auto c = check(i64({1, 2}), i64({1, 2}), i64({1, 3}));
    QCOMPARE(int(c.verdict), int(NumericVerdict::Wrong));
    QCOMPARE(verdictText(c), std::string("wrong (1 integer differs)"));
  }

  void shapeMismatchIsWrong() {
    auto c = check(f64({1, 2}), f32({1, 2}), f32({1, 2, 3}));
    QCOMPARE(int(c.verdict), int(NumericVerdict::Wrong));
    QVERIFY(!c.shapeMatch);
  }

  void checkStats_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<double>("value");  // of {1, 2, 3, 4, 10}
    QTest::newRow("max") << "max" << 10.0;
    QTest::newRow("mean") << "mean" << 4.0;
    QTest::newRow("median") << "median" << 3.0;
    QTest::newRow("quantile:0.8") << "quantile:0.8" << 4.0;
    QTest::newRow("quantile:1") << "quantile:1" << 10.0;
    QTest::newRow("quantile:0") << "quantile:0" << 1.0;
  }

  void checkStats() {
    QFETCH(QString, text);
    QFETCH(double, value);
    auto stat = ErrorStat::parse(text.toStdString());
    QVERIFY2(stat.isOk(), stat.message().c_str());
    std::vector<double> v{10, 3, 1, 4, 2};
    QCOMPARE(stat->of(v), value);
    QCOMPARE(QString::fromStdString(stat->str()), text);
  }

  void badCheckStatIsASentence() {
    for (const char* bad : {"min", "quantile:", "quantile:2", "quantile:x"}) {
      auto stat = ErrorStat::parse(bad);
      QVERIFY(!stat.isOk());
      QVERIFY(QString::fromStdString(stat.message()).contains("max, mean, median, quantile:Q"));
    }
  }

  void medianForgivesOneOutlier() {
    CompareOptions median;
    median.stat = *ErrorStat::parse("median");
    auto exact = f64({1, 2, 3, 4, 5}), sample = f32({1, 2, 3, 4, 5});
    auto actual = f32({1, 2, 3, 4, 5.5f});
    QCOMPARE(int(check(exact, sample, actual).verdict), int(NumericVerdict::BeyondRounding));
    QCOMPARE(int(check(exact, sample, actual, median).verdict),
             int(NumericVerdict::WithinRounding));
  }

  void fixedToleranceStat() {
    // One element of four out of tolerance: out by max, within by median.
    auto ref = f32({1, 1, 1, 1}), got = f32({1, 1, 1, 2});
    QVERIFY(!compareTensors(ref, got, {1e-4, 1e-4}).withinTolerance());
    QVERIFY(compareTensors(ref, got, {1e-4, 1e-4}, *ErrorStat::parse("median")).withinTolerance());
    CompareOptions fixed = Tolerance{1e-3, 0};
    QVERIFY(!fixed.rounding());
    QCOMPARE(fixed.describe(), std::string("(atol 0.001, rtol 0)"));
    QCOMPARE(CompareOptions{}.describe(),
             std::string("(max error against the f64 reference, margin 8×)"));
  }

  void storeUndoesToLogical() {
    std::vector<float> v(1 * 3 * 2 * 2);
    for (size_t i = 0; i < v.size(); ++i) v[i] = float(i);
    TensorData plain = TensorData::fromVector(DType::F32, {1, 3, 2, 2}, v);
    Layout l = Layout::blockedNCHW(8, 3);
    auto stored = toStored(plain, l);
    QVERIFY(stored.isOk());
    QCOMPARE(stored->shape, (std::vector<int64_t>{1, 1, 2, 2, 8}));
    QCOMPARE(stored->data<float>()[1], 4.0f);  // channel 1 of pixel 0
    QCOMPARE(stored->data<float>()[3], 0.0f);  // a padding lane
    auto back = toLogical(*stored, l);
    QVERIFY(back.isOk());
    QVERIFY(back->bytes == plain.bytes);
    QVERIFY(!toStored(f32({1, 2}), l).isOk());
  }

  // The reference runs: widening makes f64 tensors; f32 summation moves a
  // long dot product away from the double-summed reference, within rounding.
  void eagerWidensAndSumsInF32() {
    Graph g;
    const int64_t K = 4096;
    ValueId a = g.addInput("a", TensorType::of(DType::F32, {1, K}));
    std::vector<float> w(static_cast<size_t>(K));
    for (int64_t i = 0; i < K; ++i) w[size_t(i)] = float(std::sin(double(i)) * 0.9 + 0.1);
    ValueId b = g.addConstant(
        "b", std::make_shared<TensorData>(TensorData::fromVector(DType::F32, {K, 1}, w)));
    NodeId mm = g.addNode("MatMul", {a, b}, {{"y", TensorType::of(DType::F32, {1, 1})}});
    ValueId y = g.node(mm).outputs[0];
    g.setOutputs({y});
    g.markAsOriginal();
    std::vector<float> x(static_cast<size_t>(K));
    for (int64_t i = 0; i < K; ++i) x[size_t(i)] = float(std::cos(double(i) * 0.7) + 0.3);
    std::map<std::string, TensorData> in{{"a", TensorData::fromVector(DType::F32, {1, K}, x)}};

    auto wide = runEager(g, in);
    EagerOptions exactOpts, narrowOpts;
    exactOpts.widenToF64 = true;
    narrowOpts.accumulation = Accumulation::Storage;
    auto exact = runEager(g, in, exactOpts);
    auto narrow = runEager(g, in, narrowOpts);
    QVERIFY(wide.isOk() && exact.isOk() && narrow.isOk());
    QVERIFY(exact->find(y)->dtype == DType::F64);
    QVERIFY(eagerAccumulation() == Accumulation::Wide);  // restored after the run
    const double e = exact->find(y)->at(0), s = narrow->find(y)->at(0), r = wide->find(y)->at(0);
    QVERIFY(std::fabs(r - e) <= ulpOf(e, DType::F32));  // double sums, one rounding
    QVERIFY(std::fabs(s - e) > std::fabs(r - e));       // f32 sums drift further
    // The double-summed reference is within the f32 sample's rounding of the exact one.
    auto c = check(*exact->find(y), *narrow->find(y), *wide->find(y));
    QCOMPARE(int(c.verdict), int(NumericVerdict::WithinRounding));
  }
};

QTEST_GUILESS_MAIN(RoundingTest)
#include "rounding_test.moc"
