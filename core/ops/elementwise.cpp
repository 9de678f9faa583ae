// Elementwise ops: arithmetic with ONNX multidirectional (numpy) broadcasting
// (Add, Sub, Mul, Div, Pow, Mod, BitShift, variadic Min/Max/Sum/Mean),
// comparisons and logic (-> bool), Where, and the unary math and activation
// functions (Abs ... Mish, Clip with min/max inputs). Their kernels are the
// reference for every fused elementwise group, so each is one obvious loop over
// the output index: floats are computed in double and rounded once to the
// output dtype (f16/bf16 through f32, as ONNX Runtime widens them on CPU),
// integers in int64 and wrapped to their width. Nothing is shared with codegen/.
#include <cmath>
#include <cstring>

#include "core/ops/op_util.h"

namespace fuselens::ops {
namespace {

enum class Out { First, Bool };
enum class Accepts { Any, Float, Int, Bool, Unsigned };

bool accepts(Accepts a, DType t) {
  switch (a) {
    case Accepts::Any:
      return true;
    case Accepts::Float:
      return isFloat(t);
    case Accepts::Int:
      return isIntegral(t) && t != DType::Bool;
    case Accepts::Bool:
      return t == DType::Bool;
    case Accepts::Unsigned:
      return t == DType::U8;
  }
  return false;
}

Status checkAccepts(const Node& n, Accepts a, DType t) {
  if (accepts(a, t)) return Status::ok();
  const char* want = a == Accepts::Float  ? "a floating-point"
                     : a == Accepts::Int  ? "an integer"
                     : a == Accepts::Bool ? "a bool"
                                          : "an unsigned integer";
  return nodeError(n, std::string("needs ") + want + " input, got " + dtypeStr(t));
}

// ---- inference ----

// Broadcasts inputs [first, end) together; they must share a dtype unless `mixed`.
Types inferBroadcast(const InferContext& c, size_t min, size_t max, Out out, Accepts acc,
                     bool mixed = false, size_t first = 0) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), min, max));
  TensorType res;
  res.dtype = out == Out::Bool ? DType::Bool : c.inputTypes[first].dtype;
  FL_RETURN_IF_ERROR(checkAccepts(c.node, acc, c.inputTypes[first].dtype));
  std::vector<Dim> dims;
  for (size_t i = 0; i < c.inputTypes.size(); ++i) {
    const TensorType* t = typeAt(c, i);
    if (!t) continue;
    if (!mixed && i >= first && t->dtype != c.inputTypes[first].dtype)
      return nodeError(c.node, "inputs have different element types " +
                                   dtypeStr(c.inputTypes[first].dtype) + " and " +
                                   dtypeStr(t->dtype));
    if (!t->rankKnown) res.rankKnown = false;
    if (!res.rankKnown) continue;
    auto d = broadcastDims(c.node, dims, t->shape);
    if (!d) return d.status();
    dims = *d;
  }
  if (res.rankKnown) res.shape = dims;
  return std::vector{res};
}

InferFn broadcastInfer(size_t min, size_t max, Out out, Accepts acc, bool mixed = false) {
  return [=](const InferContext& c) { return inferBroadcast(c, min, max, out, acc, mixed); };
}

InferFn unaryInfer(Accepts acc, Out out = Out::First) {
  return [=](const InferContext& c) -> Types {
    FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 1, 1));
    FL_RETURN_IF_ERROR(checkAccepts(c.node, acc, c.inputTypes[0].dtype));
    TensorType t = c.inputTypes[0];
    if (out == Out::Bool) t.dtype = DType::Bool;
    return std::vector{t};
  };
}

// ---- kernels ----

// Float path: ff(values, count, node) -> double. Int path: fi(values, count, bad) -> int64
// (sets bad on integer division by zero). Either may be absent for ops of one kind.
using FloatFn = std::function<double(const double*, size_t, const Node&)>;
using IntFn = std::function<int64_t(const int64_t*, size_t, bool&)>;

