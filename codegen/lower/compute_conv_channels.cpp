// Conv vectorized over output channels. The direct nest (compute_conv.cpp)
// vectorizes along the output row, which leaves most lanes idle when rows are
// short: silero's STFT-as-conv and its Conv1d stack have rows of 1-4
// positions, and ran at 2-3 GFLOP/s. Here the lanes are L output channels
// (one vector), and a register tile holds P channel blocks x T positions:
//
//   for r < N * groups * rows:                  // parallel: (n, block group, row)
//     for each tile [ow0, ow0 + T) of the row:
//       float acc[P][T][L] = 0;                  // P*T vectors
//       for c < C_in, k... < K:                  // the window, serial
//         for p < P, t < T:                      // unrolled
//           for l < L:                           // vectorized: one vector
//             acc[p][t][l] = fma(x[n, c, pos(t, k)],          // one broadcast
//                                wp[m0 + p*L, c, k, l], acc[p][t][l]);
//       for p, t, l: y[n, m0 + p*L + l, row, ow0 + t] = epilogue(acc + b[...]);
//
// wp is the weight packed at compile time so that a block's L channels of
// one tap are contiguous; the last M % L channels form a narrower block. A
// position in the padding reads 0: its index is clamped and a select drops it.
#include "codegen/lower/compute_conv_channels.h"

#include <algorithm>
#include <functional>
#include <string>

#include "codegen/target.h"

namespace fuselens {

ExprRef andCond(ExprRef a, ExprRef b) {
  if (!a) return b;
  if (!b) return a;
  return select(a, b, a);
}

ExprRef ReductionLoops::var(int64_t extent) {
  if (extent == 1) return intConst(0);
  Var v = kb_.newLoopVar();
  loops_.emplace_back(v, extent);
  return varRef(v);
}

std::vector<StmtRef> ReductionLoops::wrap(std::vector<StmtRef> body) const {
  for (size_t i = loops_.size(); i-- > 0;)
    body = {pinnedLoop(loops_[i].first, loops_[i].second, ForKind::Serial, std::move(body))};
  return body;
}

namespace {

class ChannelTiledConv {
 public:
  ChannelTiledConv(KernelBuilder& kb, const Node& n, std::vector<int64_t> x, std::vector<int64_t> w,
                   std::vector<int64_t> y, std::vector<ConvAxis> axes, bool hasBias)
      : kb_(kb),
        n_(n),
        x_(std::move(x)),
        w_(std::move(w)),
        y_(std::move(y)),
        axes_(std::move(axes)),
        hasBias_(hasBias) {}

  std::vector<StmtRef> build(const KernelBuilder::Sink& sink) {
    sink_ = &sink;
    const int64_t M = y_[1];
    lanes_ = std::max(4, codegenTarget().vectorLanes());
    cg_ = w_[1];
    for (size_t i = 2; i < w_.size(); ++i) taps_ *= w_[i];
    for (size_t i = 2; i + 1 < y_.size(); ++i) rows_ *= y_[i];
    // An FMA has ~4 cycles of latency on 2 ports: 8+ independent accumulators
    // keep it busy; AVX-512's 32 registers hold 14 and the operands, AVX2's 16 hold 8.
    const bool wide = codegenTarget().vectorBits >= 512;
    const int64_t budget = wide ? 14 : 8;
    tile_ = std::min(y_.back(), wide ? int64_t(7) : int64_t(4));
    const int64_t full = M / lanes_, rem = M % lanes_;
    int64_t per = std::clamp<int64_t>(budget / tile_, 1, 4);
    per = std::max<int64_t>(1, std::min(per, full));
    pack(full, rem);
    const int64_t groups = full / per, left = full % per;
    std::vector<StmtRef> out;
    if (groups > 0) out.push_back(rowLoop(groups, per, lanes_, 0));
    if (left > 0) out.push_back(rowLoop(1, left, lanes_, groups * per * lanes_));
    if (rem > 0) out.push_back(rowLoop(1, 1, rem, full * lanes_));
    return out;
  }

