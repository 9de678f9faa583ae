// Internal to codegen/cuda: a contraction nest as the MatMul stages see it
// (cuda_matmul.cpp matches it and emits 64x64 tiles; cuda_matmul_small.cpp
// emits the small-M form for M <= 16).
#pragma once

#include <optional>

#include "codegen/cuda/cuda_emitter.h"

namespace fuselens::cudaemit {

struct Contraction {
  std::vector<StmtRef> batch;  // the loops above i
  StmtRef rows, cols, k;       // the i, j and k loops; no rows: M = 1
  VarId acc;
  DType type = DType::F32;
  ExprRef a, b;                   // the factors: a reads i and k, b reads j and k
  std::vector<StmtRef> epilogue;  // after the k loop
};

// Stores, lets and assigns only: the per-output epilogue. Collects the stored buffers.
bool isEpilogue(const StmtRef& s, std::set<int32_t>& stored);
// Whether `epilogue` is a per-output epilogue that stores to no buffer in
// `loaded`: another block may still be reading an operand it would overwrite.
bool epilogueFits(const std::vector<StmtRef>& epilogue, const std::set<int32_t>& loaded);
// The factors of acc's update `acc + a * b` (either order, or fma(a, b, acc)).
bool factors(const ExprRef& v, VarId acc, ExprRef& a, ExprRef& b);

// The shared-memory tiled stages' threads (the MatMul and Conv stages): 256
// logical threads of 16 x 16 in rounds of blockDim.x, each with `rows` x 4
// accumulators fl_acc of type t, zeroed. Opens the round's loop.
void emitTileRounds(std::ostringstream& s, const std::string& t, int64_t rows);
// One K step's product of the shared tiles as[16][rows*16 (+pad)] and
// bs[16][64], between barriers, each accumulator set to `update` (of
// fl_acc[fl_y][fl_x], fl_a[fl_y], fl_b[fl_x]); closes the K loop and opens
// the loop over the thread's outputs (fl_y, fl_x).
void emitTileProduct(std::ostringstream& s, const std::string& t, int64_t rows,
                     const std::string& as, const std::string& bs, const std::string& update);

// The contraction `top` computes, or nothing when its nest is another shape.
std::optional<Contraction> matchContraction(const LoopFunc& f, const StmtRef& top);

// The small-M stage (M <= kSmallRows): one output column per thread, all M
// rows' accumulators in its registers, A's rows staged through shared memory.
inline constexpr int64_t kSmallRows = 16;
// Whether B's load steps by one element per column, so a warp's 32 columns
// read 32 consecutive elements. An M = 1 contraction whose B does not (a
// Linear's transposed weight) stays a block per output, which reads along K.
bool columnsCoalesce(const Contraction& c);
void emitSmallMatMul(Emitter& em, const Contraction& c, std::ostringstream& o, CudaStage& st);

// gridDim.y and .z stop at 65535 (x too, as every stage caps it): past that
// the stage's grid-stride loop on the dim folds the rest onto the same blocks.
inline constexpr int64_t kMaxGridDim = 65535;

// The batch loops' counters from fl_bz, the batch index on blockIdx.z.
inline void batchVars(Emitter& em, const std::vector<StmtRef>& batch, std::ostringstream& o) {
  int64_t inner = 1;
  for (const StmtRef& l : batch) inner *= l->extent;
  for (const StmtRef& l : batch) {
    inner /= l->extent;
    o << "    const fl_i64 " << em.var(l->var) << " = fl_bz / " << ll(inner) << " % "
      << ll(l->extent) << ";\n";
  }
}

}  // namespace fuselens::cudaemit
