// Internal to codegen: the lowered kernels of one graph, before any backend —
// what compileGraph hands to the JIT, exportModel to the object emitter and
// the CUDA C emitter to NVRTC. Backend-neutral: no executor, no LLVM.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "codegen/compiler.h"
#include "codegen/loop/loop_ir.h"
#include "codegen/runtime/host_kernel.h"

namespace fuselens {

struct KernelPlan {
  Schedule schedule;
  std::vector<KernelInfo> infos;
  std::vector<LoopFunc> funcs;      // one per info, scheduled
  std::vector<Schedule> schedules;  // per kernel: `schedule`, or the tuning log's
  std::vector<std::pair<ValueId, ValueId>> aliases;
  // Per kernel: the driver's entry for a driver kernel (KernelInfo::driver), else empty.
  std::vector<HostKernelFn> drivers;
  // Per kernel: its listing for a driver or host kernel; empty: print funcs[i].
  std::vector<std::string> notes;
  double lowerSeconds = 0;

  std::vector<const LoopFunc*> funcPtrs() const;
};

// Every kernel's loop nest (or note), as CompiledModule::loopIrText shows it.
std::string loopListing(const std::vector<LoopFunc>& funcs, const std::vector<std::string>& notes);

Expected<KernelPlan> planKernels(const Graph& g, const CompileOptions& opts,
                                 const Progress& progress, const CancelToken& cancel);

}  // namespace fuselens