EagerFn naryKernel(size_t min, size_t max, Out out, Accepts acc, FloatFn ff, IntFn fi,
                   bool mixed = false) {
  return [=](const Node& n, const Inputs& in) -> Outputs {
    FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), min, max));
    std::vector<const TensorData*> ins;
    for (const TensorData* t : in)
      if (t) ins.push_back(t);
    DType dt = ins[0]->dtype;
    FL_RETURN_IF_ERROR(checkAccepts(n, acc, dt));
    std::vector<int64_t> shape;
    for (const TensorData* t : ins) {
      if (!mixed && t->dtype != dt) return nodeError(n, "inputs have different element types");
      auto s = broadcastShapes(n, shape, t->shape);
      if (!s) return s.status();
      shape = *s;
    }
    TensorData o(out == Out::Bool ? DType::Bool : dt, shape);
    const size_t k = ins.size();
    bool floatPath = isFloat(dt) || (mixed && isFloat(ins.back()->dtype) && !fi);
    if (floatPath && !ff) return nodeError(n, "no eager kernel for element type " + dtypeStr(dt));
    if (!floatPath && !fi) return nodeError(n, "no eager kernel for element type " + dtypeStr(dt));
    bool bad = false;
    if (floatPath) {
      std::vector<double> v(k);
      forEachBroadcast(ins, shape, [&](int64_t i, const std::vector<int64_t>& off) {
        for (size_t j = 0; j < k; ++j) v[j] = loadF(*ins[j], off[j]);
        storeF(o, i, ff(v.data(), k, n));
      });
    } else {
      std::vector<int64_t> v(k);
      forEachBroadcast(ins, shape, [&](int64_t i, const std::vector<int64_t>& off) {
        for (size_t j = 0; j < k; ++j) v[j] = loadI(*ins[j], off[j]);
        storeI(o, i, fi(v.data(), k, bad));
      });
    }
    if (bad) return nodeError(n, "integer division by zero");
    return std::vector{std::move(o)};
  };
}

// Binary helpers: the op as two lambdas over (a, b).
template <class F, class I>
EagerFn binary(Accepts acc, Out out, F f, I i) {
  FloatFn ff = [f](const double* v, size_t, const Node&) { return double(f(v[0], v[1])); };
  IntFn fi = [i](const int64_t* v, size_t, bool& bad) { return int64_t(i(v[0], v[1], bad)); };
  return naryKernel(2, 2, out, acc, ff, fi);
}

template <class F>
EagerFn unaryFloat(F f) {
  FloatFn ff = [f](const double* v, size_t, const Node& n) { return f(v[0], n); };
  return naryKernel(1, 1, Out::First, Accepts::Float, ff, nullptr);
}

// Wrapping integer arithmetic: ONNX Runtime's int add/sub/mul wrap like the hardware.
int64_t wrapAdd(int64_t a, int64_t b) { return int64_t(uint64_t(a) + uint64_t(b)); }
int64_t wrapSub(int64_t a, int64_t b) { return int64_t(uint64_t(a) - uint64_t(b)); }
int64_t wrapMul(int64_t a, int64_t b) { return int64_t(uint64_t(a) * uint64_t(b)); }

double attr(const Node& n, const char* name, double fallback) {
  return n.attrs.getFloat(name, fallback);
}

double softplus(double x) { return x > 30 ? x : std::log1p(std::exp(x)); }

void addOp(OpRegistry& r, const char* name, PatternKind kind, InferFn infer, EagerFn eager) {
  r.add(OpInfo{name, "", kind, std::move(infer), std::move(eager)});
}

void addUnary(OpRegistry& r, const char* name, EagerFn k, Accepts acc = Accepts::Float) {
  addOp(r, name, PatternKind::ElemWise, unaryInfer(acc), std::move(k));
}

// ---- ops with their own shape ----

// Where(cond, x, y): broadcast all three; copies x or y bytes, so any dtype.
Outputs whereKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 3, 3));
  const TensorData &c = *in[0], &x = *in[1], &y = *in[2];
  if (c.dtype != DType::Bool)
    return nodeError(n, "the condition must be bool, got " + dtypeStr(c.dtype));
  if (x.dtype != y.dtype) return nodeError(n, "X and Y have different element types");
  auto s1 = broadcastShapes(n, c.shape, x.shape);
  if (!s1) return s1.status();
  auto shape = broadcastShapes(n, *s1, y.shape);
  if (!shape) return shape.status();
  TensorData o(x.dtype, *shape);
  size_t es = dtypeSize(x.dtype);
  forEachBroadcast({&c, &x, &y}, *shape, [&](int64_t i, const std::vector<int64_t>& off) {
    bool takeX = c.data<uint8_t>()[off[0]] != 0;
    const std::byte* src = takeX ? x.bytes.data() + off[1] * es : y.bytes.data() + off[2] * es;
    std::memcpy(o.bytes.data() + i * es, src, es);
  });
  return std::vector{std::move(o)};
}

