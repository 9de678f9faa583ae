// runSweep on the transformer-style fixture with a symbolic sequence length
// (tests/cli/data/dyn_transformer: attention with Softmax over the keys,
// LayerNorm over hidden on every row, a mean over the sequence): per shape
// every length matches eager; with buckets it compiles once per bucket and
// every length in range still matches eager on its unpadded shape, so the
// padded keys are out of the softmax and the padded rows out of the mean.
// Also the sweep and bucket specs, and the compile cache refusing a corrupt
// entry with a sentence.
#include "session/shape_sweep.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include "core/ir/printer.h"
#include "session/compile_cache.h"
#include "session/session.h"
#include "tests/support/test_paths.h"

using namespace fuselens;

namespace {

// The fixture with its `seq` still symbolic, as `run --sweep` hands it over.
Graph transformer() {
  Session s;
  Status st = s.open(test::sourcePath("/tests/cli/data/dyn_transformer/model.onnx"));
  if (!st) qFatal("%s", st.message().c_str());
  return s.original();
}

SweepRequest request(std::vector<int64_t> values, std::vector<int64_t> buckets = {}) {
  SweepRequest r;
  r.sweep = {"seq", std::move(values)};
  r.buckets = std::move(buckets);
  r.pipeline = "const-fold,cse,simplify,dce,fuse-patterns,fuse-ops{max-ops=8}";
  r.checkEager = true;
  r.padCheck = !r.buckets.empty();
  return r;
}

}  // namespace

class ShapeSweepTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QVERIFY(cache_.isValid());
    qputenv("XDG_CACHE_HOME", cache_.path().toUtf8());
  }

  void sweepSpecs_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("expected");  // values joined, or the error's words
    QTest::newRow("range") << "seq=1:300:37"
                           << "1 38 75 112 149 186 223 260 297";
    QTest::newRow("list") << "seq=1,2,7,64,300"
                          << "1 2 7 64 300";
    QTest::newRow("backwards") << "seq=9:2:1"
                               << "stops before it starts";
    QTest::newRow("zero") << "seq=0,4"
                          << "not a positive integer";
    QTest::newRow("no name") << "=1:4:1"
                             << "expected NAME=";
  }
  void sweepSpecs() {
    QFETCH(QString, text);
    QFETCH(QString, expected);
    auto spec = parseSweepSpec(text.toStdString());
    if (!spec) {
      QVERIFY2(QString::fromStdString(spec.message()).contains(expected), spec.message().c_str());
      return;
    }
    QStringList values;
    for (int64_t v : spec->values) values << QString::number(v);
    QCOMPARE(values.join(' '), expected);
  }

  void bucketSpecs() {
    QCOMPARE(*parseBuckets("seq=pow2", "seq", 100),
             (std::vector<int64_t>{1, 2, 4, 8, 16, 32, 64, 128}));
    QCOMPARE(*parseBuckets("seq=step:32", "seq", 64), (std::vector<int64_t>{32, 64}));
    QCOMPARE(*parseBuckets("seq=64,32,64", "seq", 10), (std::vector<int64_t>{32, 64}));
    auto other = parseBuckets("width=8", "seq", 10);
    QVERIFY(!other);
    QVERIFY2(other.message().find("swept dim 'seq'") != std::string::npos, other.message().c_str());
  }

  void perShapeMatchesEagerAtEveryLength() {
    auto rep = runSweep(transformer(), "dyn_transformer", request({1, 2, 7}));
    QVERIFY2(rep.isOk(), rep.message().c_str());
    QCOMPARE(rep->compiles, size_t(3));
    QVERIFY2(rep->allMatch.value_or(false), rep->summary().c_str());
    QCOMPARE(rep->paddingWaste, 0.0);
  }

  void bucketsCompileOncePerBucketAndMaskThePadding() {
    const std::vector<int64_t> lengths = {1, 2, 3, 7, 8, 9, 12, 16};
    auto rep = runSweep(transformer(), "dyn_transformer", request(lengths, {8, 16}));
    QVERIFY2(rep.isOk(), rep.message().c_str());
    QCOMPARE(rep->compiles, size_t(2));
    QCOMPARE(rep->runs.size(), lengths.size());
    for (const SweepRun& r : rep->runs) {
      QCOMPARE(r.bucket, r.value <= 8 ? int64_t(8) : int64_t(16));
      QVERIFY2(
          r.match.value_or(false),
          qPrintable(QString("seq=%1: %2").arg(r.value).arg(QString::fromStdString(r.verdict))));
      QVERIFY2(r.padMatch.value_or(false), r.padVerdict.c_str());
      QCOMPARE(r.paddedElements == 0, r.value == r.bucket);
    }
    QVERIFY(rep->paddingWaste > 0 && rep->paddingWaste < 1);
  }

  // Without the masks the padded keys would take probability and the padded
  // rows would enter the mean: the same sweep with an unmasked graph differs.
  void withoutMasksThePaddingShows() {
    SweepRequest r = request({3}, {8});
    r.padCheck = false;
    Graph g = transformer();
    auto rep = runSweep(g, "dyn_transformer", r);
    QVERIFY2(rep.isOk() && rep->allMatch.value_or(false), rep.message().c_str());
    // Padded eagerly by hand, without pad-mask: the run is no longer eager's.
    Session padded;
    QVERIFY(padded.open(Graph(g), "unmasked").isOk());
    QVERIFY(padded.bindDims({{"seq", 8}}).isOk());
    Session exact;
    QVERIFY(exact.open(Graph(g), "exact").isOk());
    QVERIFY(exact.bindDims({{"seq", 3}}).isOk());
    auto in = exact.randomInputs(0);
    QVERIFY(in.isOk());
    TensorData x(DType::F32, {1, 8, 16});
    std::memcpy(x.bytes.data(), in->at("x").bytes.data(), in->at("x").bytes.size());
    auto a = padded.run(Engine::Eager, {{"x", x}});
    auto b = exact.run(Engine::Eager, *in);
    QVERIFY(a.isOk() && b.isOk());
    QVERIFY(std::abs(a->at("y").data<float>()[0] - b->at("y").data<float>()[0]) > 1e-4);
  }

  // A convolution striding along the padded dim would read padding into
  // valid outputs: buckets are refused with the node and the reason.
  void stridedConvAlongTheDimIsRefused() {
    auto g = parseGraph(R"(graph @main(%x: f32[1,1,1,width]) -> (f32[1,1,1]) {
  %w = Constant : f32[1,1,1,3] dense<[1.0, 1.0, 1.0]>
  %axes = Constant : i64[1] dense<[3]>
  %y = Conv(%x, %w) {kernel_shape=[1,3], strides=[1,2], pads=[0,1,0,1]} : f32[1,1,1,?] loc("down")
  %s = ReduceSum(%y, %axes) {keepdims=0} : f32[1,1,1]
  return %s
})");
    QVERIFY2(g.isOk(), g.message().c_str());
    SweepRequest r = request({5}, {8});
    r.sweep.dim = "width";
    auto rep = runSweep(*g, "strided", r);
    QVERIFY(!rep.isOk());
    QVERIFY2(rep.message().find("Conv strides or pads so its output is not as long as its input "
                                "along the padded dim 'width'") != std::string::npos &&
                 rep.message().find("node 'down'") != std::string::npos,
             rep.message().c_str());
    r.buckets.clear();  // per shape it compiles and matches eager
    r.padCheck = false;
    auto perShape = runSweep(*g, "strided", r);
    QVERIFY2(perShape.isOk() && perShape->allMatch.value_or(false), perShape.message().c_str());
  }

  void corruptCacheEntryIsRefusedWithASentence() {
    auto first = runSweep(transformer(), "dyn_transformer", request({4}));
    QVERIFY2(first.isOk(), first.message().c_str());
    auto again = runSweep(transformer(), "dyn_transformer", request({4}));
    QVERIFY2(again.isOk(), again.message().c_str());
    QCOMPARE(again->cacheHits, size_t(1));
    QDirIterator it(QString::fromStdString(again->cacheDir), {"*.json"}, QDir::Files);
    QVERIFY(it.hasNext());
    while (it.hasNext()) {
      QFile f(it.next());
      QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
      f.write("fuselens-compile-cache 1 not a checksum\n{}");
    }
    auto third = runSweep(transformer(), "dyn_transformer", request({4}));
    QVERIFY2(third.isOk(), third.message().c_str());
    QCOMPARE(third->cacheHits, size_t(0));
    QCOMPARE(third->compiles, size_t(1));
    QCOMPARE(third->notes.size(), size_t(1));
    QVERIFY2(third->notes[0].find("is corrupt (its header is not a compile-cache header): "
                                  "refused, removed, and the module compiled again") !=
                 std::string::npos,
             third->notes[0].c_str());
    auto fourth = runSweep(transformer(), "dyn_transformer", request({4}));
    QVERIFY2(fourth.isOk() && fourth->cacheHits == 1, fourth.message().c_str());
  }

 private:
  QTemporaryDir cache_;
};

QTEST_GUILESS_MAIN(ShapeSweepTest)
#include "shape_sweep_test.moc"
