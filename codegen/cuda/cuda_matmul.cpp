// The GPU schedule for contractions (MatMul, Gemm and what fuses after them):
// shared-memory tiling. With cudaSchedule() (no CPU packing) a contraction
// group lowers to the nest on the left; it becomes the stage on the right.
//
//   for b.. (parallel), i < M, j < N:   for bz, tm, tn from blockIdx.z, .y, .x (grid-stride each)
//     let acc = 0                         (b..) = bz               // batch on z, row tiles on y
//     for k < K:                          t = ty*16 + tx           // 16 x 16 threads
//       acc = acc + A(b.., i, k)          acc[4][4] = 0            // rows ty+16r, cols tx+16c
//                 * B(b.., k, j)          for k0 = 0; k0 < K; k0 += 16
//     y[b.., i, j] = epilogue(acc)          As[16][65] = A(b.., tm*64 + 0..63, k0 + 0..15)
//                                           Bs[16][64] = B(b.., k0 + 0..15, tn*64 + 0..63)
//                                           __syncthreads()
//                                           acc[r][c] += As[kk][ty+16r] * Bs[kk][tx+16c]
//                                           __syncthreads()
//                                         for r, c in bounds: y[..] = epilogue(acc[r][c])
//
// A 64 x 64 tile per block, 256 threads each holding a 4 x 4 micro-tile in
// registers, K staged in steps of 16: every element loaded from global memory
// is used 64 times from shared memory. Loads past M, N or K read as zero (the
// ternary never evaluates the out-of-bounds load) and stores past M or N are
// skipped, so no size needs to be a multiple of the tile. A(..) and B(..) are
// the loop IR's own operand expressions (casts from f16, Gemm's transposes,
// broadcast batch dims) evaluated with i, j, k bound to the tile's
// coordinates; the epilogue (alpha, bias, activations, residual adds: what
// the group computes after the accumulation) is the loop IR's statements
// after the k loop, run per output in registers before its single store.
// The summation order over k is the loop IR's, so the numbers match the
// one-thread-per-output stage. As has a 65th column so that its transposing
// store (consecutive threads, consecutive k) falls in distinct banks.
//
// Column tiles run on blockIdx.x, row tiles on .y and the batch on .z (a
// block's neighbours in x share its A tile in L2); each dim grid-strides, so a
// batch past gridDim.z's 65535 folds onto the same blocks and any launch
// (the emulation's few blocks) covers every tile. M <= 16 takes the small-M
// stage of cuda_matmul_small.cpp instead: a 64-row tile would be mostly
// empty. A block narrower than 256 threads (the emulation's) runs the 256 logical
// threads in rounds, each round its own pass over K; every thread makes the
// same number of __syncthreads calls. Anything else keeps today's stage:
// another shape of body (lets in the k loop, nested reductions), integer or
// mixed accumulation (the wrapping order must stay the reference's), Local
// buffers, or a single column (a dot product per row: nothing to reuse).
#include "codegen/cuda/cuda_contraction.h"

