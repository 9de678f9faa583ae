// Compute definitions of the NCHW<b>c layout ops (core/ops/layout.cpp says
// what they mean): ToNCHWc / FromNCHWc as index maps, so they fuse into their
// neighbours, and ConvNCHWc / MaxPoolNCHWc / AveragePoolNCHWc as a blocked
// direct window nest vectorized over the b lanes of one channel block:
//
//   for r < N * OB * OH:                                // parallel: (n, ob, oh)
//     for each W tile [ow0, ow0 + T):
//       float acc[T][b] = 0;                            // registers: T vectors
//       for ic < Cg, kh < KH, kw < KW:
//         for t < T:                                    // unrolled
//           for l < b:                                  // vectorized: one vector
//             acc[t][l] = fma(x[n, ic/b, ih, iw(t), ic%b],   // one broadcast
//                             w[ob, ic, kh, kw, l], acc[t][l]);
//       for t < T: for l < b:
//         y[n, ob, oh, ow0+t, l] = epilogue(acc[t][l] + bias[ob, l]);
//
// Depthwise convs and the pools read x[n, ob, ih, iw, l] (one vector) instead
// of a broadcast. A window position in the padding reads 0 (conv), -inf (max)
// or is not counted (average); its index is clamped and a select drops it.
// Those checks cost more than the FMA they guard, so only the border is
// checked: the rows whose window stays inside H run as one parallel loop and
// the border rows as another, and within a row only the W tiles that reach
// the padding check W.
//
// A column (W of 1-3 pixels under a long H, as magika's k x 1 convs over a
// 512-long sequence) would give W tiles of one pixel: one or two accumulator
// chains, bound by the FMA's latency at a quarter of its throughput. Such a
// nest runs transposed: the same loops with the roles of H and W swapped, so
// the tiles run along H (x[n, c, h + t, 0, :] are as contiguous as W's).
//
// A row of many tiles whose weight slice is past L1 (magika's 256-channel
// conv) runs its reduction in input-channel chunks that fit L1, every tile
// per chunk, keeping partial sums in a row buffer (chooseChunk says when):
//
//   for r: part[OW][obPer][b] = 0
//     for chunk: for each tile: acc = part[tile]; for ic in chunk, kh, kw: ...; part[tile] = acc
//     for ow: y[..., ow, :] = epilogue(part[ow] + bias)
//
// The nest's class is in blocked_window.h, one register tile's nest in
// blocked_window_tile.cpp.
#include <cmath>
#include <utility>

#include "codegen/lower/blocked_window.h"
#include "codegen/lower/compute_conv_channels.h"
#include "codegen/target.h"