Types inferWhere(const InferContext& c) {
  auto t = inferBroadcast(c, 3, 3, Out::First, Accepts::Any, true, 1);
  if (!t) return t;
  if (c.inputTypes[0].dtype != DType::Bool)
    return nodeError(c.node, "the condition must be bool, got " + dtypeStr(c.inputTypes[0].dtype));
  if (c.inputTypes[1].dtype != c.inputTypes[2].dtype)
    return nodeError(c.node, "X and Y have different element types");
  return t;
}

// Clip(x, min?, max?) (opset 11+; older attribute forms are rewritten on import).
Outputs clipKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 1, 3));
  const TensorData& x = *in[0];
  bool fl = isFloat(x.dtype);
  double lo = -INFINITY, hi = INFINITY;
  int64_t ilo = INT64_MIN, ihi = INT64_MAX;
  for (size_t k = 1; k < 3; ++k) {
    const TensorData* b = inputAt(in, k);
    if (!b) continue;
    if (b->dtype != x.dtype) return nodeError(n, "min/max must have the input's element type");
    if (b->numel() != 1) return nodeError(n, "min/max must be scalars, got " + b->type().str());
    (k == 1 ? lo : hi) = b->at(0);
    (k == 1 ? ilo : ihi) = loadI(*b, 0);
  }
  TensorData o(x.dtype, x.shape);
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (fl) {
      double v = loadF(x, i);
      // min then max, as ORT: NaN stays NaN.
      storeF(o, i, std::isnan(v) ? v : std::min(std::max(v, lo), hi));
    } else {
      storeI(o, i, std::min(std::max(loadI(x, i), ilo), ihi));
    }
  }
  return std::vector{std::move(o)};
}

Types inferClip(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 1, 3));
  return std::vector{c.inputTypes[0]};
}

// PRelu: the slope broadcasts to X (unidirectionally).
Types inferPRelu(const InferContext& c) {
  auto t = inferBroadcast(c, 2, 2, Out::First, Accepts::Float);
  if (!t) return t;
  return std::vector{c.inputTypes[0]};
}

Outputs isNanKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 1, 1));
  FL_RETURN_IF_ERROR(needFloat(n, in[0]->dtype));
  TensorData o(DType::Bool, in[0]->shape);
  for (int64_t i = 0; i < o.numel(); ++i) o.data<uint8_t>()[i] = std::isnan(in[0]->at(i));
  return std::vector{std::move(o)};
}

Outputs isInfKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 1, 1));
  FL_RETURN_IF_ERROR(needFloat(n, in[0]->dtype));
  bool neg = n.attrs.getInt("detect_negative", 1) != 0;
  bool pos = n.attrs.getInt("detect_positive", 1) != 0;
  TensorData o(DType::Bool, in[0]->shape);
  for (int64_t i = 0; i < o.numel(); ++i) {
    double v = in[0]->at(i);
    o.data<uint8_t>()[i] = std::isinf(v) && ((v > 0 && pos) || (v < 0 && neg));
  }
  return std::vector{std::move(o)};
}

Outputs identityKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 1, 1));
  return std::vector{*in[0]};  // any dtype: a copy of the bytes
}

Types inferIdentity(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 1, 1));
  return std::vector{c.inputTypes[0]};
}

// Dropout in inference, or in training with ratio 0 (ONNX Runtime drops
// nothing then either): the output is the input, the mask all true.
Outputs dropoutKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 1, 3));
  const TensorData* training = inputAt(in, 2);
  const TensorData* ratio = inputAt(in, 1);
  double r = ratio && ratio->numel() == 1 ? ratio->at(0) : 0.5;
  if (training && training->numel() == 1 && training->at(0) != 0 && r != 0)
    return nodeError(n, "training_mode=true with ratio " + std::to_string(r) +
                            " drops elements at random (ONNX Runtime draws them from its own "
                            "generator, so no reference can match); only ratio 0 runs");
  std::vector<TensorData> outs{*in[0]};
  if (n.outputs.size() > 1) {
    TensorData mask(DType::Bool, in[0]->shape);
    std::fill(mask.bytes.begin(), mask.bytes.end(), std::byte{1});
    outs.push_back(std::move(mask));
  }
  return outs;
}

Types inferDropout(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 1, 3));
  TensorType mask = c.inputTypes[0];
  mask.dtype = DType::Bool;
  std::vector<TensorType> out{c.inputTypes[0]};
  if (c.node.outputs.size() > 1) out.push_back(mask);
  return out;
}

