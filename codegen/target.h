// The CPU the kernels are compiled for: LLVM's name for the CPU, its feature
// string, and the widest f32 vector it has. Schedules size register tiles from
// `vectorLanes()`; the tuning log keys entries by `key()`. No LLVM type here.
//
// The JIT always targets the host. Export can target an x86-64 micro-
// architecture level instead (`--cpu x86-64-v2`), so the library runs on any
// CPU of that level: it sets the level for its thread with ScopedCpuTarget, and
// everything that sizes code from the CPU (default schedules, conv tiles, the
// LLVM vector-width attributes, the target machine) reads codegenTarget().
#pragma once

#include <cstdint>
#include <string>

#include "core/support/status.h"

namespace fuselens {

struct CpuTarget {
  std::string name;  // "native", or the level: "x86-64-v3"
  // LLVM's CPU: "znver3" ("generic" when LLVM does not know the host), or the level.
  std::string cpu;
  std::string features;  // "+avx2,+fma,...": the host's, or what the level guarantees
  int vectorBits = 128;  // 512 with AVX-512F, 256 with AVX2, else 128
  int threads = 1;       // hardware threads
  // Per-core L1 data cache, which blocked convolutions size their reduction
  // chunks from: the host's, or 32 KiB (most x86-64 cores) for a level.
  int64_t l1DataBytes = 32 << 10;

  int vectorLanes() const { return vectorBits / 32; }  // f32 lanes per register
  bool native() const { return name == "native"; }
  // What tuned results are keyed by: "generic/avx512/2t".
  std::string key() const;
};

const CpuTarget& hostTarget();

// The CPU names export accepts: "native" (the host) and the x86-64 levels
//   x86-64     SSE2                          128-bit vectors
//   x86-64-v2  + SSSE3, SSE4.1/4.2, POPCNT    128-bit
//   x86-64-v3  + AVX, AVX2, FMA, F16C, BMI    256-bit
//   x86-64-v4  + AVX-512 F/BW/CD/DQ/VL        512-bit
// An unknown name is one sentence listing the valid ones.
Expected<CpuTarget> cpuTargetNamed(const std::string& name);
// Whether this host has every feature t needs (native: always).
bool hostCanRun(const CpuTarget& t);

// The target of the code generated on this thread: the host, unless a
// ScopedCpuTarget is alive on it.
const CpuTarget& codegenTarget();

class ScopedCpuTarget {
 public:
  explicit ScopedCpuTarget(const CpuTarget& t);
  ~ScopedCpuTarget();
  ScopedCpuTarget(const ScopedCpuTarget&) = delete;
  ScopedCpuTarget& operator=(const ScopedCpuTarget&) = delete;

 private:
  const CpuTarget* previous_;
  CpuTarget target_;
};

}  // namespace fuselens
