// The runtime that JIT-compiled kernels call back into. Parallel loops are
// outlined by the backend into `body(ctx, lo, hi)` and handed to
// fuselens_parallel_for, which splits [0, n) across a small thread pool.
#pragma once

#include <cstdint>

extern "C" {
using FuseLensLoopBody = void (*)(void** ctx, int64_t lo, int64_t hi);
// Runs body over [0, n) in chunks, on the pool and the calling thread; returns
// when every chunk is done. Each thread takes its own contiguous run of
// chunks first (the same rows as in the previous loop), then steals. A second
// concurrent caller runs its loop serially.
void fuselens_parallel_for(FuseLensLoopBody body, void** ctx, int64_t n);
// 1: parallel loops run on the calling thread only; n > 1: on at most n
// threads, the caller included; 0: on every hardware thread.
// For benchmarks and tuning; kernels need no recompilation.
void fuselens_set_max_threads(int n);
}
