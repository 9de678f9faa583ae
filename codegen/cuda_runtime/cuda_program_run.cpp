// See cuda_program_run.h.
#include "codegen/cuda_runtime/cuda_program_run.h"

#include <cstring>
#include <map>
#include <optional>

#include "codegen/cuda/nvrtc.h"
#include "codegen/driver/driver_cf.h"

namespace fuselens {
namespace {

class ProgramRun {
 public:
  ProgramRun(const CudaProgramPlan& plan, const CudaSegmentRunner& runSegment,
             const CancelToken& cancel)
      : plan_(plan), runSegment_(runSegment), cancel_(cancel) {}

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
      if (st.kind == CudaStep::Kind::Loop || st.kind == CudaStep::Kind::Scan) {
        auto outs = st.kind == CudaStep::Kind::Loop ? loop(st, get) : scan(p, st, get);
        if (!outs) return outs.status();
        for (size_t i = 0; i < st.out.size() && i < outs->size(); ++i)
          vals[size_t(st.out[i])] = std::move((*outs)[i]);
        continue;
      }
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
        outs = runSegment_(st, feed);
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

 private:
  // The Scan on the host: slices cut and stacked on the host, the body's
  // kernels per step.
  template <typename Get>
  Expected<std::vector<TensorData>> scan(const CudaProgram& p, const CudaStep& st, Get& get) {
    const CudaStep::LoopSlots& L = st.loop;
    const CudaBranch& body = st.branches.at(0);
    const size_t states = L.a.size();
    std::vector<TensorData> in;
    for (size_t i = 0; i < states + L.sliceIn.size(); ++i) {
      auto t = get(st.in[i]);
      if (!t) return t.status();
      in.push_back(std::move(*t));
    }
    std::vector<TensorData> state(in.begin(), in.begin() + long(states));
    std::vector<std::vector<TensorData>> parts(L.slices.size());
    const int64_t T = L.maxIterations;
    for (int64_t t = 0; t < T; ++t) {
      if (cancel_.cancelled()) return Status::error("CUDA run cancelled", st.node);
      std::vector<TensorData> feed = state;
      for (size_t j = 0; j < L.sliceIn.size(); ++j)
        feed.push_back(
            cfdriver::sliceAt(in[states + j], L.inAxis[j], L.inReverse[j] ? T - 1 - t : t));
      for (size_t i = feed.size(); i < body.inputs.size(); ++i) {
        auto v = get(body.inputs[i]);
        if (!v) return v.status();
        feed.push_back(std::move(*v));
      }
      auto outs = run(*body.program, std::move(feed));
      if (!outs) return outs.status();
      for (size_t i = 0; i < states; ++i) state[i] = std::move((*outs)[i]);
      for (size_t k = 0; k < parts.size(); ++k) parts[k].push_back(std::move((*outs)[states + k]));
    }
    Node where;
    where.name = st.node;
    for (size_t k = 0; k < parts.size(); ++k) {
      if (parts[k].empty()) {  // no steps: the planned empty shape
        const CudaSlot& out = p.slots[size_t(st.out[states + k])];
        state.push_back(TensorData(out.dtype, out.shape));
        continue;
      }
      auto stacked = cfdriver::stack(where, parts[k], L.outAxis[k], L.outReverse[k]);
      if (!stacked) return stacked.status();
      state.push_back(std::move(*stacked));
    }
    return state;
  }

