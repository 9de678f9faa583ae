// The GPU schedule for convolutions: an implicit GEMM. With cudaSchedule() a
// Conv (NCHW, or the layout pass's blocked ConvNCHWc) lowers to the plain nest
// of codegen/lower/compute_conv_gemm.cpp, one output per iteration:
//
//   for n, g, m, oh, ow (parallel):          M = output channels (m: read by w only)
//     let conv_acc = 0                       N = output pixels (n, oh, ow: read by x only)
//     for c, kh, kw:                         K = c * kh * kw
//       conv_acc = fma(x(n, g, c, ih, iw), w(g, m, c, kh, kw), conv_acc)
//     y[n, g, m, oh, ow] = epilogue(conv_acc)   (bias, BN arithmetic, activations, residual)
//
// which becomes a stage of TM x 64 tiles (output channels x output pixels),
// the groups (read by both factors) on blockIdx.z, row tiles on .y, pixel
// tiles on .x, each grid-strided:
//
//   __shared__ Ws[16][TM + 1], Xs[16][64]     256 threads = 16 x 16, each RM x 4 outputs
//   for k0 = 0; k0 < K; k0 += 16:
//     Ws[kk][r] = w(row i0 + r, k0 + kk)      (m; c, kh, kw) by div/mod of the flat index
//     Xs[kk][p] = x(pixel j0 + p, k0 + kk)    the im2col patch gathered on the fly: the
//     __syncthreads()                         loop IR's own clamped, padding-selected read
//     acc[y][x] = fma(Ws[kk][ty + 16y], Xs[kk][tx + 16x], acc[y][x])
//     __syncthreads()
//   for y, x in bounds: bind m, n, oh, ow; epilogue(acc[y][x]) in registers, one store
//
// TM is 64, 32 or 16 (RM = 4, 2, 1 rows a thread) from M: the small-channel
// convs of mobile nets (8-24 channels) would leave a 64-row tile mostly empty.
// Every input element staged is used TM times, every weight 64 times. Loads past
// M, N or K read zero (the guard skips the out-of-bounds load) and stores
// past M or N are skipped, so no size must be a multiple of a tile; the
// summation order over K is the loop IR's (c, then the taps), with the same
// fused multiply-adds, so the numbers match the one-thread-per-output stage.
// A block narrower than 256 threads (the host emulation's) runs the 256
// logical threads in rounds, as the MatMul stage does.
//
// Without rows (depthwise: the channel is read by both x and w, so every
// channel is its own group of M = 1) or with fewer than kMinRows output
// channels a group, the nest runs one thread per output: the output loops
// flattened into one grid-stride loop, the reduction and epilogue as the loop
// IR has them. Only nests whose accumulator the conv lowering named
// `conv_acc` are taken, so MatMul nests keep their stages (cuda_matmul.cpp).
// Index arithmetic that lowering shares between the factors (lets in the
// innermost reduction loop) is emitted with the factor that reads it. Not
// built: ConvTranspose (its own nest, the generic stage), tensor cores,
// cp.async double buffering, split-K for convs with few outputs and a long K.
#include <cstdint>

#include "codegen/cuda/cuda_contraction.h"

namespace fuselens::cudaemit {
namespace {

constexpr int64_t kTileN = 64;     // output pixels per block (16 threads x 4)
constexpr int64_t kTileK = 16;     // K per shared-memory stage
constexpr int64_t kThreads = 256;  // 16 x 16
constexpr int64_t kMinRows = 4;    // fewer output channels a group: one thread per output
constexpr int64_t kBlock = 256;    // threads of the one-per-output stage

struct ConvNest {
  std::vector<StmtRef> outer;              // the output loops, outermost first
  std::vector<StmtRef> batch, rows, cols;  // outer, by which factor reads them
  std::vector<StmtRef> red;                // the reduction loops
  VarId acc;
  DType type = DType::F32;
  bool fused = false;  // the update is an fma
  ExprRef a, b;        // a: the weight (rows, k), b: the input patch (cols, k)
  // The lets before the update in the innermost reduction loop (the index
  // arithmetic lowering shares between the factors), in order, and each one's
  // variables through the lets before it.
  std::vector<StmtRef> lets;
  std::map<int32_t, std::set<int32_t>> letVars;
  std::vector<StmtRef> epilogue;

