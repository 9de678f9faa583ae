// The small-M form of the contraction stage (cuda_contraction.h): a MatMul
// or Gemm with at most 16 output rows (a GEMV at M = 1, a decode step's
// projections, a small batch through a Linear). A 64x64 tile would be
// mostly empty rows; here each thread owns one output column and keeps all
// M rows' accumulators in registers:
//
//   for bz, tn from blockIdx.z, .x (grid-stride each)
//     j = tn*128 + t                                  // 128 columns a block
//     acc[M] = 0
//     for k0 = 0; k0 < K; k0 += 32
//       As[M][32] = A(b.., 0..M-1, k0 + 0..31)        // every thread's A, once
//       __syncthreads()
//       for kk: b = B(b.., k0 + kk, j)                // consecutive threads, consecutive j
//               acc[r] += As[r][kk] * b  (r < M)
//       __syncthreads()
//     for r < M: y[b.., r, j] = epilogue(acc[r])
//
// Each B element is loaded once and used M times from a register; A's rows
// are read from shared memory as broadcasts. The summation order over k is
// the loop IR's, as in the tiled stage, and the epilogue runs in registers
// before the single store. Column tiles on blockIdx.x, the batch on .z, both
// grid-strided; a block narrower than 128 threads (the host emulation's)
// runs the columns in rounds, each its own pass over K.
#include "codegen/cuda/cuda_contraction.h"

