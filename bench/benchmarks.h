// The benchmark families fuselens-bench runs, one entry point per --only word,
// and the in-memory graphs more than one family measures. Each entry point
// prints its rows through addRow (bench_rows.h).
#pragma once

#include "bench_rows.h"

namespace fuselens::bench {

// bench_kernels.cpp: bandwidth and single-op rows.
void stream();       // STREAM copy / triad; sets gCopy
void elementwise();  // fused and broadcast chains vs copy
void softmaxRows();  // softmax and LayerNorm rows vs a copy timed alongside
void fmaPeak();      // sets gPeak
void matmul(int64_t m, int64_t k, int64_t n);  // vs sgemm; fused GELU epilogue
void convLayout();                             // 3x3 conv, NCHW direct vs NCHW<b>c

// bench_compile.cpp: compile time per backend step and for a 12-layer encoder.
void compileTimes();
void compile12();

// bench_models.cpp: eager vs compiled vs ONNX Runtime on whole models.
void models();
void cnnModel();

// bench_gui.cpp (built with the GUI): the graph view's first paint, scope
// opening, pass stepping and peak memory on generated scoped models.
void guiRows();

// MatMul [m,k] x w[k,n], followed when `gelu` by bias + GELU (tanh form): the
// graph before any pass.
Graph matmulGraph(int64_t m, int64_t k, int64_t n, bool gelu, const TensorData& w,
                  const TensorData& bias);

}  // namespace fuselens::bench
