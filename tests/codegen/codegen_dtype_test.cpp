// Code generation beyond f32: Cast between every pair of dtypes (ONNX
// semantics: truncation toward zero, low bits, `!= 0` for bool, f16/bf16
// rounded to nearest even), integer arithmetic that wraps to its width, f64
// and f16/bf16 math (f16 computed in f32 and rounded once per op, as eager),
// unsigned comparisons and shifts, Quantize/DequantizeLinear per tensor and
// per axis, and Dropout's mask; each alone and fused by the default pipeline,
// checked against the eager interpreter: bit-exact where the reference is
// exact (integers, bools, casts, quantization), within a few ulps otherwise.
#include <QtTest>
#include <cmath>
#include <cstring>
#include <random>

#include "codegen/compiler.h"
#include "core/eager/interpreter.h"
#include "passes/pass_manager.h"
#include "test_util.h"

using namespace fuselens;
using namespace fuselens::testing;

namespace {

const DType kAll[] = {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I8,
                      DType::U8,  DType::I16, DType::I32, DType::I64,  DType::Bool};

// Stores v into element i of t as eager's integer/float stores would (wrapping
// integers, rounding floats through f32 for f16/bf16 via a one-element Cast is
// not needed: test values are exact in every float type they are written to).
void put(TensorData& t, int64_t i, double v) {
  switch (t.dtype) {
    case DType::F32:
      t.data<float>()[i] = float(v);
      break;
    case DType::F64:
      t.data<double>()[i] = v;
      break;
    case DType::F16: {  // values here are exactly representable (or inf / NaN)
      float f = float(v);
      uint32_t x;
      std::memcpy(&x, &f, 4);
      uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
      uint16_t h;
      if (ax > 0x7f800000u)
        h = uint16_t(sign | 0x7e00u);
      else if (ax >= 0x47800000u)
        h = uint16_t(sign | 0x7c00u);
      else if (ax < 0x38800000u)
        h = uint16_t(sign | uint32_t(std::nearbyint(f < 0 ? -f * 16777216.0f : f * 16777216.0f)));
      else
        h = uint16_t(sign | ((((ax >> 23) - 112) << 10) | ((ax & 0x7fffffu) >> 13)));
      t.data<uint16_t>()[i] = h;
      break;
    }
    case DType::BF16: {
      float f = float(v);
      uint32_t x;
      std::memcpy(&x, &f, 4);
      t.data<uint16_t>()[i] = uint16_t(x >> 16);
      break;
    }
    case DType::I8:
      t.data<int8_t>()[i] = int8_t(int64_t(v));
      break;
    case DType::U8:
      t.data<uint8_t>()[i] = uint8_t(int64_t(v));
      break;
    case DType::I16:
      t.data<int16_t>()[i] = int16_t(int64_t(v));
      break;
    case DType::I32:
      t.data<int32_t>()[i] = int32_t(int64_t(v));
      break;
    case DType::I64:
      t.data<int64_t>()[i] = int64_t(v);
      break;
    case DType::Bool:
      t.data<uint8_t>()[i] = v != 0;
      break;
  }
}

// TensorProto.DataType numbers, for Cast's `to`.
int64_t onnxEnum(DType t) {
  switch (t) {
    case DType::F32:
      return 1;
    case DType::U8:
      return 2;
    case DType::I8:
      return 3;
    case DType::I16:
      return 5;
    case DType::I32:
      return 6;
    case DType::I64:
      return 7;
    case DType::Bool:
      return 9;
    case DType::F16:
      return 10;
    case DType::F64:
      return 11;
    case DType::BF16:
      return 16;
  }
  return 0;
}

bool isFloatType(DType t) {
  return t == DType::F32 || t == DType::F64 || t == DType::F16 || t == DType::BF16;
}

// Values that probe a cast's edges, each exact in the source type.
TensorData castProbe(DType t) {
  std::vector<double> v;
  if (isFloatType(t)) {
    v = {0.0,     -0.0,       0.5,   -0.5,   1.5,     -1.5,     2.5,      -2.7,
         127.75,  -128.5,     255.5, 256.0,  -129.25, 300.5,    1000.25,  -40000.0,
         65504.0, 1.0 / 1024, 1e-7,  -3.0e9, NAN,     INFINITY, -INFINITY};
    if (t == DType::F32 || t == DType::F64) {
      v.insert(v.end(), {70000.0, 1e-5, 0.1, 3.0e9, 1.0e20, -1.0e20, 65519.99, 65520.0,
                         1.0009765625 + 1.0 / 4096, 2.00048828125});
    }
    if (t == DType::BF16)
      v = {0.0, -0.0, 0.5, -1.5, 2.5, 128.0, -256.0, 3.0e9, NAN, INFINITY, 1e-7};
  } else if (t == DType::Bool) {
    v = {0, 1, 1, 0};
  } else {
    v = {0,
         1,
         -1,
         127,
         -128,
         255,
         256,
         -129,
         300,
         -300,
         32767,
         -32768,
         65535,
         70000,
         -70000,
         2147483647.0,
         -2147483648.0,
         4294967296.0 + 5,
         9007199254740993.0,
         -123456789012.0};
  }
  TensorData d(t, {int64_t(v.size())});
  for (size_t i = 0; i < v.size(); ++i) put(d, int64_t(i), v[i]);
  if (t == DType::I64) d.data<int64_t>()[v.size() - 2] = (int64_t(1) << 53) + 1;  // inexact in f64
  return d;
}

TensorData randomTyped(DType t, const Shape& s, uint32_t seed, bool nonZero = false) {
  std::mt19937 rng(seed);
  TensorData d(t, s);
  for (int64_t i = 0; i < d.numel(); ++i) {
    double v;
    if (isFloatType(t))
      v = std::ldexp(double(int(rng() % 2001) - 1000), -8);  // exact in f16/bf16
    else if (t == DType::U8)
      v = double(rng() % 256);
    else if (t == DType::Bool)
      v = double(rng() % 2);
    else
      v = double(int(rng() % 241) - 120);
    if (nonZero && v == 0) v = 3;
    put(d, i, v);
  }
  return d;
}

// Empty when within tolerance (relative to 1 + |ref|); NaN matches NaN.
std::string differs(const TensorData& ref, const TensorData& got, double tol) {
  if (ref.dtype != got.dtype || ref.shape != got.shape)
    return "type " + got.type().str() + " vs " + ref.type().str();
  for (int64_t i = 0; i < ref.numel(); ++i) {
    double r = ref.at(i), g = got.at(i);
    if (std::isnan(r) && std::isnan(g)) continue;
    if (r == g) continue;
    if (!(std::fabs(r - g) <= tol * (1 + std::fabs(r))))
      return "element " + std::to_string(i) + ": " + QString::number(g, 'g', 17).toStdString() +
             " vs eager " + QString::number(r, 'g', 17).toStdString();
  }
  return {};
}

double toleranceOf(DType t, bool approximate) {
  if (!isFloatType(t)) return 0;
  if (t == DType::F16) return approximate ? 2e-3 : 1e-3;  // one f16 ulp may flip on a tie
  if (t == DType::BF16) return 1e-2;
  return approximate ? 1e-5 : 0;
}

// Runs g eagerly and compiled (without the fallback) and compares every output.
std::string check(const Graph& g, const std::map<std::string, TensorData>& in, bool fused,
                  double tol) {
  auto eager = runEager(g, in);
  if (!eager) return "eager: " + eager.message();
  Graph opt = g;
  if (fused) {
    auto r = runPipeline(g, *parsePipeline(defaultPipeline()));
    if (!r) return "pipeline: " + r.message();
    opt = r->snapshots.back().graph();
  }
  CompileOptions o;
  o.fallback = false;
  auto m = compileGraph(opt, o);
  if (!m) return "compile: " + m.message();
  auto run = (*m)->run(in);
  if (!run) return "run: " + run.message();
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    const auto& got = (*run)[opt.outputs()[i].index];
    if (!got) return "no output " + std::to_string(i);
    std::string d = differs(*eager->find(g.outputs()[i]), *got, tol);
    if (!d.empty()) return "output " + std::to_string(i) + ": " + d + "\n" + (*m)->loopIrText();
  }
  return {};
}