  // The Loop on the host: the body program per iteration, carried values
  // handed on, scan slices stacked along a new first axis.
  template <typename Get>
  Expected<std::vector<TensorData>> loop(const CudaStep& st, Get& get) {
    const CudaStep::LoopSlots& L = st.loop;
    const CudaBranch& body = st.branches.at(0);
    const CudaProgram& bp = *body.program;
    int64_t maxTrip = INT64_MAX;
    bool go = true;
    for (int i = 0; i < 2; ++i) {
      if (st.in[size_t(i)] < 0) continue;
      auto t = get(st.in[size_t(i)]);
      if (!t) return t.status();
      if (i == 0) maxTrip = cfdriver::intAt(*t, 0);
      if (i == 1) go = cfdriver::truthy(*t);
    }
    std::vector<TensorData> carried;
    for (size_t i = 0; i < L.a.size(); ++i) {
      auto t = get(st.in[2 + i]);
      if (!t) return t.status();
      carried.push_back(std::move(*t));
    }
    std::vector<std::vector<TensorData>> scans(L.slices.size());
    const CudaSlot& iterSlot = bp.slots[size_t(bp.inputs[0])];
    const CudaSlot& condSlot = bp.slots[size_t(bp.inputs[1])];
    for (int64_t it = 0; it < maxTrip && go; ++it) {
      if (cancel_.cancelled()) return Status::error("CUDA run cancelled", st.node);
      if (it >= (int64_t(1) << 24))
        return Status::error("ran more than 2^24 iterations without stopping", st.node);
      TensorData iter(DType::I64, iterSlot.shape), cond(DType::Bool, condSlot.shape);
      iter.data<int64_t>()[0] = it;
      cond.data<bool>()[0] = true;
      std::vector<TensorData> feed{std::move(iter), std::move(cond)};
      for (TensorData& t : carried) feed.push_back(t);
      for (size_t i = feed.size(); i < body.inputs.size(); ++i) {
        auto t = get(body.inputs[i]);
        if (!t) return t.status();
        feed.push_back(std::move(*t));
      }
      auto outs = run(bp, std::move(feed));
      if (!outs) return outs.status();
      go = cfdriver::truthy((*outs)[0]);
      for (size_t i = 0; i < carried.size(); ++i) carried[i] = std::move((*outs)[1 + i]);
      for (size_t k = 0; k < scans.size(); ++k)
        scans[k].push_back(std::move((*outs)[1 + carried.size() + k]));
    }
    std::vector<TensorData> result = std::move(carried);
    for (size_t k = 0; k < scans.size(); ++k) {
      const CudaSlot& slice = bp.slots[size_t(bp.outputs[1 + L.a.size() + k])];
      std::vector<int64_t> shape{int64_t(scans[k].size())};
      shape.insert(shape.end(), slice.shape.begin(), slice.shape.end());
      TensorData stacked(slice.dtype, shape);
      size_t at = 0;
      for (const TensorData& t : scans[k]) {
        std::copy(t.bytes.begin(), t.bytes.end(), stacked.bytes.begin() + long(at));
        at += t.bytes.size();
      }
      result.push_back(std::move(stacked));
    }
    return result;
  }

  const CudaProgramPlan& plan_;
  const CudaSegmentRunner& runSegment_;
  const CancelToken& cancel_;
};

}  // namespace

Expected<std::vector<TensorData>> walkCudaProgram(const CudaProgramPlan& plan,
                                                  const std::vector<TensorData>& inputs,
                                                  const CudaSegmentRunner& runSegment,
                                                  const CancelToken& cancel) {
  if (inputs.size() != plan.inputs.size())
    return Status::error("the program needs " + std::to_string(plan.inputs.size()) +
                         " inputs, not " + std::to_string(inputs.size()));
  ProgramRun run(plan, runSegment, cancel);
  return run.run(*plan.top, inputs);
}

Expected<CudaRunResult> runCudaProgram(const CudaProgramPlan& plan,
                                       const std::vector<TensorData>& inputs,
                                       const std::string& arch, const CancelToken& cancel) {
  std::string why;
  if (!cudaDeviceAvailable(&why)) return Status::error(why);
  CudaRunResult result;
  std::map<const CudaLaunchPlan*, std::string> ptxOf;  // each segment compiled once
  auto onGpu = [&](const CudaStep& st,
                   const std::vector<TensorData>& in) -> Expected<std::vector<TensorData>> {
    auto it = ptxOf.find(st.plan.get());
    if (it == ptxOf.end()) {
      auto ptx = compileToPtx(st.plan->module.source, arch);
      if (!ptx) return ptx.status();
      it = ptxOf.emplace(st.plan.get(), *ptx).first;
    }
    auto r = runOnCuda(*st.plan, it->second, in, cancel);
    if (!r) return r.status();
    result.kernelMs.insert(result.kernelMs.end(), r->kernelMs.begin(), r->kernelMs.end());
    result.totalMs += r->totalMs;
    return std::move(r->outputs);
  };
  auto outs = walkCudaProgram(plan, inputs, onGpu, cancel);
  if (!outs) return outs.status();
  result.outputs = std::move(*outs);
  return result;
}

}  // namespace fuselens
