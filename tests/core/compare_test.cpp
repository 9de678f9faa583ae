// Tensor metrics (core/compare/compare.h) on hand-made tensors: max abs/rel,
// allclose counts, NaN mismatches, shape mismatch, cosine, and the distance in
// units in the last place in each float width.
#include "core/compare/compare.h"

#include <QtTest>
#include <cmath>

using namespace fuselens;

namespace {
TensorData f32(std::vector<float> v) {
  return TensorData::fromVector(DType::F32, {int64_t(v.size())}, v);
}
TensorData bits16(DType t, std::vector<uint16_t> v) {
  return TensorData::fromVector(t, {int64_t(v.size())}, v);
}
}  // namespace

class CompareTest : public QObject {
  Q_OBJECT
 private slots:
  void identicalIsZero() {
    TensorMetrics m = compareTensors(f32({1, -2, 0.5f}), f32({1, -2, 0.5f}), {0, 0});
    QVERIFY(m.withinTolerance());
    QCOMPARE(m.maxAbs, 0.0);
    QCOMPARE(m.maxUlp, int64_t(0));
    QCOMPARE(m.cosine, 1.0);
  }

  void ulpInF32() {
    const float one = 1.0f, next = std::nextafter(1.0f, 2.0f),
                next3 = std::nextafter(std::nextafter(next, 2.0f), 2.0f);
    QCOMPARE(compareTensors(f32({one}), f32({next}), {}).maxUlp, int64_t(1));
    QCOMPARE(compareTensors(f32({one}), f32({next3}), {}).maxUlp, int64_t(3));
    QCOMPARE(compareTensors(f32({0.0f}), f32({-0.0f}), {}).maxUlp, int64_t(0));
    // Across zero: the smallest subnormals either side are 2 steps apart.
    const float tiny = std::nextafter(0.0f, 1.0f);
    QCOMPARE(compareTensors(f32({tiny}), f32({-tiny}), {}).maxUlp, int64_t(2));
  }

  void ulpInHalfWidths() {
    // f16 1.0 = 0x3c00; one step up 0x3c01. bf16 1.0 = 0x3f80.
    QCOMPARE(
        compareTensors(bits16(DType::F16, {0x3c00}), bits16(DType::F16, {0x3c01}), {1, 1}).maxUlp,
        int64_t(1));
    QCOMPARE(
        compareTensors(bits16(DType::BF16, {0x3f80}), bits16(DType::BF16, {0x3f84}), {1, 1}).maxUlp,
        int64_t(4));
  }

  void ulpOfIntegersIsTheDifference() {
    auto i32 = [](std::vector<int32_t> v) {
      return TensorData::fromVector(DType::I32, {int64_t(v.size())}, v);
    };
    TensorMetrics m = compareTensors(i32({5, -7}), i32({5, -2}), {0, 0});
    QCOMPARE(m.maxUlp, int64_t(5));
    QCOMPARE(m.outOfTolerance, int64_t(1));
  }

  void toleranceCountsAndWorstIndex() {
    TensorMetrics m = compareTensors(f32({1, 100, 3}), f32({1.5f, 100.5f, 3}), {0.1, 0.01});
    QCOMPARE(m.outOfTolerance, int64_t(1));  // 0.5 > 0.1 + 0.01; 0.5 <= 0.1 + 1.0
    QCOMPARE(m.maxAbs, 0.5);
    QCOMPARE(m.worstIndex, int64_t(0));
    QVERIFY(!m.withinTolerance());
  }

  void nanOnOneSideMismatches() {
    const float nan = std::nanf("");
    TensorMetrics m = compareTensors(f32({nan, 1}), f32({nan, nan}), {});
    QCOMPARE(m.nanMismatch, int64_t(1));
    QVERIFY(!m.withinTolerance());
  }

  void shapeMismatch() {
    TensorMetrics m = compareTensors(f32({1, 2}), f32({1, 2, 3}), {});
    QVERIFY(!m.shapeMatch);
    QVERIFY(!m.withinTolerance());
  }
};

QTEST_GUILESS_MAIN(CompareTest)
#include "compare_test.moc"
