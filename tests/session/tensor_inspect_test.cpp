// The tensor inspector's numbers (session/tensor_inspect.h) and
// Session::inspectTensor: stats and histograms with NaN, Inf, zero-size and
// integer tensors; 2-D slices of N-D tensors and their text form; error maps;
// and the tensors a compare keeps, an NCHWc-blocked compiled tensor shown in
// the logical layout, within and over the memory budget.
#include <QtTest>
#include <cmath>

#include "session/pipeline_choice.h"
#include "session/session.h"
#include "tests/support/test_paths.h"

using namespace fuselens;

namespace {

TensorData f32(std::vector<int64_t> shape, const std::vector<float>& v) {
  return TensorData::fromVector(DType::F32, std::move(shape), v);
}

// [2,3,4,5] holding its own flat index.
TensorData iota4d() {
  std::vector<float> v(120);
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(i);
  return f32({2, 3, 4, 5}, v);
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string twoConvs() {
  return fuselens::test::sourcePath("/tests/cli/data/two_convs/model.onnx");
}

}  // namespace

class TensorInspectTest : public QObject {
  Q_OBJECT
 private slots:
  void statsCountNanInfAndZeros() {
    const TensorData t = f32({2, 3}, {1.f, 0.f, NAN, INFINITY, -INFINITY, 3.f});
    const TensorStats s = tensorStats(t);
    QCOMPARE(s.count, int64_t(6));
    QCOMPARE(s.finite, int64_t(3));
    QCOMPARE(s.nan, int64_t(1));
    QCOMPARE(s.posInf, int64_t(1));
    QCOMPARE(s.negInf, int64_t(1));
    QCOMPARE(s.zeros, int64_t(1));
    QCOMPARE(s.min, 0.0);
    QCOMPARE(s.max, 3.0);
    QVERIFY(std::fabs(s.mean - 4.0 / 3) < 1e-12);
    QVERIFY(std::fabs(s.std - std::sqrt((1.0 / 9 + 16.0 / 9 + 25.0 / 9) / 3)) < 1e-12);
    const std::vector<std::string> lines = statsLines(s);
    QCOMPARE(lines.size(), size_t(4));
    QCOMPARE(lines[0], std::string("count 6 (3 finite)"));
    QCOMPARE(lines[1], std::string("min 0  max 3"));
    QCOMPARE(lines[3], std::string("NaN 1  +Inf 1  -Inf 1  zeros 1"));
  }

  void histogramIgnoresNonFinite() {
    const TensorData t = f32({6}, {0.f, 1.f, 2.f, 3.f, NAN, INFINITY});
    auto h = histogram(t, 3);
    QVERIFY(h.isOk());
    QCOMPARE(h->ignored, int64_t(2));
    QCOMPARE(h->counts, (std::vector<int64_t>{1, 1, 2}));  // the max lands in the last bin
    QCOMPARE(h->lo, 0.0);
    QCOMPARE(h->hi, 3.0);
    const auto lines = histogramLines(*h);
    QCOMPARE(lines.size(), size_t(4));
    QVERIFY(has(lines[0], "3 bins, 2 NaN/Inf ignored"));
    QVERIFY(has(lines[3], "[2, 3]"));
    QVERIFY(!histogram(t, 0).isOk());
    // Every element equal: one bin.
    auto flat = histogram(f32({3}, {2.f, 2.f, 2.f}), 10);
    QCOMPARE(flat->counts, (std::vector<int64_t>{3}));
  }

  void zeroSizeTensor() {
    const TensorData t(DType::F32, {0, 4});
    const TensorStats s = tensorStats(t);
    QCOMPARE(s.count, int64_t(0));
    QCOMPARE(statsLines(s)[1], std::string("min -  max -"));
    auto h = histogram(t, 8);
    QVERIFY(h.isOk());
    QVERIFY(h->counts.empty());
    QCOMPARE(histogramLines(*h).size(), size_t(1));
    auto slice = slice2D(t, defaultSlice(2));
    QVERIFY(slice.isOk());
    QCOMPARE(slice->shape, (std::vector<int64_t>{0, 4}));
  }