ValueId addOp(Graph& g, const std::string& op, std::vector<ValueId> in, TensorType out,
              Attributes attrs = {}) {
  static int k = 0;
  return g.node(g.addNode(op, in, {{op + "_" + std::to_string(k++), out}}, attrs)).outputs[0];
}

}  // namespace

class CodegenDtypeTest : public QObject {
  Q_OBJECT

 private slots:
  void castEveryPair_data() {
    QTest::addColumn<int>("from");
    QTest::addColumn<int>("to");
    QTest::addColumn<bool>("fused");
    for (DType a : kAll)
      for (DType b : kAll) {
        if (a == b) continue;
        for (bool fused : {false, true})
          QTest::newRow((std::string(dtypeName(a)) + " -> " + std::string(dtypeName(b)) +
                         (fused ? " fused" : ""))
                            .c_str())
              << int(a) << int(b) << fused;
      }
  }

  // y = Cast(x); fused: z = Cast(Cast(x) -> to) back to `from` too, so the
  // rounding of the middle value must survive fusion.
  void castEveryPair() {
    QFETCH(int, from);
    QFETCH(int, to);
    QFETCH(bool, fused);
    DType a = DType(from), b = DType(to);
    TensorData x = castProbe(a);
    Graph g;
    ValueId xi = g.addInput("x", TensorType::of(a, x.shape));
    Attributes toB, toA;
    toB.set("to", Attribute(int64_t(onnxEnum(b))));
    toA.set("to", Attribute(int64_t(onnxEnum(a))));
    ValueId y = addOp(g, "Cast", {xi}, TensorType::of(b, x.shape), toB);
    g.addOutput(y);
    if (fused) g.addOutput(addOp(g, "Cast", {y}, TensorType::of(a, x.shape), toA));
    g.markAsOriginal();
    std::string d = check(g, {{"x", x}}, fused, 0);
    QVERIFY2(d.empty(), d.c_str());
  }

