// Schedule primitives: rewrites of a lowered LoopFunc that change how its
// loops run and where its intermediates live, never what it computes.
//
// A loop is addressed by its counter's name as printLoopFunc prints it ("i1").
// Lowering numbers counters once per kernel, so names are unique; primitives
// that make loops name them after the loop they replace, so a step list can
// address them next: split i1 by 8 gives i1o (outer), i1i (inner) and, when 8
// does not divide the extent, the tail loop i1t; fuse(i0, i1) gives i0_i1. A
// name already taken gets a numeric suffix. A primitive that cannot apply
// changes nothing and returns one sentence naming the loop and the reason.
//
//   before (y = x + b on [2, 10]):          after split("i1", 4):
//   for (i0 < 2)                            for (i0 < 2)
//     for (i1 < 10)                           for (i1o < 2)
//       y[i0*10+i1] = x[..] + b[i1];            for (i1i < 4)
//                                                 y[i0*10+(i1o*4+i1i)] = ...;
//                                             for (i1t < 2)
//                                               y[i0*10+(8+i1t)] = ...;
//
// compute_at moves the nest that fills a Temp into a consumer loop and shrinks
// the Temp to the slice one iteration reads, as a Local (stack) buffer, so a
// parallel consumer loop gets a private copy per chunk:
//
//   float* t = alloc(64);                   for (i2 < 64) {           // parallel
//   for (i0 < 64) { acc..; t[i0] = acc; }     float t[1];  // local
//   for (i2 < 64)                             acc..; t[0] = acc;
//     for (i3 < 32) y[..] = x[..] - t[i2];    for (i3 < 32) y[..] = x[..] - t[0];
//                                           }
#pragma once

#include <string>
#include <vector>

#include "codegen/loop/loop_ir.h"
#include "core/support/status.h"

namespace fuselens {

// One primitive with its operands, the unit of a Schedule's step list and of
// its JSON form: {"op":"split","loop":"i1","factor":8}.
struct ScheduleStep {
  std::string op;                  // split, reorder, fuse, vectorize, parallel, unroll,
                                   // serial, compute_at, inline, cache_local
  std::string loop;                // the loop it acts on (compute_at, cache_local: where)
  std::vector<std::string> loops;  // reorder: new order, outermost first; fuse: {outer, inner}
  int64_t factor = 0;              // split
  std::string buffer;              // compute_at, inline, cache_local: the buffer by name
  bool operator==(const ScheduleStep&) const = default;
};

std::string stepText(const ScheduleStep& s);  // "split(i1, 8)", for messages and the GUI

// Splits `loop` into an outer loop of extent/factor and an inner one of
// `factor`, plus a tail loop for the extent % factor last iterations.
Status splitLoop(LoopFunc& f, const std::string& loop, int64_t factor);
// Permutes a perfect nest: `order` names every loop of it, outermost first.
Status reorderLoops(LoopFunc& f, const std::vector<std::string>& order);
// Merges `outer` with `inner`, its only child, into one loop over both ranges.
Status fuseLoops(LoopFunc& f, const std::string& outer, const std::string& inner);
// Kinds. vectorize: an innermost loop without a loop-carried dependence;
// parallel: iterations that write disjoint elements and no temp inside;
// unroll: an extent of at most 64.
Status vectorizeLoop(LoopFunc& f, const std::string& loop);
Status parallelizeLoop(LoopFunc& f, const std::string& loop);
Status unrollLoop(LoopFunc& f, const std::string& loop);
Status serialLoop(LoopFunc& f, const std::string& loop);
// Moves the nest that fills temp `buffer` into `loop` (see above).
Status computeAt(LoopFunc& f, const std::string& buffer, const std::string& loop);
// Replaces every load of temp `buffer` by the expression its one nest stores,
// when that nest is a plain elementwise store, and deletes the nest.
Status inlineTemp(LoopFunc& f, const std::string& buffer);
// Inside each iteration of `loop`, reads and writes the slice of `buffer` it
// touches in a Local buffer, copied in before and written back after.
Status cacheLocal(LoopFunc& f, const std::string& buffer, const std::string& loop);

// Dispatches one step; unknown ops are an error.
Status applyStep(LoopFunc& f, const ScheduleStep& s);

}  // namespace fuselens
