// The GPU schedule for few, long reductions: a row of tens of thousands of
// elements (ReduceMean over 1x65536, a softmax over 2x20000, a whole-tensor
// ReduceSum) would keep one block per row (cuda_rows.cpp) and leave every
// other SM idle. Here each row is split into S chunks, one block per
// (row, chunk), and a row body with R reductions becomes R + 1 stages:
//
//   row body                        stage p < R (one per reduction)        stage R
//   let m = -inf                    for w = blockIdx.x; w < rows*S; ...     replay the lets,
//   for j: m = max(m, x[j])           row = w / S, part = w % S             combine every
//   let s = 0                         replay steps before reduction p,      reduction,
//   for j: s = s + exp(x[j] - m)        reductions j < p combined from      maps over the
//   for j: y[j] = exp(x[j] - m) / s     their partials P_j[row, 0..S-1]     chunk, row
//   z[row] = s                        m = chunk partial of reduction p      stores by
//                                     m = fl_block_max(m)                   part 0 (a block
//                                                                           per row when
//                                                                           there are no maps)
//                                     P_p[row, part] = m  (thread 0)
//
// A launch boundary is the grid-wide barrier between a reduction's partials
// and their use. Partials live in the kernel's scratch after the loop IR's own
// temps. Every block combines a row's S partials itself, in chunk order, so
// results do not depend on block timing (no atomics): the same inputs give
// the same bits on every run. A reduction's loop may be a nest (a
// whole-tensor reduction over [4, 128, 96]); its counters are recomputed from
// one flat index, which keeps the loop IR's element order within a chunk.
// The shapes are cuda_rows.cpp's: reductions `acc = acc op e` (add from 0,
// max, min), maps that store into buffers the row never reads, lets,
// assigns and row stores; a kernel body without a parallel loop (a
// whole-tensor reduction) is one row.
#include "codegen/cuda/cuda_row_steps.h"

namespace fuselens::cudaemit {
namespace {

// A row is split when it is at least this long and the rows are fewer than
// the SMs of an sm_90 part (132): one block per row would leave SMs idle.
constexpr int64_t kMinSplitLength = 8192;
constexpr int64_t kMaxSplitRows = 132;
// Chunks of at least this many elements, and enough (row, chunk) blocks to
// give every SM of an sm_90 part two.
constexpr int64_t kMinChunk = 2048;
constexpr int64_t kTargetBlocks = 264;
constexpr int64_t kMaxParts = 64;

// The prelude's functor for op (fl_op_add, _max, _min).
const char* opName(BinOp op) { return op == BinOp::Add ? "add" : op == BinOp::Max ? "max" : "min"; }

class SplitWriter {
 public:
  SplitWriter(const LoopFunc& f, Emitter& em, std::vector<StmtRef> rowChain,
              std::vector<Step> steps, int64_t rows, int64_t parts, int64_t chunk)
      : f_(f),
        em_(em),
        chain_(std::move(rowChain)),
        steps_(std::move(steps)),
        rows_(rows),
        parts_(parts),
        chunk_(chunk) {}

  // The last pass has a block per chunk only when maps write the whole row;
  // results alone (ReduceMean) are one block per row.
  int64_t blocksPerRow(size_t pass) const {
    size_t reductions = 0;
    bool maps = false;
    for (const Step& s : steps_) {
      reductions += s.shape == Shape::Reduce;
      maps |= s.shape == Shape::Map;
    }
    return pass == reductions && !maps ? 1 : parts_;
  }

  // Stage `pass` (0 .. reductions): partials of reduction `pass`, or the row's results.
  std::string stage(size_t pass) const {
    std::ostringstream o;
    size_t reductions = 0;
    for (const Step& s : steps_) reductions += s.shape == Shape::Reduce;
    const int64_t parts = blocksPerRow(pass);
    o << "  // split reduction, pass " << pass + 1 << " of " << reductions + 1 << ": " << parts
      << " blocks per row, chunks of " << chunk_ << "; partials combined in chunk order\n"
      << "  for (fl_i64 fl_w = blockIdx.x; fl_w < " << ll(rows_ * parts)
      << "; fl_w += gridDim.x) {\n"
      << "    const fl_i64 fl_row = fl_w / " << ll(parts) << ", fl_part = fl_w % " << ll(parts)
      << ";\n";
    int64_t inner = rows_;
    for (const StmtRef& l : chain_) {
      inner /= l->extent;
      o << "    const fl_i64 " << em_.var(l->var) << " = fl_row / " << ll(inner) << " % "
        << ll(l->extent) << ";\n";
    }
    size_t seen = 0;
    for (const Step& s : steps_) {
      if (s.shape == Shape::Let || s.shape == Shape::Assign) {
        em_.stmt(s.stmt, 2, o);
      } else if (s.shape == Shape::Store) {
        if (pass < reductions) continue;  // the row's results: the last pass only
        o << "    if (fl_part == 0 && threadIdx.x == 0) {\n";
        em_.stmt(s.stmt, 3, o);
        o << "    }\n";
      } else if (s.shape == Shape::Map) {
        if (pass == reductions) chunkLoop(s, o);
      } else if (seen++ < pass) {
        const std::string acc = em_.var(s.acc), t = cudaTypeName(f_.var(s.acc).type);
        o << "    for (fl_i64 fl_c = 0; fl_c < " << ll(parts_) << "; ++fl_c)\n"
          << "      " << acc << " = fl_op_" << opName(s.op) << "()(" << acc << ", ((const " << t
          << "*)(fl_scratch + " << ll(s.scratch) << "))[fl_row * " << ll(parts_) << " + fl_c]);\n";
      } else {
        const std::string acc = em_.var(s.acc), t = cudaTypeName(f_.var(s.acc).type);
        chunkLoop(s, o);
        o << "    " << acc << " = " << blockReduce(s.op) << "(" << acc << ");\n"
          << "    if (threadIdx.x == 0) ((" << t << "*)(fl_scratch + " << ll(s.scratch)
          << "))[fl_w] = " << acc << ";\n";
        break;
      }
    }
    o << "  }\n";
    return o.str();
  }

