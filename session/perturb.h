// Fault injection: a known error added to one kernel's output, so that
// localization (compare, compare --isolated) can be tested and taught. The
// error is EPS times the output's RMS, added to every element with alternating
// sign (+, -, +, ...), so neither a mean subtraction (LayerNorm, Softmax) nor a
// ReLU downstream can hide all of it.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "codegen/compiler.h"
#include "codegen/runtime/kernel_hook.h"
#include "core/support/status.h"

namespace fuselens {

// Kernel (its full name, or its id "k3") -> EPS.
using Perturbations = std::map<std::string, double>;

// "k3=1e-3" or "k3_fused_conv_relu=0.01"; an error sentence otherwise.
Expected<std::pair<std::string, double>> parsePerturbation(const std::string& text);

// Whether `wanted` names the kernel: its full name, or its id ("k3" for "k3_...").
bool kernelMatches(const std::string& kernelName, const std::string& wanted);

// An error naming the first perturbation that matches no kernel of `kernels`.
Status checkPerturbations(const Perturbations& p, const std::vector<KernelInfo>& kernels);

// The EPS for `kernelName`; 0 when it is not perturbed.
double perturbationFor(const Perturbations& p, const std::string& kernelName);

// Adds eps * RMS(t) to every finite element of a float tensor, in alternating sign.
void perturbTensor(TensorData& t, double eps);

// The after-kernel hook (kernel_hook.h) that applies `p` to a compiled run.
AfterKernelHook perturbationHook(Perturbations p);

}  // namespace fuselens