 private:
  // wp: block by block (L channels, the last M % L), per block [c][taps][lanes].
  void pack(int64_t full, int64_t rem) {
    auto w = kb_.constantOf(n_.inputs[1]);
    const float* d = w->data<float>();
    const int64_t M = y_[1], per = cg_ * taps_;
    auto data = std::make_shared<TensorData>(DType::F32, std::vector<int64_t>{M * per});
    float* o = data->data<float>();
    for (int64_t b = 0; b < full + (rem > 0 ? 1 : 0); ++b) {
      const int64_t m0 = b * lanes_, width = b < full ? lanes_ : rem;
      for (int64_t i = 0; i < per; ++i)
        for (int64_t l = 0; l < width; ++l) o[m0 * per + i * width + l] = d[(m0 + l) * per + i];
    }
    packed_ = kb_.addPrepacked("packed_" + kb_.graph().value(n_.inputs[1]).name.substr(0, 24) +
                                   "_" + std::to_string(kb_.func().buffers.size()),
                               data);
  }

  // One loop over (n, block group g < count, row): blocks of `width` channels,
  // `per` of them a tile, the first at channel base + g * per * width.
  StmtRef rowLoop(int64_t count, int64_t per, int64_t width, int64_t base) {
    Var rv = kb_.newLoopVar();
    ExprRef r = varRef(rv);
    const int64_t N = y_[0];
    ExprRef nIdx = N == 1 ? intConst(0) : div(r, intConst(count * rows_));
    ExprRef g =
        count == 1 ? intConst(0) : binary(BinOp::Mod, div(r, intConst(rows_)), intConst(count));
    ExprRef m0 = add(intConst(base), mul(g, intConst(per * width)));
    // The row's outer spatial indices, delinearized.
    std::vector<ExprRef> outer;
    ExprRef row = rows_ == 1 ? intConst(0) : binary(BinOp::Mod, r, intConst(rows_));
    int64_t stride = rows_;
    for (size_t i = 2; i + 1 < y_.size(); ++i) {
      stride /= y_[i];
      outer.push_back(binary(BinOp::Mod, div(row, intConst(stride)), intConst(y_[i])));
    }
    const int64_t ow = y_.back(), fullTiles = ow / tile_, tail = ow % tile_;
    std::vector<StmtRef> body;
    if (fullTiles == 1) {
      body.push_back(tileNest(nIdx, outer, m0, per, width, intConst(0), tile_));
    } else if (fullTiles > 1) {
      Var t = kb_.newLoopVar();
      body.push_back(pinnedLoop(
          t, fullTiles, ForKind::Serial,
          {tileNest(nIdx, outer, m0, per, width, mul(varRef(t), intConst(tile_)), tile_)}));
    }
    if (tail > 0)
      body.push_back(tileNest(nIdx, outer, m0, per, width, intConst(fullTiles * tile_), tail));
    const Schedule& s = kb_.schedule();
    const int64_t extent = N * count * rows_;
    const int64_t work = extent * per * width * ow * cg_ * taps_;
    const bool parallel = s.parallelOuter && work >= s.parallelMinWork && extent > 1;
    return pinnedLoop(rv, extent, parallel ? ForKind::Parallel : ForKind::Serial, body);
  }

  // for p < per (unrolled): for t < T (unrolled): for l < width (vectorized): body(p, t, l)
  StmtRef lanes(int64_t per, int64_t T, int64_t width,
                const std::function<std::vector<StmtRef>(ExprRef, ExprRef, ExprRef)>& body) {
    Var p = kb_.newLoopVar(), t = kb_.newLoopVar(), l = kb_.newLoopVar();
    ExprRef pe = per == 1 ? intConst(0) : varRef(p);
    StmtRef nest =
        pinnedLoop(t, T, ForKind::Unrolled,
                   {pinnedLoop(l, width, ForKind::Vectorized, body(pe, varRef(t), varRef(l)))});
    return per == 1 ? nest : pinnedLoop(p, per, ForKind::Unrolled, {nest});
  }

