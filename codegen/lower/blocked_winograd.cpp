// Winograd F(2x2, 3x3) for blocked 3x3 stride-1 convs (ConvNCHWc). A direct
// 3x3 conv makes 9 multiplies per output and input channel; Winograd makes
// 16 per 2x2 outputs, 2.25x fewer, by transforming 4x4 input patches
// (V = B^T d B, adds only) and the weights (U = G g G^T, at compile time)
// into a space where the conv is 16 independent channel GEMMs, then taking
// each 2x2 output back (Y = A^T M A, adds only). The direct nest runs every
// conv at 93-98% of FMA peak, so only fewer multiplies make these convs
// (three quarters of a ResNet's time) faster. Per tile row of 2 output rows:
//
//   for r < parts * N * tile rows:                      // parallel, the part outermost
//     V[16][TW][C] = B^T x[4x4 patch of tile tw] B      // vectorized over b input lanes
//     for each group of obPer output blocks in the part:
//       for each chunk of the row's tiles:
//         for p < 16: for each register tile of T tiles:  // as the direct nest's tile
//           acc[obPer][T][b] = sum_ic V[p][tw][ic] * U[p][ic][ob, :]
//           M[p][tw][o][:] = acc
//         for tw in chunk: y[2x2 of tile tw] = epilogue(A^T M[.][tw] A + bias)
//
// U holds 16 floats per weight pair where the direct nest reads 9, so where
// it passes L2 the output groups split into parts, each a thread's for a run
// of rows. Images of fewer than 32 tiles keep the direct nest: a 7x7x256
// conv, streaming its 4 MiB of U for 16 tiles, ran 1.1x slower. The summation
// order differs from the direct sum's: results differ by a few ulps of the
// partial sums, as any reordered reduction does. A schedule with
// conv.winograd false (FUSELENS_WINOGRAD=0 for the default one) keeps the
// direct nest.
#include <array>
#include <utility>

#include "codegen/lower/blocked_window.h"
#include "codegen/lower/compute_conv_channels.h"
#include "codegen/target.h"

