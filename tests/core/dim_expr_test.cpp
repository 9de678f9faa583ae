// Symbolic dim arithmetic (core/ir/dim_expr.h): the canonical form round-trips
// through print and parse, simplification collects and folds, evaluation
// floors negative quotients as ONNX does; and shape inference carries the
// expressions through Concat, Slice, Conv, pools, Reshape, Flatten, Pad,
// Resize and elementwise ops (graphs in IR text, before and after).
#include "core/ir/dim_expr.h"

#include <QRandomGenerator>
#include <QtTest>

#include "core/eager/interpreter.h"
#include "core/io/npy.h"
#include "core/ir/printer.h"
#include "core/onnx/import.h"
#include "core/ops/registry.h"
#include "tests/support/test_paths.h"

using namespace fuselens;

namespace {

QString canon(const char* text) {
  auto e = DimExpr::parse(text);
  return e ? QString::fromStdString(e->str()) : "error: " + QString::fromStdString(e.message());
}

DimExpr expr(const char* text) { return *DimExpr::parse(text); }

// The graph after inference, its first line (the signature) dropped.
QString inferred(const QString& text) {
  auto g = parseGraph(text.toStdString());
  if (!g) return "parse: " + QString::fromStdString(g.message());
  Status s = inferGraphTypes(*g);
  if (!s) return "infer: " + QString::fromStdString(s.message());
  QStringList lines;  // the nodes but constants
  for (const QString& line : QString::fromStdString(printGraph(*g)).split('\n'))
    if (line.startsWith("  %") && !line.contains("= Constant")) lines << line.trimmed();
  return lines.join('\n');
}

// A random expression built two ways: through the algebra, and as plain
// integer arithmetic at fixed values of `a` and `b` (negative ones included,
// where floor and ceil differ from truncation). Nullopt when the algebra
// declines (a product of divisions).
struct Sample {
  std::optional<DimExpr> expr;
  std::vector<int64_t> values;  // at each binding of kBindings
};

const std::vector<std::map<std::string, int64_t>> kBindings = {
    {{"a", 0}, {"b", 0}},  {{"a", 1}, {"b", 7}},   {{"a", 5}, {"b", 2}},
    {{"a", -3}, {"b", 4}}, {{"a", -8}, {"b", -5}}, {{"a", 13}, {"b", -1}}};

int64_t floorOf(int64_t x, int64_t d) { return x / d - ((x % d != 0) && (x < 0)); }

Sample randomSample(QRandomGenerator& rng, int depth) {
  Sample s;
  const int pick = depth == 0 ? int(rng.bounded(3)) : int(rng.bounded(9));
  auto leaf = [&](const char* name) {
    s.expr = DimExpr::symbol(name);
    for (const auto& b : kBindings) s.values.push_back(b.at(name));
  };
  if (pick == 0) return leaf("a"), s;
  if (pick == 1) return leaf("b"), s;
  if (pick == 2) {
    const int64_t c = int64_t(rng.bounded(11)) - 5;
    s.expr = DimExpr::constant(c);
    s.values.assign(kBindings.size(), c);
    return s;
  }
  Sample x = randomSample(rng, depth - 1), y = randomSample(rng, depth - 1);
  if (!x.expr || !y.expr) return Sample{};
  const int64_t k = int64_t(rng.bounded(5)) + 1;
  for (size_t i = 0; i < kBindings.size(); ++i) {
    const int64_t u = x.values[i], v = y.values[i];
    s.values.push_back(pick == 3   ? u + v
                       : pick == 4 ? u - v
                       : pick == 5 ? u * v
                       : pick == 6 ? u * -k
                       : pick == 7 ? floorOf(u, k)
                                   : -floorOf(-u, k));  // ceil
  }
  s.expr = pick == 3   ? add(*x.expr, *y.expr)
           : pick == 4 ? subtract(*x.expr, *y.expr)
           : pick == 5 ? multiply(*x.expr, *y.expr)
           : pick == 6 ? scale(*x.expr, -k)
           : pick == 7 ? floorDiv(*x.expr, k)
                       : ceilDiv(*x.expr, k);
  return s;
}

// Runs `g` unbound with every symbol of its inputs at each length and checks
// each value's inferred dims, evaluated there, against the tensor eager made.
// `checked` counts the symbolic dims compared; the result is empty or why not.
QString shapesAgreeWithEager(const Graph& g, const std::vector<int64_t>& lengths, int& checked) {
  std::set<std::string> names;
  for (ValueId v : g.inputs())
    for (const Dim& d : g.value(v).type.shape) names.merge(dimSymbols(d));
  for (int64_t n : lengths) {
    std::map<std::string, int64_t> at;
    for (const std::string& name : names) at[name] = n;
    std::map<std::string, TensorData> inputs;
    for (ValueId v : g.inputs()) {
      TensorType t = g.value(v).type;
      for (Dim& d : t.shape) d = bindDim(d, at);
      auto r = randomTensor(t, 7);
      if (!r) return QString::fromStdString(r.message());
      inputs[g.value(v).name] = *r;
    }
    auto run = runEager(g, inputs);
    if (!run) return QString("at %1: ").arg(n) + QString::fromStdString(run.message());
    for (ValueId v : g.valueIds()) {
      const TensorData* t = run->find(v);
      const TensorType& type = g.value(v).type;
      if (!t || !type.rankKnown) continue;
      if (t->rank() != type.rank()) return "rank differs for " + QString::fromStdString(type.str());
      for (size_t i = 0; i < type.rank(); ++i) {
        auto e = DimExpr::of(type.shape[i]);
        auto want = e ? e->evaluate(at) : std::nullopt;
        if (!want) continue;  // unknown: nothing claimed
        checked += !type.shape[i].symbol.empty();
        if (*want != t->shape[i])
          return QString("%1 at %2: dim %3 is %4 but %5 evaluates to %6")
              .arg(QString::fromStdString(g.value(v).name))
              .arg(n)
              .arg(i)
              .arg(t->shape[i])
              .arg(QString::fromStdString(type.shape[i].str()))
              .arg(*want);
      }
    }
  }
  return {};
}

}  // namespace