  StmtRef tileNest(ExprRef nIdx, const std::vector<ExprRef>& outer, ExprRef m0, int64_t per,
                   int64_t width, ExprRef ow0, int64_t T) {
    LoopFunc& fn = kb_.func();
    BufferId accId = fn.addBuffer("acc" + std::to_string(fn.buffers.size()), BufferKind::Local,
                                  DType::F32, {per * T * width});
    const Buffer acc = fn.buffer(accId);
    auto accAt = [&](ExprRef p, ExprRef t, ExprRef l) {
      return add(mul(add(mul(p, intConst(T)), t), intConst(width)), l);
    };
    std::vector<StmtRef> out;
    out.push_back(lanes(per, T, width, [&](ExprRef p, ExprRef t, ExprRef l) {
      return std::vector<StmtRef>{store(acc, accAt(p, t, l), floatConst(0))};
    }));
    // The reduction loops: input channel, then one per kernel axis.
    ReductionLoops loops(kb_);
    ExprRef c = loops.var(cg_);
    std::vector<ExprRef> kk;
    for (const ConvAxis& a : axes_) kk.push_back(loops.var(a.k));
    ExprRef tap = intConst(0);  // flat tap index within the window
    for (size_t i = 0; i < axes_.size(); ++i) tap = add(mul(tap, intConst(axes_[i].k)), kk[i]);
    ExprRef wBase = add(mul(m0, intConst(cg_ * taps_)),
                        mul(add(mul(c, intConst(taps_)), tap), intConst(width)));
    const Buffer packed = fn.buffer(packed_);
    std::vector<StmtRef> step = {lanes(per, T, width, [&](ExprRef p, ExprRef t, ExprRef l) {
      std::vector<ExprRef> xi = {nIdx, c};
      ExprRef inside;
      for (size_t i = 0; i < axes_.size(); ++i) {
        const ConvAxis& a = axes_[i];
        ExprRef o = i + 1 == axes_.size() ? add(ow0, t) : outer[i];
        ExprRef pos = add(sub(mul(o, intConst(a.s)), intConst(a.pb)), mul(kk[i], intConst(a.d)));
        const bool lo = a.pb > 0, hi = (a.out - 1) * a.s - a.pb + (a.k - 1) * a.d >= a.in;
        if (lo) inside = andCond(inside, compare(CmpOp::GE, pos, intConst(0)));
        if (hi) inside = andCond(inside, compare(CmpOp::LT, pos, intConst(a.in)));
        if (lo || hi)
          pos = binary(BinOp::Max, intConst(0), binary(BinOp::Min, pos, intConst(a.in - 1)));
        xi.push_back(pos);
      }
      ExprRef xv = kb_.valueAt(n_.inputs[0], Index::ofDims(x_, xi));
      if (inside) xv = select(inside, xv, floatConst(0));
      ExprRef wv = load(packed, add(add(wBase, mul(p, intConst(cg_ * taps_ * width))), l));
      ExprRef at = accAt(p, t, l);
      return std::vector<StmtRef>{store(acc, at, fma(xv, wv, load(acc, at)))};
    })};
    for (StmtRef& s : loops.wrap(std::move(step))) out.push_back(std::move(s));
    // The results, through the sink (a fused epilogue applies there).
    out.push_back(lanes(per, T, width, [&](ExprRef p, ExprRef t, ExprRef l) {
      ExprRef m = add(add(m0, mul(p, intConst(width))), l);
      ExprRef v = load(acc, accAt(p, t, l));
      if (hasBias_) v = add(v, kb_.valueAt(n_.inputs[2], Index::ofDims({y_[1]}, {m})));
      std::vector<ExprRef> yi = {nIdx, m};
      for (const ExprRef& e : outer) yi.push_back(e);
      yi.push_back(add(ow0, t));
      return (*sink_)(Index::ofDims(y_, yi), v);
    }));
    return allocate(acc, {seq(std::move(out))});
  }

  KernelBuilder& kb_;
  const Node& n_;
  std::vector<int64_t> x_, w_, y_;
  std::vector<ConvAxis> axes_;
  bool hasBias_;
  const KernelBuilder::Sink* sink_ = nullptr;
  int64_t lanes_ = 16, cg_ = 1, taps_ = 1, rows_ = 1, tile_ = 1;
  BufferId packed_;
};

}  // namespace

bool channelTilesFit(const std::vector<int64_t>& y) {
  const int64_t lanes = std::max(4, codegenTarget().vectorLanes());
  return y.size() >= 3 && y.back() < lanes && 2 * y[1] >= lanes;
}

std::vector<StmtRef> lowerConvChannelTiled(KernelBuilder& kb, const Node& n,
                                           const std::vector<int64_t>& x,
                                           const std::vector<int64_t>& w,
                                           const std::vector<int64_t>& y,
                                           const std::vector<ConvAxis>& axes, bool hasBias,
                                           const KernelBuilder::Sink& sink) {
  return ChannelTiledConv(kb, n, x, w, y, axes, hasBias).build(sink);
}

}  // namespace fuselens
