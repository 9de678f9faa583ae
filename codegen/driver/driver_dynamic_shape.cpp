// Dynamic-shape drivers: NonZero, Range and nodes whose input shapes are known
// only at run time (see driver_kernel.h). Each family has its file
// (driver_dyn_*.cpp); this one dispatches and holds what they share.
//
//   NonZero   count kernel -> host allocates [rank, count] -> fill kernel
//   Range     host count from the scalars -> fill kernel, in fixed-size blocks
//   others    the node as a graph of its own, types re-inferred for the run's
//             input shapes, compiled at run time and cached by those shapes
//
// None of them calls the eager interpreter: every element they produce is
// written by code generated from the loop IR.
#include "codegen/driver/driver_dyn_kernels.h"

namespace fuselens {
namespace {

bool isOnnx(const Node& n) { return n.domain.empty() || n.domain == "ai.onnx"; }

bool allInputsStatic(const Graph& g, const Node& n) {
  for (ValueId v : n.inputs)
    if (v.valid() && !(g.value(v).type.rankKnown && g.value(v).type.isStatic())) return false;
  return true;
}

}  // namespace

std::optional<Expected<DriverKernel>> lowerDynamicShapeDriver(const Graph& g, const Node& n,
                                                              const std::string& name,
                                                              const CompileOptions& opts) {
  // With inputs of run-time shape, NonZero and Range are specialized first; the
  // specialized graph reaches them again with static inputs.
  if (isOnnx(n) && n.op == "NonZero" && allInputsStatic(g, n))
    return lowerNonZeroDriver(g, n, name, opts);
  if (isOnnx(n) && n.op == "Range" && allInputsStatic(g, n))
    return lowerRangeDriver(g, n, name, opts);
  return lowerSpecializedDriver(g, n, name, opts);
}

Expected<DriverJit> jitDriverKernels(const std::vector<LoopFunc>& funcs, int optLevel) {
  std::vector<const LoopFunc*> ptrs;
  DriverJit out;
  for (const LoopFunc& f : funcs) {
    ptrs.push_back(&f);
    out.loopIr += printLoopFunc(f);
  }
  auto jit = JitModule::compile(ptrs, optLevel);
  if (!jit) return jit.status();
  out.jit = std::shared_ptr<JitModule>(std::move(*jit));
  return out;
}

Expected<const TensorData*> checkedInput(const std::vector<const TensorData*>& in, size_t i,
                                         const TensorType& want, const std::string& where) {
  if (i >= in.size() || !in[i])
    return Status::error("internal: input " + std::to_string(i) + " is not computed", where);
  // The executor hands every value over in its own shape (an alias too).
  const TensorData& t = *in[i];
  auto shape = want.staticShape();
  if (t.dtype != want.dtype || !shape || t.shape != *shape ||
      t.bytes.size() != size_t(t.numel()) * dtypeSize(t.dtype))
    return Status::error("input " + std::to_string(i) + " is " + t.type().str() +
                             "; the kernel was compiled for " + want.str(),
                         where);
  return &t;
}

}  // namespace fuselens
