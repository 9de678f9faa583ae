// The NCHW<b>c ops of core/ops/layout.cpp against plain formulas written here
// (blocking by index arithmetic, a direct NCHW convolution), the layout
// record on values (text form, verifier) and toLogical, the inverse transform
// compare uses.
#include <QtTest>
#include <random>

#include "core/compare/compare.h"
#include "core/ir/printer.h"
#include "core/ir/verifier.h"
#include "core/ops/registry.h"

using namespace fuselens;

namespace {

using Shape = std::vector<int64_t>;

TensorData random(const Shape& s, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  TensorData t(DType::F32, s);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = d(rng);
  return t;
}

Node node(const std::string& op, Attributes a) {
  Node n;
  n.op = op;
  n.domain = kFuseLensDomain;
  n.name = "n";
  n.attrs = std::move(a);
  return n;
}

Expected<TensorData> run(Node n, std::vector<const TensorData*> in) {
  n.inputs.clear();  // the kernels count the node's inputs
  for (size_t i = 0; i < in.size(); ++i) n.inputs.push_back(ValueId(int32_t(i)));
  const OpInfo* info = OpRegistry::instance().find(n.domain, n.op);
  if (!info) return Status::error("no op " + n.op);
  auto out = info->eager(n, in);
  if (!out) return out.status();
  return (*out)[0];
}

// x[n][c][h][w] -> [n][c/b][h][w][c%b] by the definition, zero padding.
TensorData blockRef(const TensorData& x, int64_t b) {
  int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3], CB = (C + b - 1) / b;
  TensorData o(DType::F32, {N, CB, H, W, b});
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < W; ++w)
          o.data<float>()[(((n * CB + c / b) * H + h) * W + w) * b + c % b] =
              x.data<float>()[((n * C + c) * H + h) * W + w];
  return o;
}

// Direct NCHW conv, group 1, explicit pads [t, l, b, r].
TensorData convRef(const TensorData& x, const TensorData& w, const Shape& s, const Shape& p,
                   const Shape& d) {
  int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  int64_t M = w.shape[0], KH = w.shape[2], KW = w.shape[3];
  int64_t OH = (H + p[0] + p[2] - (KH - 1) * d[0] - 1) / s[0] + 1;
  int64_t OW = (W + p[1] + p[3] - (KW - 1) * d[1] - 1) / s[1] + 1;
  TensorData o(DType::F32, {N, M, OH, OW});
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = 0;
          for (int64_t c = 0; c < C; ++c)
            for (int64_t kh = 0; kh < KH; ++kh)
              for (int64_t kw = 0; kw < KW; ++kw) {
                int64_t ih = oh * s[0] - p[0] + kh * d[0], iw = ow * s[1] - p[1] + kw * d[1];
                if (ih >= 0 && ih < H && iw >= 0 && iw < W)
                  acc += double(x.data<float>()[((n * C + c) * H + ih) * W + iw]) *
                         w.data<float>()[((m * C + c) * KH + kh) * KW + kw];
              }
          o.data<float>()[((n * M + m) * OH + oh) * OW + ow] = float(acc);
        }
  return o;
}

// OIHW -> [Ob, I, KH, KW, b], output channels zero-padded.
TensorData blockWeights(const TensorData& w, int64_t b) {
  int64_t M = w.shape[0], I = w.shape[1], K = w.shape[2] * w.shape[3], OB = (M + b - 1) / b;
  TensorData o(DType::F32, {OB, I, w.shape[2], w.shape[3], b});
  for (int64_t m = 0; m < M; ++m)
    for (int64_t i = 0; i < I; ++i)
      for (int64_t k = 0; k < K; ++k)
        o.data<float>()[(((m / b) * I + i) * K + k) * b + m % b] =
            w.data<float>()[(m * I + i) * K + k];
  return o;
}

double maxDiff(const TensorData& a, const TensorData& b) {
  if (a.shape != b.shape) return INFINITY;
  double m = 0;
  for (int64_t i = 0; i < a.numel(); ++i) m = std::max(m, std::fabs(a.at(i) - b.at(i)));
  return m;
}

}  // namespace

class LayoutOpsTest : public QObject {
  Q_OBJECT

 private slots:
  void transforms_data() {
    QTest::addColumn<int>("block");
    QTest::addColumn<int>("channels");
    QTest::newRow("b8 C3 (padded)") << 8 << 3;
    QTest::newRow("b8 C16") << 8 << 16;
    QTest::newRow("b16 C20 (padded)") << 16 << 20;
  }
  void transforms() {
    QFETCH(int, block);
    QFETCH(int, channels);
    TensorData x = random({2, channels, 3, 5}, 1);
    Attributes a;
    a.set("block", int64_t(block));
    auto blocked = run(node("ToNCHWc", a), {&x});
    QVERIFY2(blocked, blocked.message().c_str());
    QCOMPARE(maxDiff(*blocked, blockRef(x, block)), 0.0);  // padding lanes are 0 in both
    a.set("channels", int64_t(channels));
    auto back = run(node("FromNCHWc", a), {&*blocked});
    QVERIFY2(back, back.message().c_str());
    QCOMPARE(maxDiff(*back, x), 0.0);
    auto logical = toLogical(*blocked, Layout::blockedNCHW(block, channels));
    QVERIFY2(logical, logical.message().c_str());
    QCOMPARE(maxDiff(*logical, x), 0.0);
    QVERIFY(compareTensors(x, {}, *blocked, Layout::blockedNCHW(block, channels), {0, 0})
                .withinTolerance());
  }

