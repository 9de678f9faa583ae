// Channel-blocked layout ops, domain "fuselens", written by the layout pass
// (passes/layout.cpp). A blocked tensor is NCHW<b>c: logical [N,C,H,W] stored
// as [N,ceil(C/b),H,W,b], channel c at block c/b, lane c%b.
//
//   ToNCHWc {block}                [N,C,H,W]   -> [N,Cb,H,W,b]  padding lanes are 0
//   FromNCHWc {block, channels}    [N,Cb,H,W,b] -> [N,channels,H,W]  padding dropped
//   ConvNCHWc {strides, pads, dilations, group}
//       x [N,Cb,H,W,b], w [Ob,Cg,KH,KW,b], bias [Ob,b] -> [N,Ob,OH,OW,b]
//       group 1: y[n,ob,oh,ow,l] = bias[ob,l] + sum_{ic<Cg,kh,kw}
//                                  x[n,ic/b,ih,iw,ic%b] * w[ob,ic,kh,kw,l]
//       depthwise (Cg = 1, group = C): y[n,ob,..,l] = bias + sum x[n,ob,ih,iw,l] * w[ob,0,kh,kw,l]
//       Input channels are not blocked in w: the conv reads only the real ones,
//       so whatever the padding lanes of x hold never reaches a real channel.
//   MaxPoolNCHWc / AveragePoolNCHWc {kernel_shape, strides, pads, dilations,
//       count_include_pad}: per-channel pools on blocked tensors, explicit pads.
//
// The kernels are the plain reference: the pools run the NCHW pool of
// conv.cpp on the unblocked tensor, so their meaning is MaxPool's by
// construction; the conv and the transforms are their own loops.
#include <cmath>

#include "core/ops/op_util.h"

namespace fuselens::ops {
namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

Status checkBlock(const Node& n, int64_t b) {
  if (b != 8 && b != 16) return nodeError(n, "block must be 8 or 16, got " + std::to_string(b));
  return Status::ok();
}

// ---- ToNCHWc / FromNCHWc ----

Types inferToBlocked(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 1, 1));
  const TensorType& x = c.inputTypes[0];
  int64_t b = c.node.attrs.getInt("block", 0);
  FL_RETURN_IF_ERROR(checkBlock(c.node, b));
  if (!x.rankKnown) return std::vector{unknownRank(x.dtype)};
  if (x.rank() != 4 || !x.shape[1].isStatic())
    return nodeError(c.node, "expects [N,C,H,W] with a static C, got " + x.str());
  TensorType o = x;
  o.shape = {x.shape[0], Dim::fixed(ceilDiv(x.shape[1].value, b)), x.shape[2], x.shape[3],
             Dim::fixed(b)};
  return std::vector{o};
}

Outputs toBlocked(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 1, 1));
  const TensorData& x = *in[0];
  int64_t b = n.attrs.getInt("block", 0);
  FL_RETURN_IF_ERROR(checkBlock(n, b));
  if (x.rank() != 4) return nodeError(n, "expects [N,C,H,W], got " + shapeStr(x.shape));
  int64_t N = x.shape[0], C = x.shape[1], HW = x.shape[2] * x.shape[3], CB = ceilDiv(C, b);
  TensorData o(x.dtype, {N, CB, x.shape[2], x.shape[3], b});  // zero-filled: padding lanes are 0
  for (int64_t nn = 0; nn < N; ++nn)
    for (int64_t cb = 0; cb < CB; ++cb)
      for (int64_t p = 0; p < HW; ++p)
        for (int64_t l = 0; l < b && cb * b + l < C; ++l)
          storeF(o, ((nn * CB + cb) * HW + p) * b + l, loadF(x, (nn * C + cb * b + l) * HW + p));
  return std::vector{std::move(o)};
}

Types inferFromBlocked(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 1, 1));
  const TensorType& x = c.inputTypes[0];
  int64_t b = c.node.attrs.getInt("block", 0), C = c.node.attrs.getInt("channels", 0);
  FL_RETURN_IF_ERROR(checkBlock(c.node, b));
  if (!x.rankKnown) return std::vector{unknownRank(x.dtype)};
  if (x.rank() != 5 || x.shape[4] != Dim::fixed(b) || C <= 0 ||
      (x.shape[1].isStatic() && x.shape[1].value != ceilDiv(C, b)))
    return nodeError(c.node, "expects [N," + std::to_string(ceilDiv(std::max<int64_t>(C, 1), b)) +
                                 ",H,W," + std::to_string(b) + "] for " + std::to_string(C) +
                                 " channels, got " + x.str());
  TensorType o = x;
  o.shape = {x.shape[0], Dim::fixed(C), x.shape[2], x.shape[3]};
  return std::vector{o};
}

