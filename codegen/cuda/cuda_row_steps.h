// Internal to codegen/cuda: a row body as the reduction stages read it, shared
// by one block per row (cuda_rows.cpp) and rows split across blocks
// (cuda_reduce_split.cpp). A row is lets, assigns and stores of scalars, and
// loop nests over the row: a reduction (lets, then one `acc = acc op e`, op
// add from 0, max or min) or a map (stores and lets into buffers the row
// never reads, so its iterations are independent).
#pragma once

#include "codegen/cuda/cuda_emitter.h"

namespace fuselens::cudaemit {

enum class Shape { Let, Assign, Store, Reduce, Map };

struct Step {
  Shape shape;
  StmtRef stmt;
  std::vector<StmtRef> nest;  // Reduce and Map: the perfect loop nest, outermost first
  int64_t extent = 1;         // iterations of the whole nest
  BinOp op = BinOp::Add;      // Reduce
  VarId acc;                  // Reduce: the accumulator
  int64_t scratch = 0;        // Reduce, split across blocks: byte offset of its partials
};

// A perfect nest of serial loops from `s` down (`s` itself may be parallel).
std::vector<StmtRef> nestOf(const StmtRef& s);

// The steps of a row body, or empty when it does not have the row shape (or
// reduces nothing).
std::vector<Step> rowSteps(const LoopFunc& f, const std::vector<StmtRef>& body);

// The block-wide reduction of the prelude for op: fl_block_sum, _max or _min.
const char* blockReduce(BinOp op);

}  // namespace fuselens::cudaemit