// Python-style integer modulo: the result takes the divisor's sign.
int64_t floorMod(int64_t a, int64_t b) {
  int64_t m = a % b;
  return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m;
}

void registerArithmetic(OpRegistry& r) {
  const auto E = PatternKind::ElemWise;
  const auto A = Accepts::Any;
  addOp(r, "Add", E, broadcastInfer(2, 2, Out::First, A),
        binary(
            A, Out::First, [](double a, double b) { return a + b; },
            [](int64_t a, int64_t b, bool&) { return wrapAdd(a, b); }));
  addOp(r, "Sub", E, broadcastInfer(2, 2, Out::First, A),
        binary(
            A, Out::First, [](double a, double b) { return a - b; },
            [](int64_t a, int64_t b, bool&) { return wrapSub(a, b); }));
  addOp(r, "Mul", E, broadcastInfer(2, 2, Out::First, A),
        binary(
            A, Out::First, [](double a, double b) { return a * b; },
            [](int64_t a, int64_t b, bool&) { return wrapMul(a, b); }));
  // Integer Div truncates toward zero, as C++ and ONNX Runtime do.
  addOp(r, "Div", E, broadcastInfer(2, 2, Out::First, A),
        binary(
            A, Out::First, [](double a, double b) { return a / b; },
            [](int64_t a, int64_t b, bool& bad) -> int64_t {
              if (b == 0) return bad = true, 0;
              if (b == -1) return wrapSub(0, a);  // INT_MIN / -1 overflows in C++
              return a / b;
            }));
  // Pow: the exponent may have another dtype; the result has the base's.
  FloatFn pow = [](const double* v, size_t, const Node&) { return std::pow(v[0], v[1]); };
  IntFn ipow = [](const int64_t* v, size_t, bool&) {
    return int64_t(std::pow(double(v[0]), double(v[1])));
  };
  addOp(r, "Pow", E, broadcastInfer(2, 2, Out::First, A, true),
        naryKernel(2, 2, Out::First, A, pow, ipow, true));
  // Mod: fmod=1 is C fmod (sign of the dividend); fmod=0 takes the divisor's sign.
  FloatFn fmod = [](const double* v, size_t, const Node& n) {
    double m = std::fmod(v[0], v[1]);
    if (n.attrs.getInt("fmod", 0) == 0 && m != 0 && ((m < 0) != (v[1] < 0))) m += v[1];
    return m;
  };
  IntFn imod = [](const int64_t* v, size_t, bool& bad) -> int64_t {
    if (v[1] == 0) return bad = true, 0;
    if (v[1] == -1) return 0;
    return floorMod(v[0], v[1]);
  };
  EagerFn modInt = naryKernel(2, 2, Out::First, A, fmod, imod);
  // fmod=1 on integers truncates like C's %.
  EagerFn modC =
      naryKernel(2, 2, Out::First, A, fmod, [](const int64_t* v, size_t, bool& bad) -> int64_t {
        if (v[1] == 0) return bad = true, 0;
        return v[1] == -1 ? 0 : v[0] % v[1];
      });
  addOp(r, "Mod", E, broadcastInfer(2, 2, Out::First, A),
        [modInt, modC](const Node& n, const Inputs& in) {
          return n.attrs.getInt("fmod", 0) ? modC(n, in) : modInt(n, in);
        });
  addOp(r, "BitShift", E, broadcastInfer(2, 2, Out::First, Accepts::Unsigned),
        [](const Node& n, const Inputs& in) {
          bool left = n.attrs.getString("direction", "") == "LEFT";
          IntFn f = [left](const int64_t* v, size_t, bool&) -> int64_t {
            uint64_t a = uint64_t(v[0]), b = uint64_t(v[1]);
            if (b >= 64) return 0;
            return int64_t(left ? a << b : a >> b);
          };
          return naryKernel(2, 2, Out::First, Accepts::Unsigned, nullptr, f)(n, in);
        });
  // Variadic, broadcasting over all inputs.
  auto fold = [](auto op) {
    return [op](const double* v, size_t k, const Node&) {
      double acc = v[0];
      for (size_t j = 1; j < k; ++j) acc = op(acc, v[j]);
      return acc;
    };
  };
  auto foldI = [](auto op) {
    return [op](const int64_t* v, size_t k, bool&) {
      int64_t acc = v[0];
      for (size_t j = 1; j < k; ++j) acc = op(acc, v[j]);
      return acc;
    };
  };
  // Min/Max propagate NaN, as ORT's Eigen min/max do for floats.
  auto nanMin = [](double a, double b) {
    return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
  };
  auto nanMax = [](double a, double b) {
    return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
  };
  auto add = [](double a, double b) { return a + b; };
  addOp(r, "Min", E, broadcastInfer(1, kMaxVariadicInputs, Out::First, A),
        naryKernel(1, kMaxVariadicInputs, Out::First, A, fold(nanMin),
                   foldI([](int64_t a, int64_t b) { return std::min(a, b); })));
  addOp(r, "Max", E, broadcastInfer(1, kMaxVariadicInputs, Out::First, A),
        naryKernel(1, kMaxVariadicInputs, Out::First, A, fold(nanMax),
                   foldI([](int64_t a, int64_t b) { return std::max(a, b); })));
  addOp(r, "Sum", E, broadcastInfer(1, kMaxVariadicInputs, Out::First, Accepts::Float),
        naryKernel(1, kMaxVariadicInputs, Out::First, Accepts::Float, fold(add), nullptr));
  addOp(r, "Mean", E, broadcastInfer(1, kMaxVariadicInputs, Out::First, Accepts::Float),
        naryKernel(
            1, kMaxVariadicInputs, Out::First, Accepts::Float,
            [fold, add](const double* v, size_t k, const Node& n) {
              return fold(add)(v, k, n) / double(k);
            },
            nullptr));
}

