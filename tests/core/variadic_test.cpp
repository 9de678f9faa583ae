// Variadic ops at any input count the spec allows: a generated Sum of 50,000
// inputs and a Concat of 5,000 (Max, Min and Mean of 2,000) import, verify,
// print and parse back as IR text, and run through the eager interpreter with
// the result a plain loop computes. Each stage is linear in the input count;
// the test's time limit catches a quadratic one (50,000^2 steps take minutes).
#include <QElapsedTimer>
#include <QtTest>
#include <cmath>
#include <random>

#include "core/eager/interpreter.h"
#include "core/ir/printer.h"
#include "core/ir/verifier.h"
#include "core/onnx/import.h"
#include "tests/support/onnx_builder.h"

using namespace fuselens;
using namespace fuselens::test;

namespace {

constexpr int64_t kRows = 2, kCols = 3;

std::vector<std::string> inputNames(int count) {
  std::vector<std::string> names;
  for (int i = 0; i < count; ++i) names.push_back("x" + std::to_string(i));
  return names;
}

// Input i holds i + 0.25 * element index (small integers and quarters: every
// sum below is exact in f32 however it is ordered).
std::map<std::string, TensorData> inputsFor(int count) {
  std::map<std::string, TensorData> in;
  for (int i = 0; i < count; ++i) {
    std::vector<float> v;
    for (int64_t e = 0; e < kRows * kCols; ++e) v.push_back(float(i % 97) + 0.25f * float(e));
    in.emplace("x" + std::to_string(i), TensorData::fromVector(DType::F32, {kRows, kCols}, v));
  }
  return in;
}

}  // namespace

class VariadicTest : public QObject {
  Q_OBJECT
 private slots:
  void wideOpsImportVerifyPrintParseAndRun_data() {
    QTest::addColumn<QString>("op");
    QTest::addColumn<int>("count");
    QTest::newRow("Sum 50000") << "Sum" << 50000;
    QTest::newRow("Concat 5000") << "Concat" << 5000;
    QTest::newRow("Max 2000") << "Max" << 2000;
    QTest::newRow("Min 2000") << "Min" << 2000;
    QTest::newRow("Mean 2000") << "Mean" << 2000;
  }
  void wideOpsImportVerifyPrintParseAndRun() {
    QFETCH(QString, op);
    QFETCH(int, count);
    std::vector<onnx::AttributeProto> attrs;
    if (op == "Concat") attrs.push_back(intAttr("axis", 0));
    auto proto = oneNodeModel(op.toStdString(), inputNames(count), {kRows, kCols}, attrs);
    QElapsedTimer timer;
    timer.start();
    auto m = importOnnxBytes(bytesOf(proto), "wide.onnx", ".");
    QVERIFY2(m.isOk(), m.message().c_str());
    Status v = verifyGraph(m->graph);
    QVERIFY2(v.isOk(), v.message().c_str());
    PrintOptions all;
    all.elideConstantsOver = -1;
    std::string text = printGraph(m->graph, all);
    auto parsed = parseGraph(text);
    QVERIFY2(parsed.isOk(), parsed.message().c_str());
    QCOMPARE(printGraph(*parsed, all), text);
    auto inputs = inputsFor(count);
    auto r = runEager(m->graph, inputs);
    QVERIFY2(r.isOk(), r.message().c_str());
    qInfo("%s of %d inputs: import, verify, print, parse and eager run in %lld ms", qPrintable(op),
          count, (long long)timer.elapsed());
    QVERIFY2(timer.elapsed() < 15000, "a stage is slower than linear in the input count");

    const TensorData& out = *r->find(m->graph.outputs()[0]);
    if (op == "Concat") {
      QCOMPARE(out.shape, (std::vector<int64_t>{kRows * count, kCols}));
      for (int i = 0; i < count; i += 997)
        QCOMPARE(out.at(i * kRows * kCols + 4), inputs.at("x" + std::to_string(i)).at(4));
      return;
    }
    QCOMPARE(out.shape, (std::vector<int64_t>{kRows, kCols}));
    for (int64_t e = 0; e < kRows * kCols; ++e) {
      double expect = op == "Max" ? -INFINITY : op == "Min" ? INFINITY : 0;
      for (const auto& [name, t] : inputs) {
        double x = t.at(e);
        expect = op == "Max" ? std::max(expect, x) : op == "Min" ? std::min(expect, x) : expect + x;
      }
      if (op == "Mean") expect /= count;
      QVERIFY2(
          std::abs(out.at(e) - expect) <= 1e-6 * std::abs(expect),
          qPrintable(QString("element %1: %2, expected %3").arg(e).arg(out.at(e)).arg(expect)));
    }
  }
};

QTEST_APPLESS_MAIN(VariadicTest)
#include "variadic_test.moc"