  void convMatchesDirectFormula_data() {
    QTest::addColumn<int>("block");
    QTest::addColumn<Shape>("x");
    QTest::addColumn<Shape>("w");
    QTest::addColumn<Shape>("strides");
    QTest::addColumn<Shape>("pads");
    QTest::addColumn<Shape>("dilations");
    QTest::newRow("b8 3x3 pad 1") << 8 << Shape{1, 8, 6, 6} << Shape{8, 8, 3, 3} << Shape{1, 1}
                                  << Shape{1, 1, 1, 1} << Shape{1, 1};
    QTest::newRow("b8 C3 M10 stride 2 asym pads")
        << 8 << Shape{2, 3, 7, 9} << Shape{10, 3, 3, 2} << Shape{2, 2} << Shape{1, 0, 2, 1}
        << Shape{1, 1};
    QTest::newRow("b16 dilation 2") << 16 << Shape{1, 5, 9, 8} << Shape{17, 5, 2, 3} << Shape{1, 2}
                                    << Shape{0, 1, 0, 1} << Shape{2, 1};
  }
  void convMatchesDirectFormula() {
    QFETCH(int, block);
    QFETCH(Shape, x);
    QFETCH(Shape, w);
    QFETCH(Shape, strides);
    QFETCH(Shape, pads);
    QFETCH(Shape, dilations);
    TensorData xt = random(x, 2), wt = random(w, 3), bias = random({w[0]}, 4);
    TensorData want = convRef(xt, wt, strides, pads, dilations);
    for (int64_t m = 0; m < w[0]; ++m)  // bias, per output channel
      for (int64_t i = 0; i < want.numel() / (want.shape[0] * w[0]); ++i)
        for (int64_t n = 0; n < want.shape[0]; ++n)
          want.data<float>()[(n * w[0] + m) * (want.numel() / (want.shape[0] * w[0])) + i] +=
              bias.data<float>()[m];
    int64_t ob = (w[0] + block - 1) / block;
    TensorData bb(DType::F32, {ob, block});
    std::copy(bias.data<float>(), bias.data<float>() + w[0], bb.data<float>());
    TensorData xb = blockRef(xt, block), wb = blockWeights(wt, block);
    Attributes a;
    a.set("strides", strides);
    a.set("pads", pads);
    a.set("dilations", dilations);
    auto y = run(node("ConvNCHWc", a), {&xb, &wb, &bb});
    QVERIFY2(y, y.message().c_str());
    auto plain = toLogical(*y, Layout::blockedNCHW(block, w[0]));
    QVERIFY2(plain, plain.message().c_str());
    QVERIFY2(maxDiff(*plain, want) < 1e-5, qPrintable(QString::number(maxDiff(*plain, want))));
  }

  void blockedPoolIsThePlainPool() {
    TensorData x = random({1, 10, 7, 7}, 5);
    Attributes a;
    a.set("kernel_shape", Shape{3, 3});
    a.set("strides", Shape{2, 2});
    a.set("pads", Shape{1, 1, 1, 1});
    TensorData xb = blockRef(x, 8);
    for (const char* op : {"MaxPool", "AveragePool"}) {
      auto y = run(node(std::string(op) + "NCHWc", a), {&xb});
      QVERIFY2(y, y.message().c_str());
      Node plain = node(op, a);
      plain.domain.clear();
      auto want = run(plain, {&x});
      QVERIFY2(want, want.message().c_str());
      QCOMPARE(maxDiff(*toLogical(*y, Layout::blockedNCHW(8, 10)), *want), 0.0);
    }
  }

  void badInputsAreErrors() {
    TensorData x = random({1, 3, 2, 2}, 6);
    Attributes a;
    a.set("block", int64_t(5));
    auto bad = run(node("ToNCHWc", a), {&x});
    QVERIFY(!bad);
    QVERIFY2(bad.message().find("block must be 8 or 16") != std::string::npos,
             bad.message().c_str());
    a.set("block", int64_t(8));
    a.set("channels", int64_t(9));
    TensorData xb = random({1, 1, 2, 2, 8}, 7);
    auto wrong = run(node("FromNCHWc", a), {&xb});
    QVERIFY(!wrong);
    QVERIFY(!toLogical(xb, Layout::blockedNCHW(8, 9)));
  }

  void layoutRoundTripsThroughText() {
    const char* text =
        "graph @main(%xb: f32[1,1,2,2,8] layout(NCHW8c, C=3)) -> (f32[1,3,2,2]) {\n"
        "  %r = Relu(%xb) : f32[1,1,2,2,8] layout(NCHW8c, C=3) loc(\"r\")\n"
        "  %x = fuselens.FromNCHWc(%r) {block=8, channels=3} : f32[1,3,2,2]\n"
        "  return %x\n"
        "}";
    auto g = parseGraph(text);
    QVERIFY2(g, g.message().c_str());
    QCOMPARE(QString::fromStdString(printGraph(*g)).trimmed(), QString(text));
    QVERIFY(verifyGraph(*g, nullptr).isOk());
    QCOMPARE(g->value(g->inputs()[0]).layout, Layout::blockedNCHW(8, 3));
    auto bad = parseGraph(
        "graph @main(%xb: f32[1,2,2,2,8] layout(NCHW8c, C=3)) -> (f32[1,2,2,2,8]) {\n  return "
        "%xb\n}");
    QVERIFY(!bad);
    QVERIFY2(bad.message().find("is not NCHW8c of 3 channels") != std::string::npos,
             bad.message().c_str());
    Graph h = *g;
    h.mutableValue(h.inputs()[0]).layout = Layout::blockedNCHW(16, 3);
    QVERIFY(!verifyGraph(h, nullptr).isOk());
  }
};

QTEST_APPLESS_MAIN(LayoutOpsTest)
#include "layout_ops_test.moc"