void registerLogic(OpRegistry& r) {
  const auto E = PatternKind::ElemWise;
  const auto A = Accepts::Any;
  auto cmp = [&](const char* name, auto f) {
    addOp(r, name, E, broadcastInfer(2, 2, Out::Bool, A),
          binary(
              A, Out::Bool, [f](double a, double b) { return f(a, b); },
              [f](int64_t a, int64_t b, bool&) { return f(a, b); }));
  };
  cmp("Equal", [](auto a, auto b) { return a == b; });
  cmp("Less", [](auto a, auto b) { return a < b; });
  cmp("LessOrEqual", [](auto a, auto b) { return a <= b; });
  cmp("Greater", [](auto a, auto b) { return a > b; });
  cmp("GreaterOrEqual", [](auto a, auto b) { return a >= b; });
  auto logic = [&](const char* name, auto f) {
    addOp(r, name, E, broadcastInfer(2, 2, Out::Bool, Accepts::Bool),
          binary(
              Accepts::Bool, Out::Bool, [](double, double) { return 0.0; },
              [f](int64_t a, int64_t b, bool&) { return int64_t(f(a != 0, b != 0)); }));
  };
  logic("And", [](bool a, bool b) { return a && b; });
  logic("Or", [](bool a, bool b) { return a || b; });
  logic("Xor", [](bool a, bool b) { return a != b; });
  addUnary(r, "Not",
           naryKernel(1, 1, Out::Bool, Accepts::Bool, nullptr,
                      [](const int64_t* v, size_t, bool&) -> int64_t { return v[0] == 0; }),
           Accepts::Bool);
  addOp(r, "Where", E, inferWhere, whereKernel);
  addOp(r, "IsNaN", E, unaryInfer(Accepts::Float, Out::Bool), isNanKernel);
  addOp(r, "IsInf", E, unaryInfer(Accepts::Float, Out::Bool), isInfKernel);
}

// Unary ops that also take integers: the float and int forms of one function.
template <class F, class I>
EagerFn unaryAny(F f, I i) {
  FloatFn ff = [f](const double* v, size_t, const Node&) { return f(v[0]); };
  IntFn fi = [i](const int64_t* v, size_t, bool&) { return i(v[0]); };
  return naryKernel(1, 1, Out::First, Accepts::Any, ff, fi);
}