  void integerTensors_data() {
    QTest::addColumn<int>("dtype");
    QTest::newRow("i32") << int(DType::I32);
    QTest::newRow("i64") << int(DType::I64);
    QTest::newRow("u8") << int(DType::U8);
  }
  void integerTensors() {
    QFETCH(int, dtype);
    TensorData t(DType(dtype), {5});
    for (int64_t i = 0; i < 5; ++i) {
      const int64_t v = i * 10;  // 0 10 20 30 40
      switch (DType(dtype)) {
        case DType::I32:
          t.data<int32_t>()[i] = int32_t(v);
          break;
        case DType::I64:
          t.data<int64_t>()[i] = v;
          break;
        default:
          t.data<uint8_t>()[i] = uint8_t(v);
          break;
      }
    }
    const TensorStats s = tensorStats(t);
    QCOMPARE(s.finite, int64_t(5));
    QCOMPARE(s.zeros, int64_t(1));
    QCOMPARE(s.max, 40.0);
    QCOMPARE(s.mean, 20.0);
    auto h = histogram(t, 4);
    QCOMPARE(h->counts, (std::vector<int64_t>{1, 1, 1, 2}));
    auto err = absErrorMap(t, t);
    QVERIFY(err.isOk());
    QCOMPARE(tensorStats(*err).max, 0.0);
  }

  void slicesOfFourD() {
    const TensorData t = iota4d();
    auto spec = parseSlice("1,:,2,:", t.shape);
    QVERIFY2(spec.isOk(), spec.isOk() ? "" : spec.message().c_str());
    QCOMPARE(spec->rowAxis, 1);
    QCOMPARE(spec->colAxis, 3);
    auto s = slice2D(t, *spec);
    QVERIFY(s.isOk());
    QCOMPARE(s->shape, (std::vector<int64_t>{3, 5}));
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t c = 0; c < 5; ++c)
        QCOMPARE(s->at(r * 5 + c), double(((1 * 3 + r) * 4 + 2) * 5 + c));
    QCOMPARE(sliceText(*spec, 4), std::string("1,:,2,:"));
    QCOMPARE(sliceText(defaultSlice(4), 4), std::string("0,0,:,:"));
    // The lazy path the GUI table takes reads the same element.
    QCOMPARE(sliceElement(*spec, t.shape, 2, 4), int64_t(((1 * 3 + 2) * 4 + 2) * 5 + 4));
  }

