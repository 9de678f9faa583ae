// One register tile of the blocked window nest (blocked_window.h): T pixels x
// obPer output blocks of accumulators over the window and the input channels
// (or one chunk of them), then the epilogue through the sink or the partial
// sums back to the row buffer. compute_layout.cpp has the nest around it.
#include <cmath>
#include <utility>

#include "codegen/lower/blocked_window.h"
#include "codegen/lower/compute_conv_channels.h"

namespace fuselens::blocked {

// One tile of `width` output pixels of row (n, ob, oh) starting at ow0;
// `guardW`: some of its taps fall in the W padding.
StmtRef BlockedWindow::tileNest(ExprRef ow0, int64_t width, bool guardW) {
  LoopFunc& fn = kb_.func();
  BufferId accId = fn.addBuffer("acc" + std::to_string(fn.buffers.size()), BufferKind::Local,
                                DType::F32, {obPer_, width, b_});
  const double fill = kind_ == Kind::Max ? -INFINITY : 0.0;
  bool counted =
      kind_ == Kind::Avg && !includePad_ &&
      ((guardH_ && (h_.guardLo() || h_.guardHi())) || (guardW && (w_.guardLo() || w_.guardHi())));
  std::optional<BufferId> cntId;
  if (counted)
    cntId = fn.addBuffer("cnt" + std::to_string(fn.buffers.size()), BufferKind::Local, DType::F32,
                         {width});
  const Buffer& acc = fn.buffer(accId);
  // acc[o][t][l]: o < obPer_ output blocks (o_ is the current block's counter).
  auto accAt = [&](ExprRef t, ExprRef l) {
    if (obPer_ > 1) t = add(mul(o_, intConst(width)), t);
    return add(mul(t, intConst(b_)), l);
  };
  auto lanes = [&](const LaneBody& body) { return lanesNest(width, body); };
  std::vector<StmtRef> out;
  out.push_back(lanes([&](ExprRef t, ExprRef l) -> std::vector<StmtRef> {
    ExprRef v = floatConst(fill);  // a later chunk goes on from the row buffer
    if (part_) v = load(kb_.func().buffer(*part_), partAt(add(ow0, t), l));
    return {store(acc, accAt(t, l), v)};
  }));
  if (cntId) {
    Var t = kb_.newLoopVar();
    out.push_back(pinnedLoop(t, width, ForKind::Unrolled,
                             {store(fn.buffer(*cntId), varRef(t), floatConst(0))}));
  }
  // The reduction loops: input channel (conv), then the window.
  ReductionLoops loops(kb_);
  // The input channel as (block, lane) loops when it is whole blocks: x's
  // index is then affine in both counters, where ic / b and ic % b left the
  // backend rebuilding every broadcast's address in vector registers (magika's
  // 256-channel conv ran at a quarter of FMA peak). Same summation order.
  ExprRef ic = intConst(0), icBlock, icLane;
  if (part_) {
    icBlock = add(mul(varRef(chunkVar_), intConst(chunkBlocks_)), loops.var(chunkBlocks_));
    icLane = loops.var(b_);
    ic = add(mul(icBlock, intConst(b_)), icLane);
  } else if (kind_ == Kind::Conv && !depthwise_ && cg_ % b_ == 0) {
    icBlock = loops.var(cg_ / b_), icLane = loops.var(b_);
    ic = add(mul(icBlock, intConst(b_)), icLane);
  } else if (kind_ == Kind::Conv) {
    ic = loops.var(cg_);
    icBlock = divI(ic, b_), icLane = modI(ic, b_);
  }
  ExprRef kh = loops.var(h_.k), kw = loops.var(w_.k);
  ExprRef ih = add(sub(mul(oh_, intConst(h_.s)), intConst(h_.p)), mul(kh, intConst(h_.d)));
  auto position = [&](const Axis& a, ExprRef pos, ExprRef& ok) {
    if (a.guardLo()) ok = andCond(ok, compare(CmpOp::GE, pos, intConst(0)));
    if (a.guardHi()) ok = andCond(ok, compare(CmpOp::LT, pos, intConst(a.in)));
    return a.guardLo() || a.guardHi()
               ? binary(BinOp::Max, intConst(0), binary(BinOp::Min, pos, intConst(a.in - 1)))
               : pos;
  };
  auto windowAt = [&](ExprRef t, ExprRef& inside) {
    ExprRef iw =
        add(sub(mul(add(ow0, t), intConst(w_.s)), intConst(w_.p)), mul(kw, intConst(w_.d)));
    ExprRef hIdx = guardH_ ? position(h_, ih, inside) : ih;
    ExprRef wIdx = guardW ? position(w_, iw, inside) : iw;
    return std::make_pair(hIdx, wIdx);
  };
  std::vector<StmtRef> step = {lanes([&](ExprRef t, ExprRef l) -> std::vector<StmtRef> {
    ExprRef inside;
    auto [hIdx, wIdx] = windowAt(t, inside);
    if (transposed_) std::swap(hIdx, wIdx);
    std::vector<ExprRef> xi = {n0_, ob_, hIdx, wIdx, l};
    if (kind_ == Kind::Conv && !depthwise_) xi = {n0_, icBlock, hIdx, wIdx, icLane};
    ExprRef xv = kb_.valueAt(n_.inputs[0], Index::ofDims(x_, xi));
    if (inside) xv = select(inside, xv, floatConst(fill));
    ExprRef cur = load(acc, accAt(t, l)), next;
    if (kind_ == Kind::Conv) {
      ExprRef wv = kb_.valueAt(
          n_.inputs[1],
          Index::ofDims(w_shape_, transposed_ ? std::vector<ExprRef>{obAt(), ic, kw, kh, l}
                                              : std::vector<ExprRef>{obAt(), ic, kh, kw, l}));
      next = fma(xv, wv, cur);
    } else {
      next = kind_ == Kind::Max ? binary(BinOp::Max, cur, xv) : add(cur, xv);
    }
    return {store(acc, accAt(t, l), next)};
  })};
  if (cntId) {
    Var t = kb_.newLoopVar();
    ExprRef inside;
    windowAt(varRef(t), inside);
    const Buffer& cnt = fn.buffer(*cntId);
    ExprRef one = inside ? select(inside, floatConst(1), floatConst(0)) : floatConst(1);
    step.push_back(pinnedLoop(t, width, ForKind::Unrolled,
                              {store(cnt, varRef(t), add(load(cnt, varRef(t)), one))}));
  }
  for (StmtRef& s : loops.wrap(std::move(step))) out.push_back(std::move(s));
  // The results, through the sink (a fused epilogue applies there), or the
  // partial sums back to the row buffer until the row's last chunk.
  out.push_back(lanes([&](ExprRef t, ExprRef l) -> std::vector<StmtRef> {
    ExprRef v = load(acc, accAt(t, l));
    if (part_) return {store(kb_.func().buffer(*part_), partAt(add(ow0, t), l), v)};
    if (kind_ == Kind::Avg)
      v = cntId ? div(v, binary(BinOp::Max, load(fn.buffer(*cntId), t), floatConst(1)))
                : mul(v, floatConst(1.0 / double(h_.k * w_.k)));
    return results(v, add(ow0, t), l);
  }));
  StmtRef all = seq(std::move(out));
  if (cntId) all = allocate(fn.buffer(*cntId), {all});
  return allocate(fn.buffer(accId), {all});
}

// for o < obPer_ (unrolled): for t < width (unrolled): for l < b (vectorized): body(t, l)
StmtRef BlockedWindow::lanesNest(int64_t width, const LaneBody& body) {
  Var o = kb_.newLoopVar(), t = kb_.newLoopVar(), l = kb_.newLoopVar();
  o_ = obPer_ > 1 ? varRef(o) : intConst(0);
  StmtRef nest = pinnedLoop(t, width, ForKind::Unrolled,
                            {pinnedLoop(l, b_, ForKind::Vectorized, body(varRef(t), varRef(l)))});
  return obPer_ > 1 ? pinnedLoop(o, obPer_, ForKind::Unrolled, {nest}) : nest;
}

// The row buffer's element for pixel ow of the current block (o_), lane l.
ExprRef BlockedWindow::partAt(ExprRef ow, ExprRef l) const {
  return add(mul(add(mul(ow, intConst(obPer_)), o_), intConst(b_)), l);
}

// Output pixel ow (along the tiles), lane l: bias, then the sink.
std::vector<StmtRef> BlockedWindow::results(ExprRef v, ExprRef ow, ExprRef l) {
  if (hasBias_) v = add(v, kb_.valueAt(n_.inputs[2], Index::ofDims({y_[1], b_}, {obAt(), l})));
  ExprRef oh = oh_;
  if (transposed_) std::swap(oh, ow);
  return (*sink_)(Index::ofDims(y_, {n0_, obAt(), oh, ow, l}), v);
}

}  // namespace fuselens::blocked