namespace fuselens {
namespace blocked {

std::vector<StmtRef> BlockedWindow::build(const KernelBuilder::Sink& sink) {
  if (!resolve()) return {};
  if (kind_ == Kind::Conv && convAsGemmNest(kb_.schedule())) return gemmNest(sink);
  if (winogradFits()) return winogradNest(sink);
  sink_ = &sink;
  const int64_t N = y_[0], OB = y_[1], OH = h_.out, OW = w_.out;
  // T pixels x obPer output blocks of accumulators stay in registers, leaving
  // room for x and w. An FMA takes ~4 cycles on 2 ports, so at least 8
  // independent accumulators keep it busy. AVX2 (16 ymm): 8 for b=8, 6
  // zmm-sized (12 ymm) for b=16, two blocks at once when the rows are too
  // short for that. AVX-512 (32 registers): 7 pixels x 2 blocks when the
  // block count is even: each broadcast x then feeds two FMAs, 9 loads per 14
  // FMAs instead of 15 per 14 with one block; measured on the bench CNN
  // (1 thread) 7x2 ran its 3x3 convs 10-20% faster than 14x1, and tiles of 28
  // accumulators (14x2, 7x4) slower than both (spills). A short reduction
  // (the 3-channel stem: 27 taps) keeps 14x1, which ran it 25% faster.
  // A schedule's ConvTiling (the tuner's candidates) overrides this rule.
  const bool wide = codegenTarget().vectorBits >= 512;
  const int64_t budget = wide ? 14 : b_ == 8 ? 8 : 6;
  // A shape-stable nest (symbolic kernels) keeps the full tile whatever the
  // row's width: the row is then whole tiles and a one-pixel tail loop.
  const bool stable = kb_.schedule().shapeStable;
  int64_t tile = stable ? budget : std::min<int64_t>(OW, budget);
  const bool pairable = kind_ == Kind::Conv && !depthwise_ && OB % 2 == 0;
  obPer_ = pairable && 2 * tile <= budget ? 2 : 1;
  // Blocks of half a register (b=8 on AVX-512: ymm, 32 of them) leave room
  // for 4 (or 3) blocks x 6 pixels: 24 accumulators, the block's weight
  // vectors and one broadcast, each broadcast feeding 4 FMAs. Measured at
  // 1 thread against 7x2: PP-OCRv4 rec 15.8 vs 17.5 ms, det 2.5 vs 2.7 ms.
  // Rows whose reduction runs in chunks (below) keep 7x2: 4 blocks would
  // quarter each chunk's channels, and magika's conv ran 7.5 ms against 6.3.
  const bool halfWidth = wide && !stable && 2 * b_ <= codegenTarget().vectorLanes();
  const bool blockedTile = wide && kind_ == Kind::Conv && !depthwise_ && cg_ * h_.k * w_.k >= 32;
  auto pick = [&](int64_t per, int64_t maxPixels) {
    // Equal tiles of at most maxPixels (a 10-wide row: 5 + 5, not 7 + 3).
    const int64_t tiles = (OW + maxPixels - 1) / maxPixels;
    tile = stable ? maxPixels : (OW + tiles - 1) / tiles;
    obPer_ = per;
  };
  if (blockedTile && halfWidth && (OB % 4 == 0 || OB % 3 == 0)) {
    pick(OB % 4 == 0 ? 4 : 3, 6);
    chooseChunk(OW / tile + (OW % tile > 0));
    if (chunkBlocks_ > 0 && pairable) pick(2, 7);
  } else if (blockedTile && pairable) {
    pick(2, 7);
  }
  if (kind_ == Kind::Conv && !stable) scheduledTile(kb_.schedule().conv, OB, OW, wide, tile);
  const int64_t OBl = OB / obPer_;
  const int64_t full = OW / tile, tail = OW % tile;
  if (!stable) chooseChunk(full + (tail > 0));
  // Only tiles whose window reaches the left or right padding check the W
  // bounds per tap (clamp, compare, select); the interior tiles, usually all
  // but the first and last, read x unguarded.
  auto needsW = [&](int64_t ow0, int64_t width) {
    return ow0 * w_.s - w_.p < 0 || (ow0 + width - 1) * w_.s - w_.p + (w_.k - 1) * w_.d >= w_.in;
  };
  int64_t lo = 0, hi = full;
  while (lo < full && needsW(lo * tile, tile)) ++lo;
  while (hi > lo && needsW((hi - 1) * tile, tile)) --hi;
  // Likewise rows: output rows [hLo, hHi) never reach the H padding. They run
  // as one parallel loop without H checks, the border rows as another.
  const int64_t top = h_.p > 0 ? (h_.p + h_.s - 1) / h_.s : 0;
  const int64_t last = h_.in - 1 + h_.p - (h_.k - 1) * h_.d;  // largest oh*s reaching no pad
  const int64_t hLo = std::min(OH, top);
  const int64_t hHi = std::max(hLo, last < 0 ? 0 : std::min(OH, last / h_.s + 1));
  const Schedule& s = kb_.schedule();
  const int64_t work = N * OB * OH * OW * b_ * cg_ * h_.k * w_.k;
  // One loop over (n, ob, row j < rows), output row ohOf(j).
  auto rowLoop = [&](int64_t rows, bool guardH, const std::function<ExprRef(ExprRef)>& ohOf) {
    Var rv = kb_.newLoopVar();
    ExprRef r = varRef(rv);
    n0_ = divI(r, OBl * rows), oh_ = ohOf(modI(r, rows));
    ob_ = modI(divI(r, rows), OBl);
    if (obPer_ > 1) ob_ = mul(ob_, intConst(obPer_));
    guardH_ = guardH;
    const bool parallel = s.parallelOuter && work >= s.parallelMinWork && N * OBl * rows > 1;
    const ForKind rowKind = parallel ? ForKind::Parallel : ForKind::Serial;
    std::vector<StmtRef> body;
    if (chunkBlocks_ > 0) {
      LoopFunc& fn = kb_.func();
      part_ = fn.addBuffer("part" + std::to_string(fn.buffers.size()), BufferKind::Local,
                           DType::F32, {OW, obPer_, b_});
      chunkVar_ = kb_.newLoopVar();
    }
    if (stable) {  // every tile guarded: which reach the padding depends on the width
      Var t = kb_.newLoopVar(), u = kb_.newLoopVar();
      body.push_back(pinnedLoop(t, full, ForKind::Serial,
                                {tileNest(mul(varRef(t), intConst(tile)), tile, true)}));
      body.push_back(pinnedLoop(u, tail, ForKind::Serial,
                                {tileNest(add(intConst(full * tile), varRef(u)), 1, true)}));
      return pinnedLoop(rv, N * OBl * rows, rowKind, body);
    }
    for (int64_t j = 0; j < lo; ++j) body.push_back(tileNest(intConst(j * tile), tile, true));
    if (hi - lo == 1) {
      body.push_back(tileNest(intConst(lo * tile), tile, false));
    } else if (hi - lo > 1) {
      Var t = kb_.newLoopVar();
      ExprRef ow0 = add(mul(varRef(t), intConst(tile)), intConst(lo * tile));
      body.push_back(pinnedLoop(t, hi - lo, ForKind::Serial, {tileNest(ow0, tile, false)}));
    }
    for (int64_t j = hi; j < full; ++j) body.push_back(tileNest(intConst(j * tile), tile, true));
    if (tail > 0) body.push_back(tileNest(intConst(full * tile), tail, needsW(full * tile, tail)));
    if (part_) body = chunkedRow(std::move(body), OW);
    return pinnedLoop(rv, N * OBl * rows, rowKind, body);
  };
  std::vector<StmtRef> out;
  const int64_t inner = hHi - hLo, border = OH - inner;
  if (inner > 0)
    out.push_back(rowLoop(inner, false, [&](ExprRef j) { return add(j, intConst(hLo)); }));
  if (border > 0)
    out.push_back(rowLoop(border, true, [&](ExprRef j) {
      if (inner == 0) return j;
      return select(compare(CmpOp::LT, j, intConst(hLo)), j, add(j, intConst(inner)));
    }));
  return out;
}

bool BlockedWindow::fail(const std::string& msg) {
  kb_.fail(Status::error(msg, nodePlace(n_)));
  return false;
}

// The tile a schedule sets (the tuner's ConvTiling candidates) replaces the
// rule's, made valid rather than refused, since one schedule serves every conv
// of a model: ocBlocks drops to a divisor of the block count (1 for depthwise,
// whose x is per block), then the tile shrinks until its accumulators plus the
// weight vectors and one broadcast fit the register file; a wider tile would
// spill, which compiles but defeats the point of the tile.
void BlockedWindow::scheduledTile(const ConvTiling& c, int64_t OB, int64_t OW, bool wide,
                                  int64_t& tile) {
  if (!c.pixels && !c.ocBlocks) return;
  if (c.ocBlocks) obPer_ = depthwise_ ? 1 : std::min(c.ocBlocks, OB);
  while (OB % obPer_) --obPer_;
  if (c.pixels) tile = std::min(c.pixels, OW);
  const int64_t lanes = std::max(1, codegenTarget().vectorLanes());
  const int64_t perBlock = (b_ + lanes - 1) / lanes, registers = wide ? 32 : 16;
  auto fits = [&] { return (tile * obPer_ + obPer_) * perBlock + 1 <= registers; };
  while (!fits() && tile > 1) --tile;
  while (!fits() && obPer_ > 1) do
      --obPer_;
    while (OB % obPer_);
}

// A tile's weight slice (obPer_ blocks x Cg x KH x KW x b floats) is read
// once per tile: past L1 (magika: 256 channels x 5 taps x 2 blocks, 80 KiB)
// every tile streams it from L2 again, and magika's conv (73 tiles a row)
// ran at 56% of FMA peak. Such a row runs its reduction in chunks of
// input-channel blocks whose slice fits half of L1, every tile per chunk,
// the partial sums in a row buffer (same summation order: bit-identical);
// the epilogue runs over the row after the last chunk. That rose to 90%.
// A chunk costs a pass over the row's sums, so rows of a few tiles lose by
// it (PP-OCR's 3-7-tile rows with 28-180 KiB slices ran 5-60% slower):
// only rows of at least 16 tiles are chunked.
void BlockedWindow::chooseChunk(int64_t tilesPerRow) {
  chunkBlocks_ = 0;
  if (kind_ != Kind::Conv || depthwise_ || cg_ % b_ != 0 || tilesPerRow < 16) return;
  const int64_t blocks = cg_ / b_, perBlock = obPer_ * b_ * h_.k * w_.k * b_ * 4;
  const int64_t l1 = codegenTarget().l1DataBytes;
  if (blocks * perBlock <= l1) return;
  int64_t c = std::max<int64_t>(1, l1 / 2 / perBlock);
  while (blocks % c) --c;
  chunkBlocks_ = c;
}

// The chunk loop around a row's tiles, the row buffer zeroed before it and
// the epilogue after it.
std::vector<StmtRef> BlockedWindow::chunkedRow(std::vector<StmtRef> tiles, int64_t width) {
  const Buffer& part = kb_.func().buffer(*part_);
  std::vector<StmtRef> out;
  Var z = kb_.newLoopVar();
  out.push_back(pinnedLoop(z, width * obPer_ * b_, ForKind::Vectorized,
                           {store(part, varRef(z), floatConst(0))}));
  out.push_back(pinnedLoop(chunkVar_, cg_ / b_ / chunkBlocks_, ForKind::Serial, tiles));
  Var p = kb_.newLoopVar();
  out.push_back(pinnedLoop(p, width, ForKind::Serial, {lanesNest(1, [&](ExprRef, ExprRef l) {
                             return results(load(part, partAt(varRef(p), l)), varRef(p), l);
                           })}));
  StmtRef all = allocate(part, {seq(std::move(out))});
  part_.reset();
  return {all};
}

// Shapes and window geometry from the attributes, checked against y's shape.
bool BlockedWindow::resolve() {
  x_ = kb_.shapeOf(n_.inputs[0]);
  y_ = kb_.shapeOf(n_.outputs[0]);
  if (x_.size() != 5 || y_.size() != 5 || x_[4] != y_[4] || x_[0] != y_[0])
    return fail("expects blocked [N,C/b,H,W,b] input and output, got " + formatShape(x_) + " and " +
                formatShape(y_));
  b_ = x_[4];
  std::vector<int64_t> kernel;
  if (kind_ == Kind::Conv) {
    w_shape_ = kb_.shapeOf(n_.inputs[1]);
    int64_t group = n_.attrs.getInt("group", 1);
    depthwise_ = group > 1;
    if (w_shape_.size() != 5 || w_shape_[4] != b_ || w_shape_[0] != y_[1] ||
        (depthwise_ ? w_shape_[1] != 1 || y_[1] != x_[1] : w_shape_[1] > x_[1] * b_))
      return fail("weights " + formatShape(w_shape_) + " do not fit input " + formatShape(x_));
    cg_ = w_shape_[1];
    kernel = {w_shape_[2], w_shape_[3]};
    hasBias_ = n_.inputs.size() > 2 && n_.inputs[2].valid();
    if (hasBias_ && kb_.shapeOf(n_.inputs[2]) != std::vector<int64_t>{y_[1], b_})
      return fail("bias must have shape [" + std::to_string(y_[1]) + "," + std::to_string(b_) +
                  "]");
  } else {
    auto ks = n_.attrs.getInts("kernel_shape");
    if (!ks || ks->size() != 2) return fail("kernel_shape must name 2 spatial sizes");
    kernel = *ks;
    if (y_[1] != x_[1]) return fail("the channel blocks of input and output differ");
    includePad_ = n_.attrs.getInt("count_include_pad", 0) != 0;
  }
  auto ints = [&](const char* name, size_t count, int64_t fill) {
    auto v = n_.attrs.getInts(name);
    return v ? *v : std::vector<int64_t>(count, fill);
  };
  auto s = ints("strides", 2, 1), d = ints("dilations", 2, 1), p = ints("pads", 4, 0);
  if (s.size() != 2 || d.size() != 2 || p.size() != 4)
    return fail("strides, dilations and pads must name 2 spatial dims");
  h_ = {x_[2], kernel[0], s[0], d[0], p[0], y_[2]};
  w_ = {x_[3], kernel[1], s[1], d[1], p[1], y_[3]};
  for (int i = 0; i < 2; ++i) {
    const Axis& a = i ? w_ : h_;
    int64_t span = a.in + p[i] + p[i + 2] - ((a.k - 1) * a.d + 1);
    if (a.s <= 0 || a.d <= 0 || a.k <= 0 || p[i] < 0 || span < 0 || span / a.s + 1 != a.out)
      return fail("output shape " + formatShape(y_) + " disagrees with the window geometry");
  }
  transposed_ = w_.out < 4 && h_.out >= 4 * w_.out;
  if (transposed_) std::swap(h_, w_);
  return true;
}

}  // namespace blocked

using blocked::divI;
using blocked::modI;

ExprRef layoutTransformValue(KernelBuilder& kb, const Node& n, const Index& out) {
  std::vector<int64_t> in = kb.shapeOf(n.inputs[0]);
  std::vector<ExprRef> o = out.dimExprs();
  if (n.op == "FromNCHWc") {  // y[n,c,h,w] = x[n, c/b, h, w, c%b]
    int64_t b = in[4];
    return kb.valueAt(n.inputs[0],
                      Index::ofDims(in, {o[0], divI(o[1], b), o[2], o[3], modI(o[1], b)}));
  }
  // ToNCHWc: y[n,cb,h,w,l] = c < C ? x[n, c, h, w] : 0 with c = cb*b + l.
  int64_t b = out.shape[4], C = in[1];
  ExprRef c = add(mul(o[1], intConst(b)), o[4]);
  if (C % b == 0) return kb.valueAt(n.inputs[0], Index::ofDims(in, {o[0], c, o[2], o[3]}));
  ExprRef clamped = binary(BinOp::Min, c, intConst(C - 1));
  ExprRef v = kb.valueAt(n.inputs[0], Index::ofDims(in, {o[0], clamped, o[2], o[3]}));
  return select(compare(CmpOp::LT, c, intConst(C)), v, floatConst(0));
}

std::vector<StmtRef> lowerLayoutOp(KernelBuilder& kb, const Node& n,
                                   const KernelBuilder::Sink& sink) {
  using blocked::Kind;
  Kind k = n.op == "ConvNCHWc" ? Kind::Conv : n.op == "MaxPoolNCHWc" ? Kind::Max : Kind::Avg;
  return blocked::BlockedWindow(kb, n, k).build(sink);
}

}  // namespace fuselens
