// See cuda_program_run.h.
#include "codegen/cuda_runtime/cuda_program_run.h"

#include <cstring>
#include <map>
#include <optional>

#include "codegen/cuda/nvrtc.h"

namespace fuselens {
namespace {

class ProgramRun {
 public:
  ProgramRun(const CudaProgramPlan& plan, const std::string& arch, const CancelToken& cancel)
      : plan_(plan), arch_(arch), cancel_(cancel) {}

  Expected<std::vector<TensorData>> run(const CudaProgram& p, std::vector<TensorData> ins) {
    std::vector<std::optional<TensorData>> vals(p.slots.size());
    for (size_t i = 0; i < p.inputs.size() && i < ins.size(); ++i)
      vals[size_t(p.inputs[i])] = std::move(ins[i]);
    auto get = [&](int s) -> Expected<TensorData> {
      const CudaSlot& slot = p.slots[size_t(s)];
      if (slot.kind == CudaSlot::Kind::Constant) {
        TensorData t(slot.dtype, slot.shape);
        if (slot.bytes > 0)
          std::memcpy(t.bytes.data(), plan_.weights.data() + slot.index, size_t(slot.bytes));
        return t;
      }
      if (!vals[size_t(s)])
        return Status::error("internal: '" + slot.name + "' is read before it is computed",
                             "CUDA program");
      return *vals[size_t(s)];
    };
    for (const CudaStep& st : p.steps) {
      if (cancel_.cancelled()) return Status::error("CUDA run cancelled");
      std::vector<TensorData> feed;
      std::vector<int> from = st.kind == CudaStep::Kind::Kernels ? st.in : std::vector<int>{};
      const CudaBranch* chosen = nullptr;
      if (st.kind == CudaStep::Kind::If) {
        auto c = get(st.cond);
        if (!c) return c.status();
        bool taken = false;
        for (std::byte b : c->bytes) taken |= b != std::byte{0};
        chosen = &st.branches[taken ? 0 : 1];
        if (!chosen->program) return Status::error(chosen->refusal);
        from = chosen->inputs;
      }
      for (int s : from) {
        auto t = get(s);
        if (!t) return t.status();
        feed.push_back(std::move(*t));
      }
      Expected<std::vector<TensorData>> outs = std::vector<TensorData>{};
      if (chosen) {
        outs = run(*chosen->program, std::move(feed));
      } else {
        auto ptx = ptxOf(*st.plan);
        if (!ptx) return ptx.status();
        auto r = runOnCuda(*st.plan, *ptx, feed, cancel_);
        if (!r) return r.status();
        result_.kernelMs.insert(result_.kernelMs.end(), r->kernelMs.begin(), r->kernelMs.end());
        result_.totalMs += r->totalMs;
        outs = std::move(r->outputs);
      }
      if (!outs) return outs.status();
      for (size_t i = 0; i < st.out.size() && i < outs->size(); ++i)
        vals[size_t(st.out[i])] = std::move((*outs)[i]);
    }
    std::vector<TensorData> result;
    for (int s : p.outputs) {
      auto t = get(s);
      if (!t) return t.status();
      result.push_back(std::move(*t));
    }
    return result;
  }

  CudaRunResult result_;

 private:
  Expected<std::string> ptxOf(const CudaLaunchPlan& lp) {
    if (auto it = ptx_.find(&lp); it != ptx_.end()) return it->second;
    auto ptx = compileToPtx(lp.module.source, arch_);
    if (!ptx) return ptx.status();
    return ptx_[&lp] = *ptx;
  }

  const CudaProgramPlan& plan_;
  std::string arch_;
  const CancelToken& cancel_;
  std::map<const CudaLaunchPlan*, std::string> ptx_;
};

}  // namespace

Expected<CudaRunResult> runCudaProgram(const CudaProgramPlan& plan,
                                       const std::vector<TensorData>& inputs,
                                       const std::string& arch, const CancelToken& cancel) {
  std::string why;
  if (!cudaDeviceAvailable(&why)) return Status::error(why);
  if (inputs.size() != plan.inputs.size())
    return Status::error("the CUDA run needs " + std::to_string(plan.inputs.size()) +
                         " inputs, not " + std::to_string(inputs.size()));
  ProgramRun run(plan, arch, cancel);
  auto outs = run.run(*plan.top, inputs);
  if (!outs) return outs.status();
  run.result_.outputs = std::move(*outs);
  return std::move(run.result_);
}

}  // namespace fuselens
