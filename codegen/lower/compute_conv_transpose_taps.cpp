// ConvTranspose whose kernel equals its stride (no overlap, no padding, group
// 1, 2 spatial dims with one stride, a constant f32 weight), lowered as register-tiled
// products instead of the scalar output-centric nest of
// compute_conv_transpose.cpp. With k == s every output position has exactly
// one tap, so output row oh = h*s + i and column q = w*s + j read
//
//   y[n, co, h*s+i, q] = b[co] + sum over c of w[c, co, i, q mod s] * x[n, c, h, q div s]
//
// which is s products [Cout x Cin] x [Cin x OW] per input row, one per kernel
// row i. Storing them along q keeps the stores contiguous (the s taps of a
// row interleave in the output): the input row is first expanded to
// xe[c][q] = x[n, c, h, q div s], and the weight is packed at compile time so
// that lane l of a vector holds w[c, co, i, l mod s] (a vector of P lanes, P a
// multiple of s and of the hardware lanes, repeats along q). The nest:
//
//   for nh < N * H:                                  // parallel: (n, h)
//     for each tile [q0, q0 + T) of the output row:
//       float xe[Cin][T];  xe[c][l] = x[n, c, h, (q0 + l) / s];   // a gather per c
//       for i < s: for each block of mr output channels co0:
//         float acc[mr][T] = 0;                      // registers
//         for c < Cin: for r < mr: for l < T:        // unrolled / vectorized
//           acc[r][l] = fma(wp[i][co0][c][r][l mod P], xe[c][l], acc[r][l]);
//         for r, l: y[n, co0+r, h*s+i, q0+l] = epilogue(acc[r][l] + b[co0+r]);
//
// The fused epilogue (BatchNormalization, Relu, ...) applies in the sink.
#include <numeric>

#include "codegen/lower/compute_conv_transpose.h"
#include "codegen/target.h"

namespace fuselens {
namespace {

// The expanded row stays on the stack: at most this many floats.
constexpr int64_t kMaxExpanded = 1 << 14;

class StrideTaps {
 public:
  StrideTaps(KernelBuilder& kb, const Node& n, const KernelBuilder::Sink& sink,
             std::vector<int64_t> x, int64_t cout, int64_t s, int64_t period, int64_t tile)
      : kb_(kb), n_(n), sink_(sink), x_(std::move(x)), cout_(cout), s_(s), p_(period), t_(tile) {
    cin_ = x_[1];
    out_ = {x_[0], cout_, x_[2] * s_, x_[3] * s_};
    mr_ = std::min(kb.schedule().matmul.mr, cout_);
  }

  std::vector<StmtRef> build() {
    packWeights();
    int64_t rows = x_[0] * x_[2], ow = out_[3];
    Var nh = kb_.newLoopVar();
    ExprRef nIdx = x_[0] == 1 ? intConst(0) : div(varRef(nh), intConst(x_[2]));
    ExprRef hIdx = x_[0] == 1 ? varRef(nh) : binary(BinOp::Mod, varRef(nh), intConst(x_[2]));
    std::vector<StmtRef> body;
    int64_t full = ow / t_, tail = ow - full * t_;
    if (full == 1) {
      body = tileNest(nIdx, hIdx, intConst(0), t_);
    } else if (full > 1) {
      Var qt = kb_.newLoopVar();
      body.push_back(pinnedLoop(qt, full, ForKind::Serial,
                                tileNest(nIdx, hIdx, mul(varRef(qt), intConst(t_)), t_)));
    }
    if (tail > 0)
      for (StmtRef& st : tileNest(nIdx, hIdx, intConst(full * t_), tail))
        body.push_back(std::move(st));
    const Schedule& sch = kb_.schedule();
    // Multiply-adds against the same threshold as the blocked conv's: at 32x
    // it PP-OCRv4 det's last ConvTranspose (368K MACs, 0.1 ms) ran serial.
    bool big = rows * ow * cout_ * s_ * cin_ >= sch.parallelMinWork;
    ForKind kind = sch.parallelOuter && big && rows >= 2 ? ForKind::Parallel : ForKind::Serial;
    return {pinnedLoop(nh, rows, kind, std::move(body))};
  }