namespace fuselens::cudaemit {

bool isEpilogue(const StmtRef& s, std::set<int32_t>& stored) {
  if (s->kind == StmtKind::Store) {
    stored.insert(s->buffer.index);
    return true;
  }
  if (s->kind == StmtKind::Seq) {
    for (const StmtRef& c : s->body)
      if (!isEpilogue(c, stored)) return false;
    return true;
  }
  return s->kind == StmtKind::Let || s->kind == StmtKind::Assign;
}

bool factors(const ExprRef& v, VarId acc, ExprRef& a, ExprRef& b) {
  auto isAcc = [&](const ExprRef& e) { return e->kind == ExprKind::VarRef && e->var == acc; };
  ExprRef prod;
  if (v->kind == ExprKind::Fma && isAcc(v->ops[2])) {
    a = v->ops[0], b = v->ops[1];
    return true;
  }
  if (v->kind != ExprKind::Binary || v->bin != BinOp::Add) return false;
  if (isAcc(v->ops[0]))
    prod = v->ops[1];
  else if (isAcc(v->ops[1]))
    prod = v->ops[0];
  else
    return false;
  if (prod->kind != ExprKind::Binary || prod->bin != BinOp::Mul) return false;
  a = prod->ops[0], b = prod->ops[1];
  return true;
}

void emitTileRounds(std::ostringstream& s, const std::string& t, int64_t rows) {
  s << "    for (unsigned fl_r = 0; fl_r < fl_rounds; ++fl_r) {\n"
    << "      const unsigned fl_t = fl_r * blockDim.x + threadIdx.x;\n"
    << "      const int fl_ty = (int)(fl_t / 16u), fl_tx = (int)(fl_t % 16u);\n"
    << "      " << t << " fl_acc[" << rows << "][4];\n"
    << "#pragma unroll\n"
    << "      for (int fl_y = 0; fl_y < " << rows << "; ++fl_y)\n"
    << "#pragma unroll\n"
    << "        for (int fl_x = 0; fl_x < 4; ++fl_x) fl_acc[fl_y][fl_x] = (" << t << ")0;\n";
}

void emitTileProduct(std::ostringstream& s, const std::string& t, int64_t rows,
                     const std::string& as, const std::string& bs, const std::string& update) {
  s << "        __syncthreads();\n"
    << "        if (fl_t < 256u) {\n"
    << "#pragma unroll\n"
    << "          for (int fl_kk = 0; fl_kk < 16; ++fl_kk) {\n"
    << "            " << t << " fl_a[" << rows << "], fl_b[4];\n"
    << "#pragma unroll\n"
    << "            for (int fl_y = 0; fl_y < " << rows << "; ++fl_y) fl_a[fl_y] = " << as
    << "[fl_kk][fl_ty + 16 * fl_y];\n"
    << "#pragma unroll\n"
    << "            for (int fl_x = 0; fl_x < 4; ++fl_x) fl_b[fl_x] = " << bs
    << "[fl_kk][fl_tx + 16 * fl_x];\n"
    << "#pragma unroll\n"
    << "            for (int fl_y = 0; fl_y < " << rows << "; ++fl_y)\n"
    << "#pragma unroll\n"
    << "              for (int fl_x = 0; fl_x < 4; ++fl_x)\n"
    << "                fl_acc[fl_y][fl_x] = " << update << ";\n"
    << "          }\n"
    << "        }\n"
    << "        __syncthreads();  // the next K step overwrites the tiles\n"
    << "      }\n"
    << "      if (fl_t >= 256u) continue;\n"
    << "#pragma unroll\n"
    << "      for (int fl_y = 0; fl_y < " << rows << "; ++fl_y)\n"
    << "#pragma unroll\n"
    << "        for (int fl_x = 0; fl_x < 4; ++fl_x) {\n";
}

bool epilogueFits(const std::vector<StmtRef>& epilogue, const std::set<int32_t>& loaded) {
  std::set<int32_t> stored;
  for (const StmtRef& s : epilogue)
    if (!isEpilogue(s, stored)) return false;
  for (int32_t b : stored)
    if (loaded.count(b)) return false;
  return true;
}

namespace {

constexpr int64_t kTile = 64;      // output rows and columns per block
constexpr int64_t kTileK = 16;     // K per shared-memory stage
constexpr int64_t kThreads = 256;  // 16 x 16, each a 4 x 4 micro-tile
constexpr int64_t kMinCols = 2;    // a single column (a dot product per row) reuses nothing

void varsOf(const ExprRef& e, std::set<int32_t>& out) {
  if (e->kind == ExprKind::VarRef) out.insert(e->var.index);
  for (const ExprRef& o : e->ops) varsOf(o, out);
}

bool onlyVars(const ExprRef& e, const std::set<int32_t>& allowed) {
  std::set<int32_t> used;
  varsOf(e, used);
  for (int32_t v : used)
    if (!allowed.count(v)) return false;
  return true;
}

// The contraction of the loop nest `chain`, its last loop the columns and the
// one before it the rows, or (`hasRows` false: M = 1, whose row loop the
// lowering drops) every loop above the columns a batch loop.
std::optional<Contraction> matchNest(const LoopFunc& f, const std::vector<StmtRef>& chain,
                                     bool hasRows) {
  Contraction c;
  c.batch.assign(chain.begin(), chain.end() - (hasRows ? 2 : 1));
  if (hasRows) c.rows = chain[chain.size() - 2];
  c.cols = chain.back();
  const std::vector<StmtRef>& body = c.cols->body;
  if (body.size() < 3 || body[0]->kind != StmtKind::Let || body[1]->kind != StmtKind::For ||
      body[1]->forKind == ForKind::Parallel || body[1]->body.size() != 1)
    return std::nullopt;
  const ExprRef& init = body[0]->value;
  c.acc = body[0]->var;
  c.type = f.var(c.acc).type;
  if (!isFloatType(c.type) || init->kind != ExprKind::FloatConst || init->f != 0)
    return std::nullopt;
  c.k = body[1];
  const StmtRef& update = c.k->body[0];
  if (update->kind != StmtKind::Assign || update->var != c.acc) return std::nullopt;
  if (!factors(update->value, c.acc, c.a, c.b)) return std::nullopt;
  if (c.a->type != c.type || c.b->type != c.type) return std::nullopt;
  std::set<int32_t> outer;
  for (const StmtRef& l : c.batch) outer.insert(l->var.index);
  outer.insert(c.k->var.index);
  std::set<int32_t> aVars = outer, bVars = outer;
  if (c.rows) aVars.insert(c.rows->var.index);
  bVars.insert(c.cols->var.index);
  if (!onlyVars(c.a, aVars) || !onlyVars(c.b, bVars)) {
    std::swap(c.a, c.b);
    if (!onlyVars(c.a, aVars) || !onlyVars(c.b, bVars)) return std::nullopt;
  }
  std::set<int32_t> loaded;
  c.epilogue.assign(body.begin() + 2, body.end());
  loadsOf(c.a, loaded);
  loadsOf(c.b, loaded);
  if (!epilogueFits(c.epilogue, loaded)) return std::nullopt;
  return c;
}

}  // namespace

std::optional<Contraction> matchContraction(const LoopFunc& f, const StmtRef& top) {
  for (const Buffer& b : f.buffers)
    if (b.kind == BufferKind::Local) return std::nullopt;  // per-thread arrays per output
  std::vector<StmtRef> chain = {top};
  while (chain.back()->body.size() == 1 && chain.back()->body[0]->kind == StmtKind::For &&
         chain.back()->body[0]->forKind != ForKind::Parallel)
    chain.push_back(chain.back()->body[0]);
  if (chain.size() >= 2)
    if (auto c = matchNest(f, chain, true)) return c;
  return matchNest(f, chain, false);
}

bool emitTiledMatMul(const LoopFunc& f, Emitter& em, const StmtRef& top, std::ostringstream& o,
                     CudaStage& st) {
  const std::optional<Contraction> c = matchContraction(f, top);
  if (!c || c->cols->extent < kMinCols || (!c->rows && !columnsCoalesce(*c))) return false;
  if (!c->rows || c->rows->extent <= kSmallRows) {
    emitSmallMatMul(em, *c, o, st);
    return !em.failed();
  }
  const int64_t m = c->rows->extent, n = c->cols->extent, k = c->k->extent;
  const int64_t tilesM = (m + kTile - 1) / kTile, tilesN = (n + kTile - 1) / kTile;
  int64_t batch = 1;
  for (const StmtRef& l : c->batch) batch *= l->extent;
  const int64_t tiles = batch * tilesM * tilesN;
  const std::string t = cudaTypeName(c->type);
  const std::string vi = em.var(c->rows->var), vj = em.var(c->cols->var), vk = em.var(c->k->var);
  std::ostringstream s;
  s << "  // tiled MatMul: " << kTile << "x" << kTile << " output tiles, K in steps of " << kTileK
    << " through shared memory\n"
    << "  __shared__ " << t << " fl_As[" << kTileK << "][" << kTile + 1 << "];\n"
    << "  __shared__ " << t << " fl_Bs[" << kTileK << "][" << kTile << "];\n"
    << "  const unsigned fl_rounds = (" << kThreads << "u + blockDim.x - 1u) / blockDim.x;\n"
    << "  for (fl_i64 fl_bz = blockIdx.z; fl_bz < " << ll(batch) << "; fl_bz += gridDim.z)\n"
    << "  for (fl_i64 fl_tm = blockIdx.y; fl_tm < " << ll(tilesM) << "; fl_tm += gridDim.y)\n"
    << "  for (fl_i64 fl_tn = blockIdx.x; fl_tn < " << ll(tilesN) << "; fl_tn += gridDim.x) {\n"
    << "    const fl_i64 fl_i0 = fl_tm * " << ll(kTile) << ", fl_j0 = fl_tn * " << ll(kTile)
    << ";\n";
  batchVars(em, c->batch, s);
  emitTileRounds(s, t, 4);
  s << "      for (fl_i64 fl_k0 = 0; fl_k0 < " << ll(k) << "; fl_k0 += " << ll(kTileK) << ") {\n"
    << "        for (unsigned fl_l = threadIdx.x; fl_l < " << kTile * kTileK
    << "u; fl_l += blockDim.x) {\n"
    << "          const fl_i64 " << vi << " = fl_i0 + fl_l / " << kTileK << "u, " << vk
    << " = fl_k0 + fl_l % " << kTileK << "u;\n"
    << "          fl_As[fl_l % " << kTileK << "u][fl_l / " << kTileK << "u] = " << vi << " < "
    << ll(m) << " && " << vk << " < " << ll(k) << " ? " << em.expr(c->a) << " : (" << t << ")0;\n"
    << "        }\n"
    << "        for (unsigned fl_l = threadIdx.x; fl_l < " << kTile * kTileK
    << "u; fl_l += blockDim.x) {\n"
    << "          const fl_i64 " << vj << " = fl_j0 + fl_l % " << kTile << "u, " << vk
    << " = fl_k0 + fl_l / " << kTile << "u;\n"
    << "          fl_Bs[fl_l / " << kTile << "u][fl_l % " << kTile << "u] = " << vj << " < "
    << ll(n) << " && " << vk << " < " << ll(k) << " ? " << em.expr(c->b) << " : (" << t << ")0;\n"
    << "        }\n";
  emitTileProduct(s, t, 4, "fl_As", "fl_Bs", "fl_acc[fl_y][fl_x] + fl_a[fl_y] * fl_b[fl_x]");
  s << "          const fl_i64 " << vi << " = fl_i0 + fl_ty + 16 * fl_y, " << vj
    << " = fl_j0 + fl_tx + 16 * fl_x;\n"
    << "          if (" << vi << " >= " << ll(m) << " || " << vj << " >= " << ll(n)
    << ") continue;\n"
    << "          " << t << " " << em.var(c->acc) << " = fl_acc[fl_y][fl_x];\n";
  for (const StmtRef& e : c->epilogue) em.stmt(e, 5, s);
  s << "        }\n"
    << "    }\n"
    << "  }\n";
  if (em.failed()) return false;
  st.extent = tiles;
  st.block = kThreads;
  st.grid = std::min<int64_t>(tilesN, kMaxGridDim);
  st.gridY = std::min<int64_t>(tilesM, kMaxGridDim);
  st.gridZ = std::min<int64_t>(batch, kMaxGridDim);
  o << s.str();
  return true;
}

}  // namespace fuselens::cudaemit