 private:
  // The block's threads stride the chunk of a nest's flat index, each
  // counter recomputed from it.
  void chunkLoop(const Step& s, std::ostringstream& o) const {
    o << "    for (fl_i64 fl_q = fl_part * " << ll(chunk_)
      << " + threadIdx.x; fl_q < (fl_part + 1) * " << ll(chunk_) << " && fl_q < " << ll(s.extent)
      << "; fl_q += blockDim.x) {\n";
    int64_t inner = s.extent;
    for (const StmtRef& l : s.nest) {
      inner /= l->extent;
      o << "      const fl_i64 " << em_.var(l->var) << " = fl_q / " << ll(inner) << " % "
        << ll(l->extent) << ";\n";
    }
    for (const StmtRef& c : s.nest.back()->body) em_.stmt(c, 3, o);
    o << "    }\n";
  }

  const LoopFunc& f_;
  Emitter& em_;
  std::vector<StmtRef> chain_;
  std::vector<Step> steps_;
  int64_t rows_, parts_, chunk_;
};

}  // namespace

bool emitSplitReduction(const LoopFunc& f, Emitter& em, const StmtRef& top, const std::string& name,
                        int64_t* scratchBytes, std::vector<SplitStage>* out) {
  for (const Buffer& b : f.buffers)
    if (b.kind == BufferKind::Local) return false;  // per-thread arrays: a row is not one thread
  std::vector<StmtRef> chain;
  std::vector<Step> steps;
  if (top->kind == StmtKind::For && top->forKind == ForKind::Parallel) {
    // The row loops: the parallel loop and the serial loops that are each the
    // only statement of the one above; the row body is the innermost that fits.
    const std::vector<StmtRef> loops = nestOf(top);
    for (size_t used = loops.size(); used > 0 && steps.empty(); --used) {
      steps = rowSteps(f, loops[used - 1]->body);
      if (!steps.empty()) chain.assign(loops.begin(), loops.begin() + ptrdiff_t(used));
    }
  } else if (top->kind == StmtKind::Seq) {
    steps = rowSteps(f, top->body);  // a kernel without a parallel loop: one row
  }
  if (steps.empty()) return false;
  int64_t rows = 1, longest = 1, reduced = 1;
  for (const StmtRef& l : chain) rows *= l->extent;
  for (const Step& s : steps) {
    if (s.shape == Shape::Reduce) reduced = std::max(reduced, s.extent);
    if (s.shape == Shape::Reduce || s.shape == Shape::Map) longest = std::max(longest, s.extent);
  }
  if (reduced < kMinSplitLength || rows >= kMaxSplitRows) return false;
  const int64_t parts = std::min(
      {(reduced + kMinChunk - 1) / kMinChunk, (kTargetBlocks + rows - 1) / rows, kMaxParts});
  if (parts < 2) return false;
  const int64_t chunk = (longest + parts - 1) / parts;
  int64_t at = (*scratchBytes + 15) / 16 * 16;
  for (Step& s : steps) {
    if (s.shape != Shape::Reduce) continue;
    s.scratch = at;
    at += (rows * parts * int64_t(dtypeSize(f.var(s.acc).type)) + 15) / 16 * 16;
  }
  const SplitWriter writer(f, em, chain, steps, rows, parts, chunk);
  size_t passes = 1;
  for (const Step& s : steps) passes += s.shape == Shape::Reduce;
  std::vector<SplitStage> stages;
  for (size_t p = 0; p < passes; ++p) {
    SplitStage st;
    st.body = writer.stage(p);
    st.stage.name = name + "_p" + std::to_string(p);
    const int64_t blocks = rows * writer.blocksPerRow(p);
    st.stage.extent = blocks;
    // Whole warps (the shuffles assume full ones); a results-only pass needs one.
    st.stage.block = blocks == rows * parts ? std::min<int64_t>(256, (chunk + 31) / 32 * 32) : 32;
    st.stage.grid = std::min<int64_t>(blocks, 65535);
    stages.push_back(std::move(st));
  }
  if (em.failed()) return false;
  *scratchBytes = at;
  *out = std::move(stages);
  return true;
}

}  // namespace fuselens::cudaemit
