// The machine's single-precision FMA peak, measured rather than read from a
// data sheet: every thread runs a loop of independent vector FMAs (enough
// accumulators to cover the FMA latency on two ports) at the widest vector
// width the CPU has, so MatMul and Conv rows can say what fraction of the
// machine they reach. Shared machines lower it along with everything else,
// which is why it is measured in the same run as the rows it divides.
#pragma once

// GFLOP/s of `threads` threads (2 flops per FMA lane); 0 without FMA support.
double measureFmaPeakGflops(int threads);