 private:
  // wp[i][co][c][l]: for the block starting at co0 with `rows` channels, the
  // entries of (c, r) sit at ((i*Cout + co0)*Cin + c*rows + r)*P, so one
  // block's weights are one stream in the order the c loop reads them.
  ExprRef packedIndex(int64_t i, int64_t co0, int64_t rows, ExprRef c, ExprRef r, ExprRef l) {
    ExprRef base = intConst((i * cout_ + co0) * cin_ * p_);
    return add(base, add(mul(add(mul(c, intConst(rows)), r), intConst(p_)), l));
  }

  void packWeights() {
    auto w = kb_.constantOf(n_.inputs[1]);
    const float* d = w->data<float>();
    auto data =
        std::make_shared<TensorData>(DType::F32, std::vector<int64_t>{s_ * cout_ * cin_ * p_});
    float* o = data->data<float>();
    for (int64_t i = 0; i < s_; ++i)
      for (int64_t co0 = 0; co0 < cout_; co0 += mr_) {
        int64_t rows = std::min(mr_, cout_ - co0);
        for (int64_t c = 0; c < cin_; ++c)
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t l = 0; l < p_; ++l)
              o[((i * cout_ + co0) * cin_ + c * rows + r) * p_ + l] =
                  d[((c * cout_ + co0 + r) * s_ + i) * s_ + l % s_];
      }
    packed_ = kb_.addPrepacked("packed_" + kb_.graph().value(n_.inputs[1]).name.substr(0, 24) +
                                   "_" + std::to_string(kb_.func().buffers.size()),
                               data);
  }

  // Loops over `width` lanes as full vectors of P lanes and a last partial
  // one; body(col, l) gets the lane's column in the tile and its lane in P.
  std::vector<StmtRef> lanes(int64_t width,
                             const std::function<std::vector<StmtRef>(ExprRef, ExprRef)>& body) {
    std::vector<StmtRef> out;
    int64_t vecs = width / p_, rest = width - vecs * p_;
    if (vecs > 0) {
      Var t = kb_.newLoopVar(), l = kb_.newLoopVar();
      ExprRef col = add(mul(varRef(t), intConst(p_)), varRef(l));
      out.push_back(pinnedLoop(t, vecs, ForKind::Unrolled,
                               {pinnedLoop(l, p_, ForKind::Vectorized, body(col, varRef(l)))}));
    }
    if (rest > 0) {
      Var l = kb_.newLoopVar();
      out.push_back(pinnedLoop(l, rest, ForKind::Vectorized,
                               body(add(intConst(vecs * p_), varRef(l)), varRef(l))));
    }
    return out;
  }

  std::vector<StmtRef> tileNest(ExprRef nIdx, ExprRef hIdx, ExprRef q0, int64_t width) {
    LoopFunc& fn = kb_.func();
    BufferId xeId = fn.addBuffer("xe" + std::to_string(fn.buffers.size()), BufferKind::Local,
                                 DType::F32, {cin_ * width});
    // Copies, not references: block() adds buffers, which moves fn.buffers.
    const Buffer xe = fn.buffer(xeId);
    Var c = kb_.newLoopVar(), l = kb_.newLoopVar();
    ExprRef col = add(q0, varRef(l));
    ExprRef xv = kb_.valueAt(n_.inputs[0],
                             Index::ofDims(x_, {nIdx, varRef(c), hIdx, div(col, intConst(s_))}));
    std::vector<StmtRef> body = {
        pinnedLoop(c, cin_, ForKind::Serial,
                   {pinnedLoop(l, width, ForKind::Vectorized,
                               {store(xe, add(mul(varRef(c), intConst(width)), varRef(l)), xv)})})};
    for (int64_t i = 0; i < s_; ++i) {
      ExprRef oh = add(mul(hIdx, intConst(s_)), intConst(i));
      for (int64_t co0 = 0; co0 < cout_; co0 += mr_)
        body.push_back(block(xe, nIdx, oh, q0, width, i, co0, std::min(mr_, cout_ - co0)));
    }
    return {allocate(xe, std::move(body))};
  }