namespace fuselens::cudaemit {
namespace {

constexpr int64_t kCols = 128;  // output columns per block, one per thread
constexpr int64_t kStepK = 32;  // K per shared-memory stage

// The coefficient of `v` in the index expression `e` when it is affine in v
// (sums, differences, products by constants, integer casts), else nothing.
std::optional<int64_t> coefficient(const ExprRef& e, VarId v) {
  if (!readsVar(e, v)) return 0;
  if (e->kind == ExprKind::VarRef) return 1;
  if (e->kind == ExprKind::Cast && !isFloatType(e->type)) return coefficient(e->ops[0], v);
  if (e->kind != ExprKind::Binary) return std::nullopt;
  const auto a = coefficient(e->ops[0], v), b = coefficient(e->ops[1], v);
  if (!a || !b) return std::nullopt;
  if (e->bin == BinOp::Add) return *a + *b;
  if (e->bin == BinOp::Sub) return *a - *b;
  if (e->bin == BinOp::Mul) {
    if (e->ops[0]->kind == ExprKind::IntConst) return e->ops[0]->i * *b;
    if (e->ops[1]->kind == ExprKind::IntConst) return e->ops[1]->i * *a;
  }
  return std::nullopt;
}

}  // namespace

bool columnsCoalesce(const Contraction& c) {
  ExprRef b = c.b;
  while (b->kind == ExprKind::Cast) b = b->ops[0];  // f16 storage read as f32
  if (b->kind != ExprKind::Load) return false;
  const std::optional<int64_t> step = coefficient(b->ops[0], c.cols->var);
  return step && *step == 1;
}

void emitSmallMatMul(Emitter& em, const Contraction& c, std::ostringstream& o, CudaStage& st) {
  // No row loop: M = 1 (the lowering drops a loop of one iteration).
  const int64_t m = c.rows ? c.rows->extent : 1, n = c.cols->extent, k = c.k->extent;
  const int64_t tilesN = (n + kCols - 1) / kCols;
  int64_t batch = 1;
  for (const StmtRef& l : c.batch) batch *= l->extent;
  const std::string t = cudaTypeName(c.type);
  const std::string vj = em.var(c.cols->var), vk = em.var(c.k->var);
  // The row counter where the loop IR has one: A's loads and the epilogue read it.
  const std::string vi = c.rows ? "const fl_i64 " + em.var(c.rows->var) + " = " : "(void)";
  std::ostringstream s;
  s << "  // small-M MatMul: " << m << " rows, " << kCols
    << " columns a block (one per thread), A's rows through shared memory in K steps of " << kStepK
    << "\n"
    << "  __shared__ " << t << " fl_As[" << m << "][" << kStepK << "];\n"
    << "  const unsigned fl_rounds = (" << kCols << "u + blockDim.x - 1u) / blockDim.x;\n"
    << "  for (fl_i64 fl_bz = blockIdx.z; fl_bz < " << ll(batch) << "; fl_bz += gridDim.z)\n"
    << "  for (fl_i64 fl_tn = blockIdx.x; fl_tn < " << ll(tilesN) << "; fl_tn += gridDim.x) {\n";
  batchVars(em, c.batch, s);
  s << "    for (unsigned fl_r = 0; fl_r < fl_rounds; ++fl_r) {\n"
    << "      const unsigned fl_t = fl_r * blockDim.x + threadIdx.x;\n"
    << "      const fl_i64 " << vj << " = fl_tn * " << ll(kCols) << " + fl_t;\n"
    << "      const bool fl_live = fl_t < " << kCols << "u && " << vj << " < " << ll(n) << ";\n"
    << "      " << t << " fl_acc[" << m << "];\n"
    << "#pragma unroll\n"
    << "      for (int fl_y = 0; fl_y < " << m << "; ++fl_y) fl_acc[fl_y] = (" << t << ")0;\n"
    << "      for (fl_i64 fl_k0 = 0; fl_k0 < " << ll(k) << "; fl_k0 += " << ll(kStepK) << ") {\n"
    << "        for (unsigned fl_l = threadIdx.x; fl_l < " << m * kStepK
    << "u; fl_l += blockDim.x) {\n"
    << "          " << vi << "(fl_i64)(fl_l / " << kStepK << "u);\n"
    << "          const fl_i64 " << vk << " = fl_k0 + fl_l % " << kStepK << "u;\n"
    << "          fl_As[fl_l / " << kStepK << "u][fl_l % " << kStepK << "u] = " << vk << " < "
    << ll(k) << " ? " << em.expr(c.a) << " : (" << t << ")0;\n"
    << "        }\n"
    << "        __syncthreads();\n"
    << "        if (fl_live) {\n"
    << "          const int fl_kn = " << ll(k) << " - fl_k0 < " << kStepK << " ? (int)(" << ll(k)
    << " - fl_k0) : " << kStepK << ";\n"
    << "          for (int fl_kk = 0; fl_kk < fl_kn; ++fl_kk) {\n"
    << "            const fl_i64 " << vk << " = fl_k0 + fl_kk;\n"
    << "            const " << t << " fl_b = " << em.expr(c.b) << ";\n"
    << "#pragma unroll\n"
    << "            for (int fl_y = 0; fl_y < " << m << "; ++fl_y)\n"
    << "              fl_acc[fl_y] = fl_acc[fl_y] + fl_As[fl_y][fl_kk] * fl_b;\n"
    << "          }\n"
    << "        }\n"
    << "        __syncthreads();  // the next K step overwrites fl_As\n"
    << "      }\n"
    << "      if (!fl_live) continue;\n"
    << "#pragma unroll\n"
    << "      for (int fl_y = 0; fl_y < " << m << "; ++fl_y) {\n"
    << "        " << vi << "(fl_i64)fl_y;\n"
    << "        " << t << " " << em.var(c.acc) << " = fl_acc[fl_y];\n";
  for (const StmtRef& e : c.epilogue) em.stmt(e, 4, s);
  s << "      }\n"
    << "    }\n"
    << "  }\n";
  if (em.failed()) return;
  st.extent = batch * tilesN;
  st.block = kCols;
  st.grid = std::min<int64_t>(tilesN, kMaxGridDim);
  st.gridZ = std::min<int64_t>(batch, kMaxGridDim);
  o << s.str();
}

}  // namespace fuselens::cudaemit