  void arithmetic_data() {
    QTest::addColumn<QString>("op");
    QTest::addColumn<int>("dtype");
    QTest::addColumn<bool>("fused");
    const char* intOps[] = {"Add", "Sub", "Mul",  "Div",  "Max",  "Min",  "Mod",   "ModFmod",
                            "Neg", "Abs", "Sign", "Relu", "Clip", "Less", "Equal", "Pow"};
    for (DType t : {DType::I8, DType::U8, DType::I16, DType::I32, DType::I64})
      for (const char* op : intOps)
        for (bool fused : {false, true})
          QTest::newRow(
              (std::string(op) + " " + std::string(dtypeName(t)) + (fused ? " fused" : "")).c_str())
              << QString(op) << int(t) << fused;
    const char* floatOps[] = {"Add", "Sub",   "Mul",   "Div",  "Max",     "Min", "Neg",
                              "Abs", "Relu",  "Exp",   "Tanh", "Sqrt",    "Log", "Sigmoid",
                              "Erf", "Floor", "Round", "Sign", "ModFmod", "Pow", "Less"};
    for (DType t : {DType::F64, DType::F16, DType::BF16})
      for (const char* op : floatOps)
        for (bool fused : {false, true})
          QTest::newRow(
              (std::string(op) + " " + std::string(dtypeName(t)) + (fused ? " fused" : "")).c_str())
              << QString(op) << int(t) << fused;
    for (const char* op : {"BitShiftLeft", "BitShiftRight"})
      for (bool fused : {false, true})
        QTest::newRow((std::string(op) + " u8" + (fused ? " fused" : "")).c_str())
            << QString(op) << int(DType::U8) << fused;
  }