  // One rows x width register tile of output channels [co0, co0 + rows) in output row oh.
  StmtRef block(const Buffer& xe, ExprRef nIdx, ExprRef oh, ExprRef q0, int64_t width, int64_t i,
                int64_t co0, int64_t rows) {
    LoopFunc& fn = kb_.func();
    BufferId accId = fn.addBuffer("acc" + std::to_string(fn.buffers.size()), BufferKind::Local,
                                  DType::F32, {rows * width});
    // Copies: valueAt and the sink may add buffers, which moves fn.buffers.
    const Buffer acc = fn.buffer(accId);
    const Buffer wp = fn.buffer(packed_);
    auto regs = [&](const std::function<std::vector<StmtRef>(ExprRef, ExprRef, ExprRef)>& body) {
      Var r = kb_.newLoopVar();
      return pinnedLoop(r, rows, ForKind::Unrolled, lanes(width, [&](ExprRef col, ExprRef l) {
                          return body(varRef(r), col, l);
                        }));
    };
    auto accAt = [&](ExprRef r, ExprRef col) { return add(mul(r, intConst(width)), col); };
    StmtRef zero = regs([&](ExprRef r, ExprRef col, ExprRef) -> std::vector<StmtRef> {
      return {store(acc, accAt(r, col), floatConst(0))};
    });
    Var c = kb_.newLoopVar();
    StmtRef update = regs([&](ExprRef r, ExprRef col, ExprRef l) -> std::vector<StmtRef> {
      ExprRef wv = load(wp, packedIndex(i, co0, rows, varRef(c), r, l));
      ExprRef xv = load(xe, add(mul(varRef(c), intConst(width)), col));
      return {store(acc, accAt(r, col), fma(wv, xv, load(acc, accAt(r, col))))};
    });
    StmtRef cLoop = pinnedLoop(c, cin_, ForKind::Serial, {update});
    bool hasBias = n_.inputs.size() > 2 && n_.inputs[2].valid();
    StmtRef epilogue = regs([&](ExprRef r, ExprRef col, ExprRef) {
      ExprRef co = add(intConst(co0), r);
      ExprRef v = load(acc, accAt(r, col));
      if (hasBias) v = add(v, kb_.valueAt(n_.inputs[2], Index::ofDims({cout_}, {co})));
      return sink_(Index::ofDims(out_, {nIdx, co, oh, add(q0, col)}), v);
    });
    return allocate(acc, {zero, cLoop, epilogue});
  }

  KernelBuilder& kb_;
  const Node& n_;
  const KernelBuilder::Sink& sink_;
  std::vector<int64_t> x_, out_;
  int64_t cout_, s_, p_, t_, cin_ = 0, mr_ = 1;
  BufferId packed_;
};

}  // namespace

std::optional<std::vector<StmtRef>> lowerConvTransposeByTaps(KernelBuilder& kb, const Node& n,
                                                             const StrideTapsShape& shape,
                                                             const KernelBuilder::Sink& sink) {
  const std::vector<int64_t>& x = shape.x;
  if (!shape.nonOverlapping || x.size() != 4 || shape.group != 1 || shape.strides.size() != 2 ||
      shape.strides[0] != shape.strides[1] || !kb.schedule().matmul.enabled)
    return std::nullopt;
  if (kb.graph().value(n.outputs[0]).type.dtype != DType::F32) return std::nullopt;
  auto w = kb.constantOf(n.inputs[1]);
  if (!w || w->dtype != DType::F32) return std::nullopt;
  bool hasBias = n.inputs.size() > 2 && n.inputs[2].valid();
  if (hasBias && kb.shapeOf(n.inputs[2]) != std::vector<int64_t>{shape.cout}) return std::nullopt;
  int64_t s = shape.strides[0], cout = shape.cout;
  int64_t hw = std::max<int64_t>(4, codegenTarget().vectorLanes());
  int64_t period = std::lcm(s, hw);
  if (period > 64) return std::nullopt;  // a vector the emitter would not take whole
  // Fewer output channels than a block of rows reuse each xe vector less: a wider tile.
  int64_t nr = kb.schedule().matmul.nr * (cout < kb.schedule().matmul.mr ? 2 : 1);
  int64_t tile = std::max<int64_t>(period, nr / period * period);
  // Many input channels: a narrower tile keeps the expanded row on the stack.
  while (tile > period && x[1] * tile > kMaxExpanded) tile -= period;
  tile = std::min(tile, x[3] * s);
  if (x[1] * tile > kMaxExpanded) return std::nullopt;
  StrideTaps t(kb, n, sink, x, cout, s, period, tile);
  return t.build();
}

}  // namespace fuselens
