// Internal to the program launcher (cuda_program_launcher.cpp): the host
// code of Loop and Scan steps (cuda_program_steps.cpp), written into the
// function of the program `p` whose slots are the array `v`.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "codegen/cuda/cuda_program.h"

namespace fuselens::cudaprog {

// Records the shape the run decided for slot `slot` (its first dim the C
// expression `lead` when given).
void emitRunShape(std::ostream& o, int slot, const std::vector<int64_t>& shape,
                  const std::string& pad, const std::string& lead = {});
void emitLoopStep(std::ostream& o, const CudaProgram& p, const CudaStep& st);
void emitScanStep(std::ostream& o, const CudaProgram& p, const CudaStep& st);

}  // namespace fuselens::cudaprog