  // r = op(a, b) (or op(a)) then, fused, Add(r, r) so the op's result is
  // rounded to its dtype inside the fused body before the next op reads it.
  void arithmetic() {
    QFETCH(QString, op);
    QFETCH(int, dtype);
    QFETCH(bool, fused);
    DType t = DType(dtype);
    std::string o = op.toStdString();
    Shape s = {4, 33};
    Graph g;
    ValueId a = g.addInput("a", TensorType::of(t, s)), b = g.addInput("b", TensorType::of(t, {33}));
    Attributes at;
    std::string onnxOp = o;
    std::vector<ValueId> ins = {a, b};
    bool unaryOp = o == "Neg" || o == "Abs" || o == "Sign" || o == "Relu" || o == "Exp" ||
                   o == "Tanh" || o == "Sqrt" || o == "Log" || o == "Sigmoid" || o == "Erf" ||
                   o == "Floor" || o == "Round";
    if (unaryOp) ins = {a};
    if (o == "Mod") at.set("fmod", Attribute(int64_t(0)));
    if (o == "ModFmod") onnxOp = "Mod", at.set("fmod", Attribute(int64_t(1)));
    if (o.rfind("BitShift", 0) == 0) {
      onnxOp = "BitShift";
      at.set("direction", Attribute(std::string(o == "BitShiftLeft" ? "LEFT" : "RIGHT")));
    }
    if (o == "Clip") {
      auto lo2 = std::make_shared<TensorData>(TensorData(t, {}));
      auto hi2 = std::make_shared<TensorData>(TensorData(t, {}));
      put(*lo2, 0, t == DType::U8 ? 20 : -20);
      put(*hi2, 0, 50);
      ins = {a, g.addConstant("lo_t", lo2), g.addConstant("hi_t", hi2)};
    }
    bool boolOut = o == "Less" || o == "Equal";
    TensorType outT = TensorType::of(boolOut ? DType::Bool : t, s);
    ValueId r = addOp(g, onnxOp, ins, outT, at);
    if (fused && !boolOut) r = addOp(g, "Add", {r, r}, outT);
    g.addOutput(r);
    g.markAsOriginal();
    TensorData av = randomTyped(t, s, 7), bv = randomTyped(t, {33}, 11, true);
    if (o == "Sqrt" || o == "Log")  // positive inputs
      for (int64_t i = 0; i < av.numel(); ++i) put(av, i, std::fabs(av.at(i)) + 0.25);
    if (o == "Pow") {
      for (int64_t i = 0; i < bv.numel(); ++i) put(bv, i, double(i % 4));
      if (isFloatType(t))
        for (int64_t i = 0; i < av.numel(); ++i) put(av, i, std::fabs(av.at(i)) + 0.5);
      else
        for (int64_t i = 0; i < av.numel(); ++i) put(av, i, double(i % 9) - 4);
    }
    if (o.rfind("BitShift", 0) == 0)
      for (int64_t i = 0; i < bv.numel(); ++i) put(bv, i, double(i % 9));
    bool approximate = o == "Exp" || o == "Tanh" || o == "Log" || o == "Sigmoid" || o == "Erf" ||
                       o == "Pow" || o == "Div" || o == "Sqrt";
    std::string d = check(g, {{"a", av}, {"b", bv}}, fused, toleranceOf(t, approximate));
    QVERIFY2(d.empty(), d.c_str());
  }

  void quantize_data() {
    QTest::addColumn<QString>("op");
    QTest::addColumn<int>("qtype");
    QTest::addColumn<bool>("perAxis");
    for (const char* op : {"QuantizeLinear", "DequantizeLinear"})
      for (DType q : {DType::U8, DType::I8})
        for (bool axis : {false, true})
          QTest::newRow((std::string(op) + " " + std::string(dtypeName(q)) +
                         (axis ? " per-axis" : " per-tensor"))
                            .c_str())
              << QString(op) << int(q) << axis;
  }