  // The variables e reads, directly or through the lets.
  std::set<int32_t> varsOf(const ExprRef& e) const {
    std::set<int32_t> out;
    collect(e, out);
    return out;
  }
  void collect(const ExprRef& e, std::set<int32_t>& out) const {
    if (e->kind == ExprKind::VarRef) {
      out.insert(e->var.index);
      if (auto it = letVars.find(e->var.index); it != letVars.end())
        out.insert(it->second.begin(), it->second.end());
    }
    for (const ExprRef& o : e->ops) collect(o, out);
  }
  // The lets a factor needs, emitted in their order.
  void emitLets(Emitter& em, const ExprRef& factor, int ind, std::ostringstream& o) const {
    const std::set<int32_t> used = varsOf(factor);
    for (const StmtRef& l : lets)
      if (used.count(l->var.index)) em.stmt(l, ind, o);
  }
};

int64_t extentOf(const std::vector<StmtRef>& loops) {
  int64_t n = 1;
  for (const StmtRef& l : loops) n *= l->extent;
  return n;
}

std::optional<ConvNest> matchConv(const LoopFunc& f, const StmtRef& top) {
  ConvNest c;
  c.outer = {top};
  while (c.outer.back()->body.size() == 1 && c.outer.back()->body[0]->kind == StmtKind::For &&
         c.outer.back()->body[0]->forKind != ForKind::Parallel)
    c.outer.push_back(c.outer.back()->body[0]);
  const std::vector<StmtRef>& body = c.outer.back()->body;
  if (body.size() < 3 || body[0]->kind != StmtKind::Let || body[1]->kind != StmtKind::For ||
      body[1]->forKind == ForKind::Parallel)
    return std::nullopt;
  c.acc = body[0]->var;
  c.type = f.var(c.acc).type;
  if (f.var(c.acc).name.rfind("conv_acc", 0) != 0 || !isFloatType(c.type) ||
      !isZero(body[0]->value))
    return std::nullopt;
  c.red = {body[1]};
  while (c.red.back()->body.size() == 1 && c.red.back()->body[0]->kind == StmtKind::For)
    c.red.push_back(c.red.back()->body[0]);
  const std::vector<StmtRef>& inner = c.red.back()->body;
  const StmtRef& update = inner.back();
  if (update->kind != StmtKind::Assign || update->var != c.acc ||
      !factors(update->value, c.acc, c.a, c.b) || c.a->type != c.type || c.b->type != c.type)
    return std::nullopt;
  c.fused = update->value->kind == ExprKind::Fma;
  std::set<int32_t> loaded;
  for (size_t i = 0; i + 1 < inner.size(); ++i) {
    const StmtRef& l = inner[i];
    if (l->kind != StmtKind::Let || l->var == c.acc) return std::nullopt;
    c.lets.push_back(l);
    c.letVars[l->var.index] = c.varsOf(l->value);
    loadsOf(l->value, loaded);
  }
  if (c.varsOf(c.a).count(c.acc.index) || c.varsOf(c.b).count(c.acc.index)) return std::nullopt;
  c.epilogue.assign(body.begin() + 2, body.end());
  loadsOf(c.a, loaded);
  loadsOf(c.b, loaded);
  if (!epilogueFits(c.epilogue, loaded)) return std::nullopt;
  // The patch factor reads the innermost output loop (the row's pixels).
  const int32_t last = c.outer.back()->var.index;
  std::set<int32_t> va = c.varsOf(c.a), vb = c.varsOf(c.b);
  if (va.count(last) && !vb.count(last)) {
    std::swap(c.a, c.b);
    std::swap(va, vb);
  }
  for (const StmtRef& l : c.outer) {
    const bool ra = va.count(l->var.index), rb = vb.count(l->var.index);
    (ra && !rb ? c.rows : rb && !ra ? c.cols : c.batch).push_back(l);
  }
  return c;
}

// Declarations binding the counters of `loops` (outermost first) to the flat
// row-major position `flat`, which is within their extent wherever the
// counters are used; the outermost takes no modulo. Below 2^32 the division
// is unsigned 32-bit (a multiply-high and a shift; 64-bit division by a
// constant costs several times that, in the gather's innermost loop).
void bindLoops(Emitter& em, const std::vector<StmtRef>& loops, const std::string& flat,
               const std::string& pad, std::ostringstream& o) {
  int64_t inner = extentOf(loops);
  const bool narrow = inner <= int64_t(UINT32_MAX);
  for (size_t i = 0; i < loops.size(); ++i) {
    inner /= loops[i]->extent;
    auto lit = [&](int64_t v) { return narrow ? std::to_string(v) + "u" : ll(v); };
    std::string e = narrow ? "(unsigned)" + flat : flat;
    if (inner > 1) e += " / " + lit(inner);
    if (i > 0) e += " % " + lit(loops[i]->extent);
    o << pad << "const fl_i64 " << em.var(loops[i]->var) << " = " << (narrow ? "(fl_i64)(" : "(")
      << e << ");\n";
  }
}

// One thread per output: every output loop from one grid-stride counter.
void emitPerOutput(Emitter& em, const ConvNest& c, std::ostringstream& o, CudaStage& st) {
  const int64_t total = extentOf(c.outer);
  o << "  // conv, one thread per output: " << total
    << " outputs, each a sum of K = " << extentOf(c.red) << " products\n"
    << "  for (fl_i64 fl_o = (fl_i64)blockIdx.x * blockDim.x + threadIdx.x; fl_o < " << ll(total)
    << "; fl_o += (fl_i64)gridDim.x * blockDim.x) {\n";
  bindLoops(em, c.outer, "fl_o", "    ", o);
  for (const StmtRef& s : c.outer.back()->body) em.stmt(s, 2, o);
  o << "  }\n";
  st.extent = total;
  st.block = std::min(kBlock, total);
  st.grid = std::min((total + st.block - 1) / st.block, kMaxGridDim);
}

// The loop filling one K step's shared tile of a factor: the weights
// (`weights`: fl_Ws[k][row], consecutive threads on consecutive k, along which
// a weight row is contiguous) or the input patch (fl_Xs[k][pixel], consecutive
// threads on consecutive pixels, as the input's rows are). Past M, N or K the
// element is zero and the factor is not evaluated.
void emitTileLoad(Emitter& em, const ConvNest& c, bool weights, int64_t width, int64_t bound,
                  std::ostringstream& s) {
  const std::string t = cudaTypeName(c.type), p = weights ? "fl_row" : "fl_col";
  const std::string w = std::to_string(width) + "u", kk = std::to_string(kTileK) + "u";
  const std::string at = weights ? "fl_l / " + kk : "fl_l % " + w;
  const std::string kAt = weights ? "fl_l % " + kk : "fl_l / " + w;
  s << "        for (unsigned fl_l = threadIdx.x; fl_l < " << width * kTileK
    << "u; fl_l += blockDim.x) {\n"
    << "          const fl_i64 " << p << " = " << (weights ? "fl_i0" : "fl_j0") << " + " << at
    << ", fl_k = fl_k0 + " << kAt << ";\n"
    << "          " << t << " fl_v = (" << t << ")0;\n"
    << "          if (" << p << " < " << ll(bound) << " && fl_k < " << ll(extentOf(c.red)) << ") {"
    << (weights ? "" : "  // the patch gather") << "\n";
  bindLoops(em, weights ? c.rows : c.cols, p, "            ", s);
  bindLoops(em, c.red, "fl_k", "            ", s);
  const ExprRef& factor = weights ? c.a : c.b;
  c.emitLets(em, factor, 6, s);
  s << "            fl_v = " << em.expr(factor) << ";\n"
    << "          }\n"
    << "          " << (weights ? "fl_Ws" : "fl_Xs") << "[" << kAt << "][" << at << "] = fl_v;\n"
    << "        }\n";
}

void emitTiled(Emitter& em, const ConvNest& c, std::ostringstream& s, CudaStage& st) {
  const int64_t m = extentOf(c.rows), n = extentOf(c.cols), k = extentOf(c.red);
  const int64_t batch = extentOf(c.batch);
  const int64_t rm = m >= 48 ? 4 : m >= 24 ? 2 : 1, tm = 16 * rm;
  const int64_t tilesM = (m + tm - 1) / tm, tilesN = (n + kTileN - 1) / kTileN;
  const std::string t = cudaTypeName(c.type);
  // The first line's figures are what tests/gpu/run_on_gpu.sh counts the FLOPs by.
  s << "  // tiled Conv (implicit GEMM) M=" << m << " N=" << n << " K=" << k << " groups=" << batch
    << ": " << tm << "x" << kTileN << " tiles of output channels x pixels, K in steps of " << kTileK
    << " through shared memory (weights and the gathered input patch)\n"
    << "  __shared__ " << t << " fl_Ws[" << kTileK << "][" << tm + 1 << "];\n"
    << "  __shared__ " << t << " fl_Xs[" << kTileK << "][" << kTileN << "];\n"
    << "  const unsigned fl_rounds = (" << kThreads << "u + blockDim.x - 1u) / blockDim.x;\n"
    << "  for (fl_i64 fl_bz = blockIdx.z; fl_bz < " << ll(batch) << "; fl_bz += gridDim.z)\n"
    << "  for (fl_i64 fl_tm = blockIdx.y; fl_tm < " << ll(tilesM) << "; fl_tm += gridDim.y)\n"
    << "  for (fl_i64 fl_tn = blockIdx.x; fl_tn < " << ll(tilesN) << "; fl_tn += gridDim.x) {\n"
    << "    const fl_i64 fl_i0 = fl_tm * " << ll(tm) << ", fl_j0 = fl_tn * " << ll(kTileN) << ";\n";
  batchVars(em, c.batch, s);
  emitTileRounds(s, t, rm);
  s << "      for (fl_i64 fl_k0 = 0; fl_k0 < " << ll(k) << "; fl_k0 += " << ll(kTileK) << ") {\n";
  emitTileLoad(em, c, true, tm, m, s);
  emitTileLoad(em, c, false, kTileN, n, s);
  const std::string madd = c.type == DType::F64 ? "fma(" : "fmaf(";
  emitTileProduct(s, t, rm, "fl_Ws", "fl_Xs",
                  c.fused ? madd + "fl_a[fl_y], fl_b[fl_x], fl_acc[fl_y][fl_x])"
                          : "fl_acc[fl_y][fl_x] + fl_a[fl_y] * fl_b[fl_x]");
  s << "          const fl_i64 fl_row = fl_i0 + fl_ty + 16 * fl_y, fl_col = fl_j0 + fl_tx + 16 * "
       "fl_x;\n"
    << "          if (fl_row >= " << ll(m) << " || fl_col >= " << ll(n) << ") continue;\n";
  bindLoops(em, c.rows, "fl_row", "          ", s);
  bindLoops(em, c.cols, "fl_col", "          ", s);
  s << "          " << t << " " << em.var(c.acc) << " = fl_acc[fl_y][fl_x];\n";
  for (const StmtRef& e : c.epilogue) em.stmt(e, 5, s);
  s << "        }\n"
    << "    }\n"
    << "  }\n";
  st.extent = batch * tilesM * tilesN;
  st.block = kThreads;
  st.grid = std::min(tilesN, kMaxGridDim);
  st.gridY = std::min(tilesM, kMaxGridDim);
  st.gridZ = std::min(batch, kMaxGridDim);
}

}  // namespace

bool emitConvStage(const LoopFunc& f, Emitter& em, const StmtRef& top, std::ostringstream& o,
                   CudaStage& st) {
  const std::optional<ConvNest> c = matchConv(f, top);
  if (!c) return false;
  std::ostringstream s;
  CudaStage out = st;
  if (!c->rows.empty() && !c->cols.empty() && extentOf(c->rows) >= kMinRows)
    emitTiled(em, *c, s, out);
  else
    emitPerOutput(em, *c, s, out);
  if (em.failed()) return false;
  st = out;
  o << s.str();
  return true;
}

}  // namespace fuselens::cudaemit
