// ptxas feedback to fusion for target cuda: which kernels of an exported
// module spilled registers, or use more registers per thread than their launch
// configuration leaves (65536 per block / threads per block, at most 255), and
// where their group should be split so the next fuse-ops run
// (fuse-ops{split=...}, rule cuda-spills) makes two smaller kernels. The
// export records the verdicts in manifest.json; `export --target cuda
// --cuda-register-feedback` re-runs the pipeline with the splits.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "codegen/cuda/cuda_launch_plan.h"
#include "codegen/cuda/ptxas.h"

namespace fuselens {

struct CudaRegisterVerdict {
  std::string group;  // the kernel's node in the optimized graph
  std::string kernel;
  std::string sentence;  // "k3 (sm_80: 96 registers, 24 spilled bytes; budget 64) ..."
  std::string splitAt;   // the body member to split before; empty when it cannot be split
};

// The register budget of a stage launched with `block` threads: `given` when
// positive (a forced budget), else min(255, 65536 / block).
int64_t cudaRegisterBudget(int64_t block, int64_t given = 0);

// Every kernel of `plan` one of whose stages spilled or went over budget on
// some sm of `ptxas`, with the member to split its group before.
std::vector<CudaRegisterVerdict> cudaRegisterFeedback(
    const Graph& g, const CudaLaunchPlan& plan, const std::map<std::string, PtxasReport>& ptxas,
    int64_t budget = 0);

}  // namespace fuselens