namespace fuselens::blocked {
namespace {

using Four = std::array<ExprRef, 4>;

// B^T applied to a column (or row) of the 4x4 input patch.
Four inputTransform(const Four& d) {
  return {sub(d[0], d[2]), add(d[1], d[2]), sub(d[2], d[1]), sub(d[1], d[3])};
}

// A^T applied to a column (or row) of the 4x4 product.
std::array<ExprRef, 2> outputTransform(const Four& m) {
  return {add(add(m[0], m[1]), m[2]), sub(sub(m[1], m[2]), m[3])};
}

// V of one tile row, bytes (a local of the row's iteration).
constexpr int64_t kRow = 256 << 10;
// A part's slice of U, bytes: what stays in a core's L2 (1-2 MiB on the
// hosts measured) beside V and M.
constexpr int64_t kUSlice = 512 << 10;
constexpr int64_t kChunk = 4;  // register tiles per chunk of the GEMM

}  // namespace

bool BlockedWindow::winogradFits() const {
  const Schedule& s = kb_.schedule();
  if (kind_ != Kind::Conv || depthwise_ || transposed_ || !s.conv.winograd || !s.vectorizeInner ||
      s.shapeStable || convAsGemmNest(s))
    return false;
  if (w_shape_[2] != 3 || w_shape_[3] != 3) return false;
  for (const Axis& a : {h_, w_})
    if (a.s != 1 || a.d != 1 || a.p != 1 || a.out != a.in) return false;
  // Small channel counts or images leave the transforms' cost unpaid.
  if (cg_ % b_ != 0 || cg_ < 16 || y_[1] * b_ < 16 || h_.out < 4 || w_.out < 4) return false;
  if (kb_.graph().value(n_.outputs[0]).type.dtype != DType::F32) return false;
  auto w = kb_.constantOf(n_.inputs[1]);
  if (!w || w->dtype != DType::F32) return false;
  // Few tiles leave U (16 floats per weight pair against 9) read for too
  // little work: a 7x7x256 conv ran 1.1x slower than the direct nest.
  const int64_t tw = (w_.out + 1) / 2;
  return (h_.out + 1) / 2 * tw >= 32 && 16 * tw * cg_ * 4 <= kRow;
}

// U[p][ic][ob][l] = (G g G^T)[p] of the 3x3 kernel g of output channel
// ob * b + l, input channel ic; computed in double, rounded once.
BufferId BlockedWindow::winogradWeights() {
  static constexpr double G[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  auto w = kb_.constantOf(n_.inputs[1]);
  const float* src = w->data<float>();
  const int64_t OB = y_[1];
  auto data = std::make_shared<TensorData>(DType::F32, std::vector<int64_t>{16 * cg_ * OB * b_});
  float* u = data->data<float>();
  for (int64_t ob = 0; ob < OB; ++ob)
    for (int64_t ic = 0; ic < cg_; ++ic)
      for (int64_t l = 0; l < b_; ++l) {
        auto g = [&](int kh, int kw) {
          return double(src[(((ob * cg_ + ic) * 3 + kh) * 3 + kw) * b_ + l]);
        };
        double gg[4][3];  // G g
        for (int i = 0; i < 4; ++i)
          for (int j = 0; j < 3; ++j)
            gg[i][j] = G[i][0] * g(0, j) + G[i][1] * g(1, j) + G[i][2] * g(2, j);
        for (int i = 0; i < 4; ++i)
          for (int j = 0; j < 4; ++j) {
            double v = gg[i][0] * G[j][0] + gg[i][1] * G[j][1] + gg[i][2] * G[j][2];
            u[(((i * 4 + j) * cg_ + ic) * OB + ob) * b_ + l] = float(v);
          }
      }
  return kb_.addPrepacked("wino_" + kb_.graph().value(n_.inputs[1]).name.substr(0, 24) + "_" +
                              std::to_string(kb_.func().buffers.size()),
                          data);
}

std::vector<StmtRef> BlockedWindow::winogradNest(const KernelBuilder::Sink& sink) {
  sink_ = &sink;
  const int64_t N = y_[0], OB = y_[1], OH = h_.out, OW = w_.out;
  const int64_t TH = (OH + 1) / 2, TW = (OW + 1) / 2;
  // The register tile, as the direct nest's: T tiles x obPer blocks, each
  // V broadcast feeding obPer FMAs.
  const bool wide = codegenTarget().vectorBits >= 512;
  obPer_ = OB % 2 == 0 ? 2 : 1;
  const int64_t maxT = wide ? 7 : b_ <= codegenTarget().vectorLanes() ? 4 : 3;
  const int64_t chunk = std::min(TW, kChunk * maxT);
  const int64_t regTiles = (chunk + maxT - 1) / maxT, T = (chunk + regTiles - 1) / regTiles;
  // The output groups split into `parts` whose slice of U fits L2, and so
  // that there are enough rows x parts to share between threads; each part
  // transforms its rows' input again (a tenth of its GEMM at most).
  const int64_t groups = OB / obPer_, uBytes = 16 * cg_ * OB * b_ * 4;
  int64_t parts = 1;
  while (parts < groups && (uBytes / parts > kUSlice || N * TH * parts < 8)) {
    ++parts;
    while (groups % parts) ++parts;
  }
  const int64_t per = groups / parts;
  const BufferId U = winogradWeights();
  LoopFunc& fn = kb_.func();
  const Schedule& s = kb_.schedule();
  const int64_t units = parts * N * TH;
  const bool parallel =
      s.parallelOuter && N * OB * OH * OW * b_ * cg_ * 9 >= s.parallelMinWork && units > 1;
  // r = (part, n, th), the part outermost: consecutive rows share a part, so
  // a thread's slice of U stays in its L2.
  Var rv = kb_.newLoopVar();
  ExprRef r = varRef(rv);
  n0_ = modI(divI(r, TH), N);
  ExprRef th = modI(r, TH), part = divI(r, N * TH);
  const BufferId V = fn.addBuffer("wino_v" + std::to_string(fn.buffers.size()), BufferKind::Local,
                                  DType::F32, {16, TW, cg_});
  std::vector<StmtRef> body = winogradInput(V, th);
  // The GEMM and the output transform over `count` chunks of `width` tiles from qBase.
  Var gv = kb_.newLoopVar();
  ob_ = mul(add(mul(part, intConst(per)), varRef(gv)), intConst(obPer_));
  auto chunks = [&](int64_t qBase, int64_t count, int64_t width) {
    Var cv = kb_.newLoopVar();
    ExprRef q0 = add(intConst(qBase), mul(varRef(cv), intConst(width)));
    const BufferId M = fn.addBuffer("wino_m" + std::to_string(fn.buffers.size()), BufferKind::Local,
                                    DType::F32, {16, width, obPer_, b_});
    Var pv = kb_.newLoopVar();
    std::vector<StmtRef> perP;
    const int64_t full = width / T, tail = width % T;
    auto tile = [&](ExprRef j0, int64_t w) {
      return winogradTile(V, M, U, varRef(pv), q0, j0, w, width, TW);
    };
    if (full == 1) {
      perP.push_back(tile(intConst(0), T));
    } else if (full > 1) {
      Var t = kb_.newLoopVar();
      perP.push_back(pinnedLoop(t, full, ForKind::Serial, {tile(mul(varRef(t), intConst(T)), T)}));
    }
    if (tail > 0) perP.push_back(tile(intConst(full * T), tail));
    std::vector<StmtRef> inner = {pinnedLoop(pv, 16, ForKind::Serial, std::move(perP))};
    inner.push_back(winogradOutput(M, th, q0, width));
    return pinnedLoop(cv, count, ForKind::Serial,
                      {allocate(fn.buffer(M), {seq(std::move(inner))})});
  };
  std::vector<StmtRef> perGroup;
  if (TW / chunk > 0) perGroup.push_back(chunks(0, TW / chunk, chunk));
  if (TW % chunk > 0) perGroup.push_back(chunks(TW / chunk * chunk, 1, TW % chunk));
  body.push_back(pinnedLoop(gv, per, ForKind::Serial, std::move(perGroup)));
  StmtRef all = allocate(fn.buffer(V), {seq(std::move(body))});
  return {pinnedLoop(rv, units, parallel ? ForKind::Parallel : ForKind::Serial, {all})};
}

// V[p][tw][ic] for the tiles of tile row th: only the patch rows and
// columns that can reach the padding are checked.
std::vector<StmtRef> BlockedWindow::winogradInput(BufferId V, ExprRef th) {
  const int64_t H = h_.in, W = w_.in, TH = (h_.out + 1) / 2, TW = (w_.out + 1) / 2;
  const Buffer& v = kb_.func().buffer(V);
  std::array<ExprRef, 4> rowAt, rowOk;
  for (int i = 0; i < 4; ++i) {
    ExprRef ih = add(mul(th, intConst(2)), intConst(i - 1));
    rowAt[i] = ih;
    if (i == 0) rowOk[i] = compare(CmpOp::GE, ih, intConst(0));
    if (2 * (TH - 1) + i - 1 >= H)
      rowOk[i] = andCond(rowOk[i], compare(CmpOp::LT, ih, intConst(H)));
    if (rowOk[i])
      rowAt[i] = binary(BinOp::Max, intConst(0), binary(BinOp::Min, ih, intConst(H - 1)));
  }
  Var cbv = kb_.newLoopVar();
  ExprRef icb = varRef(cbv);
  // One tile's transform; `guard`: its columns may reach the padding.
  auto tile = [&](ExprRef tw, bool guard) {
    Var lv = kb_.newLoopVar();
    ExprRef l = varRef(lv);
    std::array<Four, 4> d;  // d[i][j]: patch row i, column j
    for (int j = 0; j < 4; ++j) {
      ExprRef iw = add(mul(tw, intConst(2)), intConst(j - 1)), colOk;
      if (guard) {
        colOk = andCond(compare(CmpOp::GE, iw, intConst(0)), compare(CmpOp::LT, iw, intConst(W)));
        iw = binary(BinOp::Max, intConst(0), binary(BinOp::Min, iw, intConst(W - 1)));
      }
      for (int i = 0; i < 4; ++i) {
        ExprRef x = kb_.valueAt(n_.inputs[0], Index::ofDims(x_, {n0_, icb, rowAt[i], iw, l}));
        ExprRef ok = andCond(rowOk[i], colOk);
        d[i][j] = ok ? select(ok, x, floatConst(0)) : x;
      }
    }
    std::array<Four, 4> t;  // B^T d, column by column
    for (int j = 0; j < 4; ++j) {
      Four c = inputTransform({d[0][j], d[1][j], d[2][j], d[3][j]});
      for (int i = 0; i < 4; ++i) t[i][j] = c[i];
    }
    std::vector<StmtRef> stores;
    for (int i = 0; i < 4; ++i) {
      Four row = inputTransform(t[i]);  // (B^T d) B, row by row
      for (int j = 0; j < 4; ++j) {
        ExprRef pq = add(intConst((i * 4 + j) * TW), tw);
        stores.push_back(
            store(v, add(mul(pq, intConst(cg_)), add(mul(icb, intConst(b_)), l)), row[j]));
      }
    }
    return pinnedLoop(lv, b_, ForKind::Vectorized, std::move(stores));
  };
  // Tiles 1 .. hi-1 never reach the padding: their 4 columns stay inside W.
  int64_t hi = TW;
  while (hi > 1 && 2 * (hi - 1) + 2 >= W) --hi;
  std::vector<StmtRef> perBlock = {tile(intConst(0), true)};
  if (hi - 1 > 0) {
    Var t = kb_.newLoopVar();
    perBlock.push_back(
        pinnedLoop(t, hi - 1, ForKind::Serial, {tile(add(varRef(t), intConst(1)), false)}));
  }
  for (int64_t j = std::max<int64_t>(hi, 1); j < TW; ++j)
    perBlock.push_back(tile(intConst(j), true));
  return {pinnedLoop(cbv, cg_ / b_, ForKind::Serial, std::move(perBlock))};
}

// One register tile of the channel GEMM at transform position p: the chunk's
// tiles [j0, j0 + width) (tile q0 + j) x obPer_ output blocks, summed over
// the input channels, into M[p][j][o][:].
StmtRef BlockedWindow::winogradTile(BufferId V, BufferId M, BufferId U, ExprRef p, ExprRef q0,
                                    ExprRef j0, int64_t width, int64_t chunk, int64_t TW) {
  LoopFunc& fn = kb_.func();
  const int64_t OB = y_[1];
  BufferId accId = fn.addBuffer("acc" + std::to_string(fn.buffers.size()), BufferKind::Local,
                                DType::F32, {obPer_, width, b_});
  const Buffer& acc = fn.buffer(accId);
  auto accAt = [&](ExprRef t, ExprRef l) {
    if (obPer_ > 1) t = add(mul(o_, intConst(width)), t);
    return add(mul(t, intConst(b_)), l);
  };
  std::vector<StmtRef> out;
  out.push_back(lanesNest(width, [&](ExprRef t, ExprRef l) -> std::vector<StmtRef> {
    return {store(acc, accAt(t, l), floatConst(0))};
  }));
  ReductionLoops loops(kb_);
  ExprRef icb = loops.var(cg_ / b_), il = loops.var(b_);
  ExprRef ic = add(mul(icb, intConst(b_)), il);
  ExprRef row = add(mul(p, intConst(TW)), add(q0, j0));
  std::vector<StmtRef> step = {lanesNest(width, [&](ExprRef t, ExprRef l) -> std::vector<StmtRef> {
    ExprRef vv = load(fn.buffer(V), add(mul(add(row, t), intConst(cg_)), ic));
    ExprRef uu = load(
        fn.buffer(U),
        add(mul(add(mul(add(mul(p, intConst(cg_)), ic), intConst(OB)), obAt()), intConst(b_)), l));
    return {store(acc, accAt(t, l), fma(vv, uu, load(acc, accAt(t, l))))};
  })};
  for (StmtRef& st : loops.wrap(std::move(step))) out.push_back(std::move(st));
  out.push_back(lanesNest(width, [&](ExprRef t, ExprRef l) -> std::vector<StmtRef> {
    ExprRef j = add(j0, t);
    ExprRef at =
        add(mul(add(mul(add(mul(p, intConst(chunk)), j), intConst(obPer_)), o_), intConst(b_)), l);
    return {store(fn.buffer(M), at, load(acc, accAt(t, l)))};
  }));
  return allocate(acc, {seq(std::move(out))});
}

namespace {

// s with every store's value v replaced by select(ok, v, what the store's
// element holds now): a store that must not happen rewrites the element it
// was clamped onto, which this tile stored just before.
StmtRef keepUnless(const StmtRef& s, const ExprRef& ok, const LoopFunc& fn) {
  auto c = std::make_shared<Stmt>(*s);
  if (c->kind == StmtKind::Store)
    c->value = select(ok, c->value, load(fn.buffer(c->buffer), c->index));
  for (StmtRef& b : c->body) b = keepUnless(b, ok, fn);
  return c;
}

}  // namespace

// y for the chunk's tiles q0 + j of tile row th: A^T M A plus the bias, through the sink. Where H
// or W is odd, the last row or column of tiles has outputs past the image: their indices are
// clamped onto the tile's first row or column and keepUnless drops their stores.
StmtRef BlockedWindow::winogradOutput(BufferId M, ExprRef th, ExprRef q0, int64_t chunk) {
  const int64_t OH = h_.out, OW = w_.out;
  const Buffer& m = kb_.func().buffer(M);
  const LoopFunc& fn = kb_.func();
  Var jv = kb_.newLoopVar();
  ExprRef tw = add(q0, varRef(jv));
  StmtRef body = lanesNest(1, [&](ExprRef, ExprRef l) -> std::vector<StmtRef> {
    std::array<Four, 4> mv;
    for (int p = 0; p < 16; ++p)
      mv[p / 4][p % 4] = load(
          m, add(mul(add(mul(add(mul(intConst(p), intConst(chunk)), varRef(jv)), intConst(obPer_)),
                         o_),
                     intConst(b_)),
                 l));
    std::array<Four, 2> s;  // A^T m, column by column
    for (int j = 0; j < 4; ++j) {
      auto c = outputTransform({mv[0][j], mv[1][j], mv[2][j], mv[3][j]});
      s[0][j] = c[0], s[1][j] = c[1];
    }
    std::vector<StmtRef> stores;
    for (int a = 0; a < 2; ++a) {
      auto yRow = outputTransform(s[a]);
      for (int c = 0; c < 2; ++c) {
        ExprRef v = yRow[c];
        if (hasBias_)
          v = add(v, kb_.valueAt(n_.inputs[2], Index::ofDims({y_[1], b_}, {obAt(), l})));
        ExprRef oh = add(mul(th, intConst(2)), intConst(a));
        ExprRef ow = add(mul(tw, intConst(2)), intConst(c));
        ExprRef ok;
        if (a == 1 && OH % 2) {
          ok = compare(CmpOp::LT, oh, intConst(OH));
          oh = binary(BinOp::Min, oh, intConst(OH - 1));
        }
        if (c == 1 && OW % 2) {
          ok = andCond(ok, compare(CmpOp::LT, ow, intConst(OW)));
          ow = binary(BinOp::Min, ow, intConst(OW - 1));
        }
        for (StmtRef& st : (*sink_)(Index::ofDims(y_, {n0_, obAt(), oh, ow, l}), v))
          stores.push_back(ok ? keepUnless(st, ok, fn) : std::move(st));
      }
    }
    return stores;
  });
  return pinnedLoop(jv, chunk, ForKind::Serial, {body});
}

}  // namespace fuselens::blocked