void registerUnary(OpRegistry& r) {
  using N = const Node&;
  addUnary(r, "Abs",
           unaryAny([](double x) { return std::fabs(x); },
                    [](int64_t x) { return x < 0 ? wrapSub(0, x) : x; }),
           Accepts::Any);
  addUnary(r, "Neg", unaryAny([](double x) { return -x; }, [](int64_t x) { return wrapSub(0, x); }),
           Accepts::Any);
  addUnary(r, "Sign",
           unaryAny([](double x) { return x > 0    ? 1.0
                                          : x < 0  ? -1.0
                                          : x == 0 ? 0.0
                                                   : x; },
                    [](int64_t x) { return int64_t(x > 0) - int64_t(x < 0); }),
           Accepts::Any);
  addUnary(
      r, "Relu",
      unaryAny([](double x) { return x > 0 ? x : 0.0; }, [](int64_t x) { return x > 0 ? x : 0; }),
      Accepts::Any);
  addUnary(r, "Sqrt", unaryFloat([](double x, N) { return std::sqrt(x); }));
  addUnary(r, "Reciprocal", unaryFloat([](double x, N) { return 1.0 / x; }));
  addUnary(r, "Exp", unaryFloat([](double x, N) { return std::exp(x); }));
  addUnary(r, "Log", unaryFloat([](double x, N) { return std::log(x); }));
  addUnary(r, "Erf", unaryFloat([](double x, N) { return std::erf(x); }));
  addUnary(r, "Sin", unaryFloat([](double x, N) { return std::sin(x); }));
  addUnary(r, "Cos", unaryFloat([](double x, N) { return std::cos(x); }));
  addUnary(r, "Tan", unaryFloat([](double x, N) { return std::tan(x); }));
  addUnary(r, "Atan", unaryFloat([](double x, N) { return std::atan(x); }));
  addUnary(r, "Floor", unaryFloat([](double x, N) { return std::floor(x); }));
  addUnary(r, "Ceil", unaryFloat([](double x, N) { return std::ceil(x); }));
  // Round halves to even, as ONNX specifies (std::nearbyint in the default mode).
  addUnary(r, "Round", unaryFloat([](double x, N) { return std::nearbyint(x); }));
  addUnary(r, "Tanh", unaryFloat([](double x, N) { return std::tanh(x); }));
  addUnary(r, "Sigmoid", unaryFloat([](double x, N) { return 1.0 / (1.0 + std::exp(-x)); }));
  addUnary(r, "LeakyRelu",
           unaryFloat([](double x, N n) { return x >= 0 ? x : x * attr(n, "alpha", 0.01); }));
  addUnary(r, "Elu", unaryFloat([](double x, N n) {
             return x >= 0 ? x : attr(n, "alpha", 1.0) * std::expm1(x);
           }));
  addUnary(r, "Selu", unaryFloat([](double x, N n) {
             double a = attr(n, "alpha", 1.67326319217681884765625);
             double g = attr(n, "gamma", 1.05070102214813232421875);
             return x > 0 ? g * x : g * a * std::expm1(x);
           }));
  addUnary(r, "Celu", unaryFloat([](double x, N n) {
             double a = attr(n, "alpha", 1.0);
             return std::max(0.0, x) + std::min(0.0, a * std::expm1(x / a));
           }));
  addUnary(r, "HardSigmoid", unaryFloat([](double x, N n) {
             return std::clamp(attr(n, "alpha", 0.2) * x + attr(n, "beta", 0.5), 0.0, 1.0);
           }));
  addUnary(r, "HardSwish",
           unaryFloat([](double x, N) { return x * std::clamp(x / 6.0 + 0.5, 0.0, 1.0); }));
  addUnary(r, "Softplus", unaryFloat([](double x, N) { return softplus(x); }));
  addUnary(r, "Softsign", unaryFloat([](double x, N) { return x / (1.0 + std::fabs(x)); }));
  addUnary(r, "ThresholdedRelu",
           unaryFloat([](double x, N n) { return x > attr(n, "alpha", 1.0) ? x : 0.0; }));
  addUnary(r, "Mish", unaryFloat([](double x, N) { return x * std::tanh(softplus(x)); }));
  addUnary(r, "Gelu", unaryFloat([](double x, N n) {
             if (n.attrs.getString("approximate", "none") == "tanh")
               return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
             return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
           }));
  addOp(r, "PRelu", PatternKind::ElemWise, inferPRelu,
        binary(
            Accepts::Float, Out::First, [](double x, double s) { return x >= 0 ? x : x * s; },
            [](int64_t x, int64_t, bool&) { return x; }));
  addOp(r, "Clip", PatternKind::ElemWise, inferClip, clipKernel);
  addOp(r, "Identity", PatternKind::ElemWise, inferIdentity, identityKernel);
  addOp(r, "Dropout", PatternKind::ElemWise, inferDropout, dropoutKernel);
}

}  // namespace

void registerElementwiseOps(OpRegistry& r) {
  registerArithmetic(r);
  registerLogic(r);
  registerUnary(r);
}

}  // namespace fuselens::ops
