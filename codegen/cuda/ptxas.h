// PTX -> SASS through the toolkit's `ptxas -v`, for its resource figures:
// registers, spills, stack and shared memory per kernel function. They are what
// the export records next to every stage (.cuda.json, manifest.json) and what a
// schedule or the fusion pass can weigh for a CUDA target: a kernel that spills
// is one the GPU runs through local memory.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "core/support/status.h"

namespace fuselens {

// What ptxas reports for one entry function.
struct PtxasFigures {
  int registers = 0;
  int64_t spillStores = 0, spillLoads = 0;  // bytes
  int64_t stackBytes = 0;
  int64_t sharedBytes = 0;  // static shared memory
};

struct PtxasReport {
  std::string arch;                               // "sm_90"
  std::map<std::string, PtxasFigures> functions;  // by entry name
  double seconds = 0;
  std::string cubin;  // the ELF ptxas assembled (what an export writes as <name>.sm_XX.cubin)
};

// The ptxas to run: $CUDA_HOME/bin/ptxas, /usr/local/cuda/bin/ptxas, or the
// PATH's; empty (and `why` says so) when there is none.
std::string findPtxas(std::string* why = nullptr);

// Assembles `ptx` for `sm` ("sm_80", "sm_90"); the PTX must target a virtual
// architecture no higher than it. A rejection returns ptxas's first error line.
Expected<PtxasReport> runPtxas(const std::string& ptx, const std::string& sm);

// Parses `ptxas -v` output (stderr), exposed for tests.
std::map<std::string, PtxasFigures> parsePtxasLog(const std::string& log);

// "compute_90" for "sm_90": the virtual architecture NVRTC targets for it.
std::string virtualArchOf(const std::string& sm);

}  // namespace fuselens