  // x [2, 5, 7] with scale / zero point per tensor or along axis 1; the
  // quantized values include exact ties (x / scale = k + 0.5) and saturation.
  void quantize() {
    QFETCH(QString, op);
    QFETCH(int, qtype);
    QFETCH(bool, perAxis);
    DType q = DType(qtype);
    bool quant = op == "QuantizeLinear";
    Shape s = {2, 5, 7};
    int64_t c = perAxis ? 5 : 1;
    Shape ps = perAxis ? Shape{5} : Shape{};
    auto scale = std::make_shared<TensorData>(DType::F32, ps);
    auto zp = std::make_shared<TensorData>(q, ps);
    for (int64_t i = 0; i < c; ++i) {
      scale->data<float>()[i] = 0.5f * float(i + 1);
      put(*zp, i, q == DType::U8 ? 100 + 10 * i : -5 + 3 * i);
    }
    Graph g;
    ValueId x = g.addInput("x", TensorType::of(quant ? DType::F32 : q, s));
    ValueId sc = g.addConstant("scale", scale), z = g.addConstant("zp", zp);
    ValueId y = addOp(g, op.toStdString(), {x, sc, z}, TensorType::of(quant ? q : DType::F32, s));
    g.addOutput(y);
    g.markAsOriginal();
    TensorData xv(quant ? DType::F32 : q, s);
    for (int64_t i = 0; i < xv.numel(); ++i)
      put(xv, i,
          quant ? (double(i % 41) - 20) * 3.25 + (i % 3 == 0 ? 0.25 : 0)
                : double((i * 37) % 256) - (q == DType::I8 ? 128 : 0));
    if (quant) xv.data<float>()[3] = NAN;
    for (bool fused : {false, true}) {
      std::string d = check(g, {{"x", xv}}, fused, 0);
      QVERIFY2(d.empty(), d.c_str());
    }
  }

  // Integer MatMul accumulates in i64 and wraps to the output width, as eager.
  void integerMatMul_data() {
    QTest::addColumn<int>("dtype");
    for (DType t : {DType::I32, DType::I64})  // ONNX MatMul's integer types
      QTest::newRow(std::string(dtypeName(t)).c_str()) << int(t);
  }

  void integerMatMul() {
    QFETCH(int, dtype);
    DType t = DType(dtype);
    Graph g;
    ValueId a = g.addInput("a", TensorType::of(t, {2, 5, 9})),
            b = g.addInput("b", TensorType::of(t, {9, 7}));
    g.addOutput(addOp(g, "MatMul", {a, b}, TensorType::of(t, {2, 5, 7})));
    g.markAsOriginal();
    for (bool fused : {false, true}) {
      std::string d = check(
          g, {{"a", randomTyped(t, {2, 5, 9}, 1)}, {"b", randomTyped(t, {9, 7}, 2)}}, fused, 0);
      QVERIFY2(d.empty(), d.c_str());
    }
  }

  // Dropout in inference: y = x and, when asked for, an all-true mask.
  void dropoutMask() {
    Graph g;
    Shape s = {3, 8};
    ValueId x = g.addInput("x", f32(s));
    NodeId d = g.addNode("Dropout", {x}, {{"y", f32(s)}, {"mask", TensorType::of(DType::Bool, s)}});
    ValueId y = addOp(g, "Relu", {g.node(d).outputs[0]}, f32(s));
    g.addOutput(y);
    g.addOutput(g.node(d).outputs[1]);
    g.markAsOriginal();
    for (bool fused : {false, true}) {
      std::string e = check(g, {{"x", randomTensor(s, 3)}}, fused, 0);
      QVERIFY2(e.empty(), e.c_str());
    }
  }
};

QTEST_GUILESS_MAIN(CodegenDtypeTest)
#include "codegen_dtype_test.moc"
