// Compute definition of ConvTranspose (1 to 3 spatial dims; groups, strides,
// pads, dilations, output_padding, output_shape, auto_pad; optional bias),
// written output-centric so the result streams into a Sink like Conv's:
//
//   y[n, m, o] = b[m] + sum over c in m's group, kernel positions k of
//                x[n, c, i] * w[c, m mod M/g, k]   where i * s = o + pb - k * d
//
// A kernel position contributes only when o + pb - k*d is a non-negative
// multiple of the stride whose quotient is inside the input; the read is
// clamped and the term selected away otherwise. Padding follows the ONNX
// Runtime split when output_shape or SAME auto_pad fix the total.
#include "codegen/lower/compute_conv_transpose.h"

namespace fuselens {
namespace {

struct Axis {
  int64_t in, k, s, d, pb, out;
};

std::vector<int64_t> intsOr(const Node& n, const char* name, size_t count, int64_t dflt) {
  auto v = n.attrs.getInts(name);
  return v ? *v : std::vector<int64_t>(count, dflt);
}

std::optional<std::vector<Axis>> geometry(KernelBuilder& kb, const Node& n,
                                          const std::vector<int64_t>& x,
                                          const std::vector<int64_t>& w) {
  size_t r = x.size() - 2;
  auto s = intsOr(n, "strides", r, 1), d = intsOr(n, "dilations", r, 1);
  auto p = intsOr(n, "pads", 2 * r, 0), op = intsOr(n, "output_padding", r, 0);
  auto outShape = n.attrs.getInts("output_shape");
  std::string autoPad = n.attrs.getString("auto_pad", "NOTSET");
  if (s.size() != r || d.size() != r || p.size() != 2 * r || op.size() != r ||
      (outShape && outShape->size() != r && outShape->size() != r + 2)) {
    kb.fail(Status::error("strides, dilations, pads, output_padding or output_shape do not match " +
                              std::to_string(r) + " spatial dims",
                          nodePlace(n)));
    return std::nullopt;
  }
  std::vector<Axis> axes(r);
  for (size_t i = 0; i < r; ++i) {
    Axis& a = axes[i];
    a = {x[i + 2], w[i + 2], s[i], d[i], p[i], 0};
    if (a.s <= 0 || a.d <= 0) {
      kb.fail(Status::error("strides and dilations must be positive", nodePlace(n)));
      return std::nullopt;
    }
    int64_t full = a.s * (a.in - 1) + op[i] + (a.k - 1) * a.d + 1;
    if (outShape || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      a.out = outShape ? (*outShape)[outShape->size() - r + i] : a.in * a.s;
      int64_t total = full - a.out;
      a.pb = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
    } else {
      a.out = full - p[i] - p[i + r];
    }
  }
  return axes;
}

}  // namespace

std::vector<StmtRef> lowerConvTranspose(KernelBuilder& kb, const Node& n,
                                        const KernelBuilder::Sink& sink) {
  std::vector<int64_t> x = kb.shapeOf(n.inputs[0]), w = kb.shapeOf(n.inputs[1]);
  int64_t group = n.attrs.getInt("group", 1);
  if (x.size() < 3 || w.size() != x.size() || group <= 0 || x[1] != w[0] || x[1] % group != 0) {
    kb.fail(Status::error("input " + formatShape(x) + " and weight " + formatShape(w) +
                              " do not fit a ConvTranspose with group " + std::to_string(group),
                          nodePlace(n)));
    return {};
  }
  auto axes = geometry(kb, n, x, w);
  if (!axes) return {};
  int64_t cg = x[1] / group, mg = w[1];
  std::vector<int64_t> out = {x[0], mg * group};
  for (const Axis& a : *axes) out.push_back(a.out);
  if (kb.shapeOf(n.outputs[0]) != out) {
    kb.fail(Status::error("output shape " + formatShape(kb.shapeOf(n.outputs[0])) +
                              " differs from the computed " + formatShape(out),
                          nodePlace(n)));
    return {};
  }
  bool hasBias = n.inputs.size() > 2 && n.inputs[2].valid();
  StrideTapsShape taps{x, {}, out[1], group, true};
  for (const Axis& a : *axes) {
    taps.strides.push_back(a.s);
    taps.nonOverlapping =
        taps.nonOverlapping && a.k == a.s && a.d == 1 && a.pb == 0 && a.out == a.in * a.s;
  }
  if (auto tiled = lowerConvTransposeByTaps(kb, n, taps, sink)) return std::move(*tiled);
  return kb.loopNest(out, [&](const Index& at) -> std::vector<StmtRef> {
    std::vector<ExprRef> od = at.dimExprs();
    Var acc = kb.newLocal("acc");
    Var c = kb.newLoopVar();
    ExprRef m = od[1];
    ExprRef cIn = add(mul(div(m, intConst(mg)), intConst(cg)), varRef(c));
    std::vector<ExprRef> xd = {od[0], cIn}, wd = {cIn, binary(BinOp::Mod, m, intConst(mg))};
    ExprRef valid;
    std::vector<std::pair<Var, int64_t>> loops;
    for (size_t i = 0; i < axes->size(); ++i) {
      const Axis& a = (*axes)[i];
      ExprRef q, ok, tap;
      if (a.d == 1 && a.k <= a.s) {
        // At most one kernel position reaches o: k = (o + pb) mod s, when it
        // is inside the kernel. Computing it saves the loop over k, where all
        // but one position in s would be selected away (PP-OCR's 2x2 stride-2
        // upsampling spent three quarters of its time so).
        ExprRef shifted = add(od[i + 2], intConst(a.pb + a.s * a.in));
        tap = binary(BinOp::Mod, shifted, intConst(a.s));
        q = sub(div(shifted, intConst(a.s)), intConst(a.in));
        ok = compare(CmpOp::LT, tap, intConst(a.k));
        ok = select(ok, compare(CmpOp::GE, q, intConst(0)), ok);
      } else {
        Var k = kb.newLoopVar();
        loops.emplace_back(k, a.k);
        tap = varRef(k);
        ExprRef t = sub(add(od[i + 2], intConst(a.pb)), mul(varRef(k), intConst(a.d)));
        // t + s*in keeps the operand of % and / non-negative; the quotient is then in + i.
        ExprRef shifted = add(t, intConst(a.s * a.in));
        q = sub(div(shifted, intConst(a.s)), intConst(a.in));
        ok = compare(CmpOp::EQ, binary(BinOp::Mod, shifted, intConst(a.s)), intConst(0));
        ok = select(ok, compare(CmpOp::GE, t, intConst(0)), ok);
      }
      ok = select(ok, compare(CmpOp::LT, q, intConst(a.in)), ok);
      valid = valid ? select(valid, ok, valid) : ok;
      xd.push_back(binary(BinOp::Max, intConst(0), binary(BinOp::Min, q, intConst(a.in - 1))));
      wd.push_back(binary(BinOp::Min, tap, intConst(a.k - 1)));  // in range when selected away
    }
    ExprRef term = mul(kb.valueAt(n.inputs[0], Index::ofDims(x, xd)),
                       kb.valueAt(n.inputs[1], Index::ofDims(w, wd)));
    std::vector<StmtRef> inner = {
        assign(acc, add(varRef(acc), select(valid, term, floatConst(0))))};
    for (size_t i = loops.size(); i-- > 0;)
      inner = {forLoop(loops[i].first, loops[i].second, inner)};
    std::vector<StmtRef> body = {let(acc, floatConst(0)), forLoop(c, cg, inner)};
    ExprRef y = varRef(acc);
    if (hasBias) y = add(y, kb.valueAt(n.inputs[2], Index::ofFlat({out[1]}, m)));
    for (StmtRef& s : sink(at, y)) body.push_back(std::move(s));
    return body;
  });
}

}  // namespace fuselens