Outputs fromBlocked(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 1, 1));
  const TensorData& x = *in[0];
  int64_t b = n.attrs.getInt("block", 0), C = n.attrs.getInt("channels", 0);
  FL_RETURN_IF_ERROR(checkBlock(n, b));
  if (x.rank() != 5 || x.shape[4] != b || C <= 0 || x.shape[1] != ceilDiv(C, b))
    return nodeError(n, "input " + shapeStr(x.shape) + " is not NCHW" + std::to_string(b) +
                            "c of " + std::to_string(C) + " channels");
  int64_t N = x.shape[0], CB = x.shape[1], HW = x.shape[2] * x.shape[3];
  TensorData o(x.dtype, {N, C, x.shape[2], x.shape[3]});
  for (int64_t nn = 0; nn < N; ++nn)
    for (int64_t ch = 0; ch < C; ++ch)
      for (int64_t p = 0; p < HW; ++p)
        storeF(o, (nn * C + ch) * HW + p, loadF(x, ((nn * CB + ch / b) * HW + p) * b + ch % b));
  return std::vector{std::move(o)};
}

// ---- geometry shared by the blocked conv and pools (explicit pads only) ----

struct Window {
  int64_t kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
  int64_t outH(int64_t h) const { return (h + pt + pb - ((kh - 1) * dh + 1)) / sh + 1; }
  int64_t outW(int64_t w) const { return (w + pl + pr - ((kw - 1) * dw + 1)) / sw + 1; }
};

Expected<Window> windowOf(const Node& n, int64_t kh, int64_t kw) {
  auto ints = [&](const char* name, size_t count, int64_t fill) {
    auto v = n.attrs.getInts(name);
    return v ? *v : std::vector<int64_t>(count, fill);
  };
  auto s = ints("strides", 2, 1), d = ints("dilations", 2, 1), p = ints("pads", 4, 0);
  if (s.size() != 2 || d.size() != 2 || p.size() != 4)
    return nodeError(n, "strides, dilations and pads must name 2 spatial dims");
  Window w{kh, kw, s[0], s[1], d[0], d[1], p[0], p[1], p[2], p[3]};
  if (w.sh <= 0 || w.sw <= 0 || w.dh <= 0 || w.dw <= 0 || kh <= 0 || kw <= 0 || w.pt < 0 ||
      w.pl < 0 || w.pb < 0 || w.pr < 0)
    return nodeError(n, "strides, dilations and kernel must be positive and pads non-negative");
  return w;
}

Types blockedWindowType(const InferContext& c, const TensorType& x, Dim blocks, const Window& w) {
  TensorType o = x;
  auto spatial = [&](const Dim& d, int64_t out) {
    return d.isStatic() ? Dim::fixed(out) : Dim::unknown();
  };
  int64_t h = x.shape[2].isStatic() ? x.shape[2].value : 0,
          wd = x.shape[3].isStatic() ? x.shape[3].value : 0;
  if ((x.shape[2].isStatic() && w.outH(h) <= 0) || (x.shape[3].isStatic() && w.outW(wd) <= 0))
    return nodeError(c.node, "the window is larger than the padded input " + x.str());
  o.shape = {x.shape[0], blocks, spatial(x.shape[2], w.outH(h)), spatial(x.shape[3], w.outW(wd)),
             x.shape[4]};
  return std::vector{o};
}

// ---- ConvNCHWc ----

Types inferConvBlocked(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 2, 3));
  const TensorType &x = c.inputTypes[0], &w = c.inputTypes[1];
  if (!x.rankKnown || !w.rankKnown || !w.isStatic()) return std::vector{unknownRank(x.dtype)};
  if (x.rank() != 5 || w.rank() != 5 || x.shape[4] != w.shape[4])
    return nodeError(
        c.node, "expects x [N,Cb,H,W,b] and w [Ob,Cg,KH,KW,b], got " + x.str() + " and " + w.str());
  auto win = windowOf(c.node, w.shape[2].value, w.shape[3].value);
  if (!win) return win.status();
  return blockedWindowType(c, x, w.shape[0], *win);
}