class DimExprTest : public QObject {
  Q_OBJECT
 private slots:
  void canonicalForm_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("canonical");
    QTest::newRow("plain symbol") << "seq"
                                  << "seq";
    QTest::newRow("constant") << "12"
                              << "12";
    QTest::newRow("scaled") << "seq*2"
                            << "seq*2";
    QTest::newRow("coefficient in front") << "2*seq"
                                          << "seq*2";
    QTest::newRow("like terms collect") << "seq+seq"
                                        << "seq*2";
    QTest::newRow("cancels to a constant") << "seq-seq+3"
                                           << "3";
    QTest::newRow("constant folding") << "seq+2*3-1"
                                      << "seq+5";
    QTest::newRow("minus one") << "seq-1"
                               << "seq-1";
    QTest::newRow("negative lead") << "8-seq"
                                   << "-seq+8";
    QTest::newRow("spaces") << " s0 + 1 "
                            << "s0+1";
    QTest::newRow("product of symbols") << "seq*batch"
                                        << "batch*seq";
    QTest::newRow("distributes") << "(seq+1)*(seq-1)"
                                 << "seq*seq-1";
    QTest::newRow("ceil") << "ceil(seq/8)"
                          << "ceil(seq/8)";
    QTest::newRow("floor") << "floor(seq/2)"
                           << "floor(seq/2)";
    QTest::newRow("conv formula is ceil") << "floor((w-1)/2)+1"
                                          << "ceil(w/2)";
    QTest::newRow("ceil as floor") << "floor((seq+7)/8)"
                                   << "ceil(seq/8)";
    QTest::newRow("floor keeps small constant") << "floor((seq+1)/3)"
                                                << "floor((seq+1)/3)";
    QTest::newRow("multiples leave the division") << "floor((seq*4+1)/2)"
                                                  << "seq*2";
    QTest::newRow("exact division") << "floor(seq*6/3)"
                                    << "seq*2";
    QTest::newRow("gcd reduces") << "floor((seq*3+3)/9)"
                                 << "floor((seq+1)/3)";
    QTest::newRow("nested floors") << "floor(floor(seq/2)/4)"
                                   << "floor(seq/8)";
    QTest::newRow("nested ceils") << "ceil(ceil(seq/2)/2)"
                                  << "ceil(seq/4)";
    QTest::newRow("division by one") << "floor(seq/1)"
                                     << "seq";
    QTest::newRow("constant division floors") << "floor(-3/2)"
                                              << "-2";
    QTest::newRow("division term scaled") << "ceil(seq/8)*2+seq"
                                          << "ceil(seq/8)*2+seq";
  }
  void canonicalForm() {
    QFETCH(QString, text);
    QFETCH(QString, canonical);
    QCOMPARE(canon(text.toUtf8().constData()), canonical);
    // The canonical form reads back as itself.
    QCOMPARE(canon(canonical.toUtf8().constData()), canonical);
  }

  void parseErrors_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("message");
    QTest::newRow("bare division") << "seq/2"
                                   << "unexpected '/'";
    QTest::newRow("division by zero") << "floor(seq/0)"
                                      << "positive number";
    QTest::newRow("division by a symbol") << "ceil(seq/w)"
                                          << "positive number";
    QTest::newRow("dangling plus") << "seq+"
                                   << "expected a term";
    QTest::newRow("open paren") << "2*(seq"
                                << "expected ')'";
    QTest::newRow("product of divisions") << "floor(a/2)*floor(b/2)"
                                          << "cannot express";
    QTest::newRow("huge number") << "99999999999999999999"
                                 << "too large";
    QTest::newRow("product of long sums") << "(a+b+c+d+e+f+g+h+i)*(j+k+l+m+n+o+p+q+r)"
                                          << "cannot express";
    QTest::newRow("deep nesting") << QString(40, QChar('(')) + "seq" + QString(40, QChar(')'))
                                  << "too deeply";
  }
  void parseErrors() {
    QFETCH(QString, text);
    QFETCH(QString, message);
    auto e = DimExpr::parse(text.toStdString());
    QVERIFY(!e);
    QVERIFY2(QString::fromStdString(e.message()).contains(message), e.message().c_str());
  }

  void evaluate_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<qint64>("value");
    QTest::addColumn<qint64>("expected");
    QTest::newRow("seq*2") << "seq*2" << qint64(37) << qint64(74);
    QTest::newRow("ceil(seq/8) at 1") << "ceil(seq/8)" << qint64(1) << qint64(1);
    QTest::newRow("ceil(seq/8) at 64") << "ceil(seq/8)" << qint64(64) << qint64(8);
    QTest::newRow("ceil(seq/8) at 65") << "ceil(seq/8)" << qint64(65) << qint64(9);
    // ONNX's shape formulas floor towards minus infinity: floor(-3/2) is -2, not -1.
    QTest::newRow("floor of a negative") << "floor((seq-5)/2)" << qint64(2) << qint64(-2);
    QTest::newRow("ceil of a negative") << "ceil((seq-5)/2)" << qint64(2) << qint64(-1);
    QTest::newRow("floor exact negative") << "floor((seq-6)/2)" << qint64(2) << qint64(-2);
    QTest::newRow("square") << "seq*seq-1" << qint64(300) << qint64(89999);
  }
  void evaluate() {
    QFETCH(QString, text);
    QFETCH(qint64, value);
    QFETCH(qint64, expected);
    auto v = expr(text.toUtf8().constData()).evaluate({{"seq", value}});
    QVERIFY(v.has_value());
    QCOMPARE(qint64(*v), expected);
  }

  // Simplification never changes a value, and what it prints reads back the same.
  void randomExpressionsAgreeWithArithmetic() {
    QRandomGenerator rng(14);
    int checked = 0;
    for (int n = 0; n < 3000; ++n) {
      Sample s = randomSample(rng, 4);
      if (!s.expr) continue;
      const std::string text = s.expr->str();
      for (size_t i = 0; i < kBindings.size(); ++i) {
        auto v = s.expr->evaluate(kBindings[i]);
        QVERIFY2(v && *v == s.values[i],
                 qPrintable(QString::fromStdString(text) + " at binding " + QString::number(i) +
                            ": " + QString::number(v.value_or(-999999)) +
                            " != " + QString::number(s.values[i])));
      }
      auto back = DimExpr::parse(text);
      QVERIFY2(back.isOk(), back.message().c_str());
      QCOMPARE(QString::fromStdString(back->str()), QString::fromStdString(text));
      ++checked;
    }
    QVERIFY(checked > 1000);
  }

  void evaluateNeedsEverySymbol() {
    QVERIFY(!expr("batch*seq").evaluate({{"seq", 3}}).has_value());
    QCOMPARE(*expr("batch*seq").evaluate({{"seq", 3}, {"batch", 2}}), int64_t(6));
  }

  void bindDimSubstitutes() {
    QCOMPARE(bindDim(Dim::named("seq*2"), {{"seq", 5}}), Dim::fixed(10));
    QCOMPARE(bindDim(Dim::named("batch*seq"), {{"batch", 2}}), Dim::named("seq*2"));
    QCOMPARE(bindDim(Dim::named("seq-1"), {{"seq", 0}}), Dim::unknown());  // no such size
    QCOMPARE(bindDim(Dim::named("seq"), {{"other", 1}}), Dim::named("seq"));
    QCOMPARE(bindDim(Dim::fixed(4), {{"seq", 1}}), Dim::fixed(4));
    QCOMPARE(bindDim(Dim::named("batch size"), {{"batch size", 3}}), Dim::fixed(3));
  }

  void symbolsOfADim() {
    QCOMPARE(dimSymbols(Dim::named("floor((h-1)/2)+w")), (std::set<std::string>{"h", "w"}));
    QCOMPARE(dimSymbols(Dim::named("batch size")), (std::set<std::string>{"batch size"}));
    QCOMPARE(dimSymbols(Dim::named("-1")), (std::set<std::string>{"-1"}));
    QVERIFY(dimSymbols(Dim::fixed(3)).empty());
    QVERIFY(dimSymbols(Dim::unknown()).empty());
  }

  void dimArithmetic() {
    QCOMPARE(dimAdd(Dim::named("seq"), Dim::named("seq")), Dim::named("seq*2"));
    QCOMPARE(dimAdd(Dim::fixed(3), Dim::fixed(4)), Dim::fixed(7));
    QCOMPARE(dimAdd(Dim::named("seq"), Dim::unknown()), Dim::unknown());
    QCOMPARE(dimSub(Dim::named("seq+1"), Dim::named("seq")), Dim::fixed(1));
    QCOMPARE(dimMul(Dim::named("batch"), Dim::named("seq")), Dim::named("batch*seq"));
    QCOMPARE(dimCeilDiv(Dim::named("seq"), 8), Dim::named("ceil(seq/8)"));
    QCOMPARE(dimDivExact(Dim::named("batch*seq*768"), Dim::named("batch*64")),
             Dim::named("seq*12"));
    QCOMPARE(dimDivExact(Dim::named("seq*768"), Dim::fixed(5)), Dim::unknown());
    QCOMPARE(dimDivExact(Dim::named("seq+1"), Dim::named("seq")), Dim::unknown());
    // Overflow is "nothing to say", never undefined behaviour.
    QCOMPARE(dimMul(Dim::named("seq*4611686018427387904"), Dim::fixed(4)), Dim::unknown());
  }

  void inference_data() {
    QTest::addColumn<QString>("graph");
    QTest::addColumn<QString>("expected");
    QTest::newRow("concat along seq") << "graph @g(%x: f32[1,seq,8]) -> (f32[*]) {\n"
                                         "  %y = Concat(%x, %x) {axis=1} : f32[*]\n  return %y\n}"
                                      << "%y = Concat(%x, %x) {axis=1} : f32[1,seq*2,8]";
    QTest::newRow("concat of seq and a constant length")
        << "graph @g(%x: f32[seq,8], %z: f32[3,8]) -> (f32[*]) {\n"
           "  %y = Concat(%x, %z) {axis=0} : f32[*]\n  return %y\n}"
        << "%y = Concat(%x, %z) {axis=0} : f32[seq+3,8]";
    QTest::newRow("slice drops the first")
        << "graph @g(%x: f32[seq,8]) -> (f32[*]) {\n"
           "  %s = Constant : i64[1] dense<[1]>\n"
           "  %e = Constant : i64[1] dense<[2147483647]>\n"
           "  %a = Constant : i64[1] dense<[0]>\n"
           "  %y = Slice(%x, %s, %e, %a) : f32[*]\n  return %y\n}"
        << "%y = Slice(%x, %s, %e, %a) : f32[seq-1,8]";
    QTest::newRow("slice every other, last dropped")
        << "graph @g(%x: f32[2,seq]) -> (f32[*]) {\n"
           "  %s = Constant : i64[1] dense<[0]>\n"
           "  %e = Constant : i64[1] dense<[-1]>\n"
           "  %a = Constant : i64[1] dense<[1]>\n"
           "  %t = Constant : i64[1] dense<[2]>\n"
           "  %y = Slice(%x, %s, %e, %a, %t) : f32[*]\n  return %y\n}"
        << "%y = Slice(%x, %s, %e, %a, %t) : f32[2,floor(seq/2)]";
    QTest::newRow("slice to a constant end stays unknown (min(seq,4))")
        << "graph @g(%x: f32[seq]) -> (f32[*]) {\n"
           "  %s = Constant : i64[1] dense<[0]>\n"
           "  %e = Constant : i64[1] dense<[4]>\n"
           "  %y = Slice(%x, %s, %e) : f32[*]\n  return %y\n}"
        << "%y = Slice(%x, %s, %e) : f32[?]";
    QTest::newRow("strided conv over a symbolic width")
        << "graph @g(%x: f32[1,2,8,w], %k: f32[4,2,3,3]) -> (f32[*]) {\n"
           "  %y = Conv(%x, %k) {pads=[1, 1, 1, 1], strides=[2, 2]} : f32[*]\n  return %y\n}"
        << "%y = Conv(%x, %k) {pads=[1, 1, 1, 1], strides=[2, 2]} : f32[1,4,4,ceil(w/2)]";
    QTest::newRow("valid conv") << "graph @g(%x: f32[1,2,h,w], %k: f32[4,2,3,3]) -> (f32[*]) {\n"
                                   "  %y = Conv(%x, %k) : f32[*]\n  return %y\n}"
                                << "%y = Conv(%x, %k) : f32[1,4,h-2,w-2]";
    QTest::newRow("conv transpose doubles")
        << "graph @g(%x: f32[1,2,w], %k: f32[2,3,4]) -> (f32[*]) {\n"
           "  %y = ConvTranspose(%x, %k) {pads=[1, 1], strides=[2]} : f32[*]\n  return %y\n}"
        << "%y = ConvTranspose(%x, %k) {pads=[1, 1], strides=[2]} : f32[1,3,w*2]";
    QTest::newRow("max pool 2x2")
        << "graph @g(%x: f32[1,2,h,w]) -> (f32[*]) {\n"
           "  %y = MaxPool(%x) {kernel_shape=[2, 2], strides=[2, 2]} : f32[*]\n  return %y\n}"
        << "%y = MaxPool(%x) {kernel_shape=[2, 2], strides=[2, 2]} : "
           "f32[1,2,floor(h/2),floor(w/2)]";
    QTest::newRow("average pool, ceil mode")
        << "graph @g(%x: f32[1,2,w]) -> (f32[*]) {\n"
           "  %y = AveragePool(%x) {ceil_mode=1, kernel_shape=[3], strides=[2]} : f32[*]\n"
           "  return %y\n}"
        << "%y = AveragePool(%x) {ceil_mode=1, kernel_shape=[3], strides=[2]} : "
           "f32[1,2,floor(w/2)]";
    QTest::newRow("max pool, ceil mode with pads")
        << "graph @g(%x: f32[1,1,w]) -> (f32[*]) {\n"
           "  %y = MaxPool(%x) {ceil_mode=1, kernel_shape=[3], pads=[1, 1], strides=[2]} : f32[*]\n"
           "  return %y\n}"
        << "%y = MaxPool(%x) {ceil_mode=1, kernel_shape=[3], pads=[1, 1], strides=[2]} : "
           "f32[1,1,floor(w/2)+1]";
    // The last window must start inside the input: dropped at even lengths
    // only, so no one expression holds and the dim stays unknown.
    QTest::newRow("ceil-mode pool whose last window drops")
        << "graph @g(%x: f32[1,1,w]) -> (f32[*]) {\n"
           "  %y = MaxPool(%x) {ceil_mode=1, kernel_shape=[2], pads=[0, 1], strides=[2]} : f32[*]\n"
           "  return %y\n}"
        << "%y = MaxPool(%x) {ceil_mode=1, kernel_shape=[2], pads=[0, 1], strides=[2]} : "
           "f32[1,1,?]";
    QTest::newRow("dilated conv") << "graph @g(%x: f32[1,1,w], %k: f32[1,1,2]) -> (f32[*]) {\n"
                                     "  %y = Conv(%x, %k) {dilations=[2]} : f32[*]\n  return %y\n}"
                                  << "%y = Conv(%x, %k) {dilations=[2]} : f32[1,1,w-2]";
    QTest::newRow("same-padded conv, stride 3")
        << "graph @g(%x: f32[1,1,w], %k: f32[1,1,4]) -> (f32[*]) {\n"
           "  %y = Conv(%x, %k) {auto_pad=\"SAME_UPPER\", strides=[3]} : f32[*]\n  return %y\n}"
        << "%y = Conv(%x, %k) {auto_pad=\"SAME_UPPER\", strides=[3]} : f32[1,1,ceil(w/3)]";
    QTest::newRow("reshape merges seq with heads")
        << "graph @g(%x: f32[batch,seq,768]) -> (f32[*]) {\n"
           "  %s = Constant : i64[3] dense<[0, -1, 64]>\n"
           "  %y = Reshape(%x, %s) : f32[*]\n  return %y\n}"
        << "%y = Reshape(%x, %s) : f32[batch,seq*12,64]";
    QTest::newRow("flatten") << "graph @g(%x: f32[batch,seq,4]) -> (f32[*]) {\n"
                                "  %y = Flatten(%x) {axis=1} : f32[*]\n  return %y\n}"
                             << "%y = Flatten(%x) {axis=1} : f32[batch,seq*4]";
    QTest::newRow("pad") << "graph @g(%x: f32[2,seq]) -> (f32[*]) {\n"
                            "  %p = Constant : i64[4] dense<[0, 1, 0, 2]>\n"
                            "  %y = Pad(%x, %p) : f32[*]\n  return %y\n}"
                         << "%y = Pad(%x, %p) : f32[2,seq+3]";
    QTest::newRow("resize by 2")
        << "graph @g(%x: f32[1,1,h,w]) -> (f32[*]) {\n"
           "  %r = Constant : f32[0] dense<[]>\n"
           "  %s = Constant : f32[4] dense<[1.0, 1.0, 2.0, 2.0]>\n"
           "  %y = Resize(%x, %r, %s) {mode=\"nearest\"} : f32[*]\n  return %y\n}"
        << "%y = Resize(%x, %r, %s) {mode=\"nearest\"} : f32[1,1,h*2,w*2]";
    QTest::newRow("split in equal parts")
        << "graph @g(%x: f32[seq,4]) -> (f32[*], f32[*]) {\n"
           "  %c = Concat(%x, %x) {axis=0} : f32[*]\n"
           "  %a, %b = Split(%c) {axis=0} : f32[*], f32[*]\n  return %a, %b\n}"
        << "%c = Concat(%x, %x) {axis=0} : f32[seq*2,4]\n"
           "%a, %b = Split(%c) {axis=0} : f32[seq,4], f32[seq,4]";
    QTest::newRow("split in unequal parts")
        << "graph @g(%x: f32[seq]) -> (f32[*], f32[*]) {\n"
           "  %a, %b = Split(%x) {axis=0} : f32[*], f32[*]\n  return %a, %b\n}"
        << "%a, %b = Split(%x) {axis=0} : f32[ceil(seq/2)], f32[-ceil(seq/2)+seq]";
    const QString heads =
        "graph @g(%x: f32[batch,seq,768]) -> (f32[*]) {\n"
        "  %s = Shape(%x) : i64[3]\n"
        "  %i0 = Constant : i64[] dense<[0]>\n"
        "  %i1 = Constant : i64[] dense<[1]>\n"
        "  %ax = Constant : i64[1] dense<[0]>\n"
        "  %b = Gather(%s, %i0) {axis=0} : i64[]\n"
        "  %q = Gather(%s, %i1) {axis=0} : i64[]\n"
        "  %bu = Unsqueeze(%b, %ax) : i64[1]\n"
        "  %qu = Unsqueeze(%q, %ax) : i64[1]\n";
    QTest::newRow("reshape to a shape computed from Shape")
        << heads +
               "  %hd = Constant : i64[2] dense<[12, 64]>\n"
               "  %t = Concat(%bu, %qu, %hd) {axis=0} : i64[4]\n"
               "  %y = Reshape(%x, %t) : f32[*]\n  return %y\n}"
        << "%s = Shape(%x) : i64[3]\n"
           "%b = Gather(%s, %i0) {axis=0} : i64[]\n%q = Gather(%s, %i1) {axis=0} : i64[]\n"
           "%bu = Unsqueeze(%b, %ax) : i64[1]\n%qu = Unsqueeze(%q, %ax) : i64[1]\n"
           "%t = Concat(%bu, %qu, %hd) {axis=0} : i64[4]\n"
           "%y = Reshape(%x, %t) : f32[batch,seq,12,64]";
    QTest::newRow("computed shape with -1 and arithmetic")
        << heads +
               "  %two = Constant : i64[1] dense<[2]>\n"
               "  %m = Constant : i64[1] dense<[-1]>\n"
               "  %q2 = Mul(%qu, %two) : i64[1]\n"
               "  %t = Concat(%bu, %q2, %m) {axis=0} : i64[3]\n"
               "  %y = Reshape(%x, %t) : f32[*]\n  return %y\n}"
        << "%s = Shape(%x) : i64[3]\n"
           "%b = Gather(%s, %i0) {axis=0} : i64[]\n%q = Gather(%s, %i1) {axis=0} : i64[]\n"
           "%bu = Unsqueeze(%b, %ax) : i64[1]\n%qu = Unsqueeze(%q, %ax) : i64[1]\n"
           "%q2 = Mul(%qu, %two) : i64[1]\n"
           "%t = Concat(%bu, %q2, %m) {axis=0} : i64[3]\n"
           "%y = Reshape(%x, %t) : f32[batch,seq*2,384]";
    QTest::newRow("tile") << "graph @g(%x: f32[seq,2]) -> (f32[*]) {\n"
                             "  %r = Constant : i64[2] dense<[3, 1]>\n"
                             "  %y = Tile(%x, %r) : f32[*]\n  return %y\n}"
                          << "%y = Tile(%x, %r) : f32[seq*3,2]";
    QTest::newRow("space to depth and back")
        << "graph @g(%x: f32[1,2,h,w]) -> (f32[*]) {\n"
           "  %s = SpaceToDepth(%x) {blocksize=2} : f32[*]\n"
           "  %y = DepthToSpace(%s) {blocksize=2} : f32[*]\n  return %y\n}"
        << "%s = SpaceToDepth(%x) {blocksize=2} : f32[1,8,floor(h/2),floor(w/2)]\n"
           "%y = DepthToSpace(%s) {blocksize=2} : f32[1,2,floor(h/2)*2,floor(w/2)*2]";
    QTest::newRow("elementwise, transpose and matmul keep expressions")
        << "graph @g(%x: f32[1,seq,8], %w: f32[8,4]) -> (f32[*]) {\n"
           "  %c = Concat(%x, %x) {axis=1} : f32[*]\n"
           "  %a = Add(%c, %c) : f32[*]\n"
           "  %m = MatMul(%a, %w) : f32[*]\n"
           "  %t = Transpose(%m) {perm=[0, 2, 1]} : f32[*]\n  return %t\n}"
        << "%c = Concat(%x, %x) {axis=1} : f32[1,seq*2,8]\n"
           "%a = Add(%c, %c) : f32[1,seq*2,8]\n"
           "%m = MatMul(%a, %w) : f32[1,seq*2,4]\n"
           "%t = Transpose(%m) {perm=[0, 2, 1]} : f32[1,4,seq*2]";
  }
  void inference() {
    QFETCH(QString, graph);
    QFETCH(QString, expected);
    QCOMPARE(inferred(graph), expected);
    // And what it claims is what the kernels make, every symbol at each length.
    auto g = parseGraph(graph.toStdString());
    QVERIFY(g.isOk());
    QVERIFY(inferGraphTypes(*g).isOk());
    int checked = 0;
    // SpaceToDepth takes only lengths its block divides.
    const bool even = graph.contains("SpaceToDepth");
    QString why = shapesAgreeWithEager(
        *g, even ? std::vector<int64_t>{4, 8, 64} : std::vector<int64_t>{4, 5, 7, 64}, checked);
    QVERIFY2(why.isEmpty(), qPrintable(why));
  }

  // Every inferred expression is the shape the eager kernels produce: the
  // symbolic models run unbound at the lengths the issue names, each value's
  // dims evaluated at that length against the tensor it holds.
  void inferredExpressionsMatchEagerShapes_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("dim");
    for (const char* m : {"dyn_concat_slice", "dyn_layernorm_seq", "dyn_transformer"})
      QTest::newRow(m) << QString("/tests/cli/data/%1/model.onnx").arg(m) << "seq";
    QTest::newRow("dyn_ocr") << "/tests/cli/data/dyn_ocr/model.onnx"
                             << "width";
  }
  void inferredExpressionsMatchEagerShapes() {
    QFETCH(QString, model);
    QFETCH(QString, dim);
    auto imported = importOnnxFile(fuselens::test::sourcePath(model.toStdString()));
    QVERIFY2(imported.isOk(), imported.message().c_str());
    int symbolic = 0;
    for (ValueId v : imported->graph.valueIds())
      for (const Dim& d : imported->graph.value(v).type.shape) symbolic += !d.symbol.empty();
    QVERIFY(symbolic > 0);
    int checked = 0;
    QString why = shapesAgreeWithEager(imported->graph, {1, 2, 7, 64, 300}, checked);
    QVERIFY2(why.isEmpty(), qPrintable(why));
    QVERIFY(checked >= 5 * symbolic / 2);  // most values' symbolic dims are claimed
  }

  void irTextReadsExpressions() {
    const std::string text =
        "graph @g(%x: f32[1,seq*2,ceil(w/8)], %y: f32[floor((seq-1)/2)+1]) -> "
        "(f32[1,seq*2,ceil(w/8)]) {\n"
        "  return %x\n}";
    auto g = parseGraph(text);
    QVERIFY2(g.isOk(), g.message().c_str());
    const Graph& graph = *g;
    QCOMPARE(QString::fromStdString(graph.value(graph.inputs()[0]).type.str()),
             QString("f32[1,seq*2,ceil(w/8)]"));
    QCOMPARE(QString::fromStdString(graph.value(graph.inputs()[1]).type.str()),
             QString("f32[ceil(seq/2)]"));
    auto bad = parseGraph("graph @g(%x: f32[seq/2]) -> (f32[*]) {\n  return %x\n}");
    QVERIFY(!bad.isOk());
    QVERIFY2(QString::fromStdString(bad.message()).contains("line 1"), bad.message().c_str());
  }
};

QTEST_GUILESS_MAIN(DimExprTest)
#include "dim_expr_test.moc"
