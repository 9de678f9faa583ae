// This machine's roofs, measured rather than read from a data sheet: the
// single-precision FMA peak (every thread running independent vector FMAs at
// the widest width the CPU has) and the copy bandwidth (STREAM copy: every
// thread copying its slice of an array far larger than the caches, bytes read
// plus written). The profiler divides each kernel's GFLOP/s and GB/s by them.
// Measured once per process and thread count (about 0.2 s), then cached.
#pragma once

namespace fuselens {

struct MachinePeaks {
  double fmaGflops = 0;  // 0 when the CPU has no FMA
  double copyGBps = 0;
  int threads = 1;
};

const MachinePeaks& machinePeaks(int threads);

}  // namespace fuselens