Outputs convBlocked(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 2, 3));
  const TensorData &x = *in[0], &w = *in[1];
  const TensorData* bias = inputAt(in, 2);
  if (x.dtype != DType::F32 || w.dtype != DType::F32 || (bias && bias->dtype != DType::F32))
    return nodeError(n, "ConvNCHWc runs on f32 only");
  if (x.rank() != 5 || w.rank() != 5 || x.shape[4] != w.shape[4])
    return nodeError(n, "expects x [N,Cb,H,W,b] and w [Ob,Cg,KH,KW,b], got " + shapeStr(x.shape) +
                            " and " + shapeStr(w.shape));
  const int64_t b = x.shape[4], N = x.shape[0], CB = x.shape[1], H = x.shape[2], W = x.shape[3];
  const int64_t OB = w.shape[0], CG = w.shape[1], KH = w.shape[2], KW = w.shape[3];
  FL_RETURN_IF_ERROR(checkBlock(n, b));
  int64_t group = n.attrs.getInt("group", 1);
  bool depthwise = group > 1;
  if (depthwise ? (CG != 1 || OB != CB || group > CB * b) : (group != 1 || CG > CB * b))
    return nodeError(n, "weights " + shapeStr(w.shape) + " (group " + std::to_string(group) +
                            ") do not fit input " + shapeStr(x.shape));
  if (bias && bias->shape != std::vector<int64_t>{OB, b})
    return nodeError(n,
                     "bias must have shape [" + std::to_string(OB) + "," + std::to_string(b) + "]");
  auto win = windowOf(n, KH, KW);
  if (!win) return win.status();
  const int64_t OH = win->outH(H), OW = win->outW(W);
  if (OH <= 0 || OW <= 0) return nodeError(n, "the kernel is larger than the padded input");
  TensorData o(DType::F32, {N, OB, OH, OW, b});
  const float *px = x.data<float>(), *pw = w.data<float>();
  float* po = o.data<float>();
  auto xAt = [&](int64_t nn, int64_t cb, int64_t ih, int64_t iw, int64_t l) {
    return double(px[(((nn * CB + cb) * H + ih) * W + iw) * b + l]);
  };
  for (int64_t nn = 0; nn < N; ++nn)
    for (int64_t ob = 0; ob < OB; ++ob)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow)
          for (int64_t l = 0; l < b; ++l) {
            double acc = bias ? double(bias->data<float>()[ob * b + l]) : 0.0;
            for (int64_t ic = 0; ic < CG; ++ic)
              for (int64_t kh = 0; kh < KH; ++kh) {
                int64_t ih = oh * win->sh - win->pt + kh * win->dh;
                if (ih < 0 || ih >= H) continue;
                for (int64_t kw = 0; kw < KW; ++kw) {
                  int64_t iw = ow * win->sw - win->pl + kw * win->dw;
                  if (iw < 0 || iw >= W) continue;
                  double wv = pw[(((ob * CG + ic) * KH + kh) * KW + kw) * b + l];
                  acc +=
                      wv * (depthwise ? xAt(nn, ob, ih, iw, l) : xAt(nn, ic / b, ih, iw, ic % b));
                }
              }
            po[(((nn * OB + ob) * OH + oh) * OW + ow) * b + l] = float(acc);
          }
  return std::vector{std::move(o)};
}

// ---- MaxPoolNCHWc / AveragePoolNCHWc ----

Types inferPoolBlocked(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 1, 1));
  const TensorType& x = c.inputTypes[0];
  if (!x.rankKnown) return std::vector{unknownRank(x.dtype)};
  auto k = c.node.attrs.getInts("kernel_shape");
  if (x.rank() != 5 || !k || k->size() != 2)
    return nodeError(c.node, "expects [N,Cb,H,W,b] and a 2-D kernel_shape, got " + x.str());
  auto win = windowOf(c.node, (*k)[0], (*k)[1]);
  if (!win) return win.status();
  return blockedWindowType(c, x, x.shape[1], *win);
}

// The NCHW pool of conv.cpp on the unblocked tensor, blocked back: the blocked
// pool means exactly what MaxPool / AveragePool mean.
template <bool isMax>
Outputs poolBlocked(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 1, 1));
  const TensorData& x = *in[0];
  if (x.rank() != 5) return nodeError(n, "expects [N,Cb,H,W,b], got " + shapeStr(x.shape));
  int64_t b = x.shape[4];
  FL_RETURN_IF_ERROR(checkBlock(n, b));
  Node plain = n;
  plain.op = isMax ? "MaxPool" : "AveragePool";
  plain.domain.clear();
  plain.outputs.resize(1);
  Node from = n, to = n;
  from.attrs = {};
  from.attrs.set("block", b);
  from.attrs.set("channels", x.shape[1] * b);  // padding lanes ride along, per channel
  to.attrs = {};
  to.attrs.set("block", b);
  auto unblocked = fromBlocked(from, in);
  if (!unblocked) return unblocked.status();
  const OpInfo* pool = OpRegistry::instance().find("", plain.op);
  auto pooled = pool->eager(plain, {&(*unblocked)[0]});
  if (!pooled) return pooled.status();
  return toBlocked(to, {&(*pooled)[0]});
}

}  // namespace

void registerLayoutOps(OpRegistry& r) {
  const auto I = PatternKind::Injective, F = PatternKind::OutEWiseFusable;
  r.add(OpInfo{"ToNCHWc", kFuseLensDomain, I, inferToBlocked, toBlocked});
  r.add(OpInfo{"FromNCHWc", kFuseLensDomain, I, inferFromBlocked, fromBlocked});
  r.add(OpInfo{"ConvNCHWc", kFuseLensDomain, F, inferConvBlocked, convBlocked});
  r.add(OpInfo{"MaxPoolNCHWc", kFuseLensDomain, F, inferPoolBlocked, poolBlocked<true>});
  r.add(OpInfo{"AveragePoolNCHWc", kFuseLensDomain, F, inferPoolBlocked, poolBlocked<false>});
}

}  // namespace fuselens::ops
