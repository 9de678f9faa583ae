// The CPU the kernels are compiled for: LLVM's name for the host, its feature
// string, and the widest f32 vector it has. Schedules size register tiles from
// `vectorLanes()`; the tuning log keys entries by `key()`. No LLVM type here.
#pragma once

#include <string>

namespace fuselens {

struct CpuTarget {
  std::string cpu;       // "znver3", or "generic" when LLVM does not know the host
  std::string features;  // "+avx2,+fma,..." as LLVM's host detection reports them
  int vectorBits = 128;  // 512 with AVX-512F, 256 with AVX2, else 128
  int threads = 1;       // hardware threads

  int vectorLanes() const { return vectorBits / 32; }  // f32 lanes per register
  // What tuned results are keyed by: "generic/avx512/2t".
  std::string key() const;
};

const CpuTarget& hostTarget();

}  // namespace fuselens