  void badSlicesAreSentences_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("why");
    QTest::newRow("too few entries") << "1,:,:"
                                     << "does not fit a tensor of shape [2,3,4,5]";
    QTest::newRow("index out of range") << "2,:,0,:"
                                        << "out of axis 0's range 0..1";
    QTest::newRow("three colons") << ":,:,:,0"
                                  << "more than two ':'";
    QTest::newRow("one colon") << "0,0,0,:"
                               << "shows 2 distinct axes";
    QTest::newRow("not a number") << "a,:,0,:"
                                  << "neither a number nor ':'";
  }
  void badSlicesAreSentences() {
    QFETCH(QString, text);
    QFETCH(QString, why);
    auto s = parseSlice(text.toStdString(), iota4d().shape);
    QVERIFY(!s.isOk());
    QVERIFY2(has(s.message(), why.toStdString()), s.message().c_str());
  }

  void oneDIsOneColumn() {
    const TensorData t = f32({4}, {1, 2, 3, 4});
    auto spec = parseSlice(":", t.shape);
    QVERIFY(spec.isOk());
    auto s = slice2D(t, *spec);
    QCOMPARE(s->shape, (std::vector<int64_t>{4, 1}));
    QCOMPARE(s->at(3), 4.0);
  }

  void errorMaps() {
    const TensorData a = f32({3}, {1.f, 2.f, 3.f}), b = f32({3}, {1.f, 2.5f, 2.f});
    auto err = absErrorMap(a, b);
    QVERIFY(err.isOk());
    QCOMPARE(err->dtype, DType::F64);
    QCOMPARE(err->at(1), 0.5);
    QCOMPARE(err->at(2), 1.0);
    const TensorData exact = a, sample = f32({3}, {1.f, 2.25f, 3.f});
    auto expected = expectedErrorMap(exact, sample, nullptr, DType::F32);
    QVERIFY(expected.isOk());
    QCOMPARE(expected->at(1), 0.25);
    QVERIFY(expected->at(0) > 0);  // one ulp, never 0
    auto ratio = errorRatioMap(exact, b, *expected);
    QCOMPARE(ratio->at(0), 0.0);
    QCOMPARE(ratio->at(1), 2.0);
    auto mismatch = absErrorMap(a, f32({1, 3}, {1, 2, 3}));
    QVERIFY(!mismatch.isOk());
    QVERIFY2(has(mismatch.message(), "differ in shape"), mismatch.message().c_str());
  }

  void sessionKeepsTheCompareTensors() {
    Session s;
    QVERIFY(s.open(twoConvs()).isOk());
    QVERIFY(s.optimize(defaultPipelineText()).isOk());
    auto before = s.inspectTensor("r1");
    QVERIFY(!before.isOk());
    QVERIFY2(has(before.message(), "no compare has run yet"), before.message().c_str());
    auto inputs = *s.randomInputs(3);
    QVERIFY(s.compare(inputs, CompareOptions{}).isOk());
    QVERIFY(s.keptTensorsNote().empty());

    // r1 sits between the two convolutions, stored NCHW<b>c by the compiled
    // run, b the host's vector width.
    auto t = s.inspectTensor("r1");
    QVERIFY2(t.isOk(), t.isOk() ? "" : t.message().c_str());
    const std::string blocked = "NCHW" + std::to_string(hostLayoutBlock()) + "c";
    QCOMPARE(t->layout, blocked);
    QVERIFY(t->eager && t->exact && t->compiled && t->expected);
    QCOMPARE(t->compiled->shape, t->eager->shape);  // logical, not [N,Cb,H,W,8]
    QVERIFY(has(headerLine(*t), "compiled " + blocked + " shown as NCHW"));
    auto err = sideTensor(*t, TensorSide::Error);
    QVERIFY(err.isOk());
    const TensorStats es = tensorStats(**err);
    QCOMPARE(es.count, t->eager->numel());
    QVERIFY2(es.max < 1e-3, std::to_string(es.max).c_str());  // unblocked right, or far off
    auto ratio = sideTensor(*t, TensorSide::Ratio);
    QVERIFY(ratio.isOk());
    // Element by element: finite, and 0 exactly where compiled equals exact.
    const TensorStats rs = tensorStats(**ratio);
    QCOMPARE(rs.finite, rs.count);
    QVERIFY(rs.min >= 0);
    for (int64_t i = 0; i < rs.count; ++i)
      QCOMPARE((*ratio)->at(i) == 0, t->compiled->at(i) == t->exact->at(i));

    // c1 is inside the Conv+Relu kernel: eager only.
    auto inner = s.inspectTensor("c1");
    QVERIFY(inner.isOk());
    QVERIFY(inner->eager && !inner->compiled);
    auto noError = sideTensor(*inner, TensorSide::Error);
    QVERIFY(!noError.isOk());
    QVERIFY2(has(noError.message(), "not a kernel boundary"), noError.message().c_str());

    auto bad = s.inspectTensor("nope");
    QVERIFY(!bad.isOk());
    QVERIFY2(has(bad.message(), "no tensor named 'nope'"), bad.message().c_str());
  }

  void isolatedCompareRefreshesTheKeptTensors() {
    Session s;
    QVERIFY(s.open(twoConvs()).isOk());
    QVERIFY(s.optimize(defaultPipelineText()).isOk());
    QVERIFY(s.compare(*s.randomInputs(3), CompareOptions{}).isOk());
    const auto first = s.inspectTensor("r1");
    QVERIFY(first.isOk() && first->compiled);
    // Other inputs, isolated: the inspector must show this run, not the last plain one.
    QVERIFY(s.compareIsolated(*s.randomInputs(4), CompareOptions{}).isOk());
    const auto second = s.inspectTensor("r1");
    QVERIFY2(second.isOk(), second.isOk() ? "" : second.message().c_str());
    QVERIFY(second->eager && second->compiled);
    QVERIFY(tensorStats(*absErrorMap(*first->eager, *second->eager)).max > 0);
    QVERIFY(tensorStats(*absErrorMap(*second->eager, *second->compiled)).max < 1e-3);
  }

  void budgetLimitsWhatIsKept() {
    Session s;
    QVERIFY(s.open(twoConvs()).isOk());
    QVERIFY(s.optimize(defaultPipelineText()).isOk());
    auto inputs = *s.randomInputs(3);
    s.tensorBudgetBytes = 1;
    QVERIFY(s.compare(inputs, CompareOptions{}).isOk());
    QVERIFY2(has(s.keptTensorsNote(), "none are kept"), s.keptTensorsNote().c_str());
    auto t = s.inspectTensor("r1");
    QVERIFY(!t.isOk());
    QVERIFY2(has(t.message(), "over the inspector's budget"), t.message().c_str());

    // Room for the boundaries only: the kernel's inner tensor is dropped.
    s.tensorBudgetBytes = 140000;  // all take 178 KB, the boundaries 94 KB
    QVERIFY(s.compare(inputs, CompareOptions{}).isOk());
    QVERIFY2(has(s.keptTensorsNote(), "only kernel-boundary tensors"), s.keptTensorsNote().c_str());
    QVERIFY(s.inspectTensor("r1").isOk());
    QVERIFY(!s.inspectTensor("c1").isOk());
  }
};

QTEST_APPLESS_MAIN(TensorInspectTest)
#include "tensor_inspect_test.moc"
