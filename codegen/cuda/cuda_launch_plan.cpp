// See cuda_launch_plan.h. Placement follows the exported CPU runtime's
// (codegen/export/export.cpp): a view's output is its data input's storage, a
// graph output that is also an input, a constant or an earlier output is
// copied at the end, every other value sits at its memory-plan offset.
#include "codegen/cuda/cuda_launch_plan.h"

#include <cstring>
#include <map>

namespace fuselens {
namespace {

constexpr int64_t kWeightAlign = 256;  // what cudaMalloc guarantees, so any load width is aligned

class Placer {
 public:
  Placer(const Graph& g, CudaLaunchPlan& p) : g_(g), p_(p) {
    for (auto& [v, src] : p.module.aliases) alias_[v.index] = src.index;
    for (size_t i = 0; i < g.inputs().size(); ++i) input_.emplace(storage(g.inputs()[i]), i);
    for (size_t i = 0; i < g.outputs().size(); ++i) {
      const int32_t s = storage(g.outputs()[i]);
      if (!input_.count(s) && !output_.count(s) && !g.value(ValueId(s)).constant)
        output_[s] = int64_t(i);
    }
  }

  int32_t storage(ValueId v) const {
    int32_t i = v.index;
    for (auto it = alias_.find(i); it != alias_.end(); it = alias_.find(i)) i = it->second;
    return i;
  }

  bool ownsOutput(size_t i) const {
    auto it = output_.find(storage(g_.outputs()[i]));
    return it != output_.end() && it->second == int64_t(i);
  }

  Expected<CudaArg> place(ValueId v) {
    const int32_t s = storage(v);
    const Value& val = g_.value(ValueId(s));
    if (val.constant) {
      auto [it, fresh] = constants_.emplace(s, 0);
      if (fresh) it->second = addWeights(*val.constant);
      return CudaArg{CudaArg::Kind::Weights, it->second};
    }
    if (auto it = input_.find(s); it != input_.end())
      return CudaArg{CudaArg::Kind::Input, int64_t(it->second)};
    if (auto it = output_.find(s); it != output_.end())
      return CudaArg{CudaArg::Kind::Output, it->second};
    auto at = p_.memory.offsetOf.find(s);
    if (at == p_.memory.offsetOf.end())
      return Status::error("value '" + val.name + "' has no place in the memory plan",
                           "CUDA launch plan");
    return CudaArg{CudaArg::Kind::Arena, at->second};
  }

  int64_t addWeights(const TensorData& t) {
    const int64_t at =
        (int64_t(p_.weights.size()) + kWeightAlign - 1) / kWeightAlign * kWeightAlign;
    p_.weights.resize(size_t(at) + t.bytes.size());
    if (!t.bytes.empty()) std::memcpy(p_.weights.data() + at, t.bytes.data(), t.bytes.size());
    return at;
  }

 private:
  const Graph& g_;
  CudaLaunchPlan& p_;
  std::map<int32_t, int32_t> alias_;
  std::map<int32_t, size_t> input_;
  std::map<int32_t, int64_t> output_;
  std::map<int32_t, int64_t> constants_;  // value index -> weights offset
};

Expected<std::vector<CudaTensorSpec>> specs(const Graph& g, const std::vector<ValueId>& vs) {
  std::vector<CudaTensorSpec> out;
  for (ValueId v : vs) {
    const Value& val = g.value(v);
    auto shape = val.type.staticShape();
    if (!shape)
      return Status::error("graph input or output '" + val.name + "' has the dynamic type " +
                               val.type.str() + ": bind its dims (--dim/--shape) to run on CUDA",
                           "CUDA launch plan");
    out.push_back({val.name, val.type.dtype, *shape,
                   *val.type.numElements() * int64_t(dtypeSize(val.type.dtype))});
  }
  return out;
}

// {M, N, K} of the first MatMul or Gemm of node n (a group's body, or n), with
// batch dims folded into M; empty when it has none or a shape is dynamic.
std::vector<int64_t> gemmShape(const Graph& g, const Node& n) {
  const Graph* body = n.body ? n.body.get() : &g;
  std::vector<NodeId> ids = n.body ? body->nodeIds() : std::vector<NodeId>{n.id};
  for (NodeId id : ids) {
    const Node& m = body->node(id);
    if ((m.op != "MatMul" && m.op != "Gemm") || m.inputs.size() < 2) continue;
    auto a = body->value(m.inputs[0]).type.staticShape();
    auto y = body->value(m.outputs[0]).type.staticShape();
    if (!a || !y || a->empty() || y->empty()) return {};
    int64_t k = a->back();
    if (m.op == "Gemm" && a->size() == 2 && m.attrs.getInt("transA", 0)) k = (*a)[0];
    int64_t rows = 1;
    for (size_t i = 0; i + 1 < y->size(); ++i) rows *= (*y)[i];
    return {rows, y->back(), k};
  }
  return {};
}

}  // namespace

Expected<CudaLaunchPlan> planCudaLaunches(const Graph& g, std::shared_ptr<const BufferPlan> given,
                                          const Progress& progress, const CancelToken& cancel,
                                          const std::string& kernelPrefix) {
  CudaLaunchPlan p;
  auto ins = specs(g, g.inputs());
  if (!ins) return ins.status();
  auto outs = specs(g, g.outputs());
  if (!outs) return outs.status();
  p.inputs = std::move(*ins);
  p.outputs = std::move(*outs);
  auto m = emitCudaModule(g, progress, cancel, kernelPrefix);
  if (!m) return m.status();
  p.module = std::move(*m);
  int64_t maxScratch = 0;
  for (const CudaKernel& k : p.module.kernels) maxScratch = std::max(maxScratch, k.scratchBytes);
  auto buffers = runPlan(g, std::move(given));
  if (!buffers) return buffers.status();
  p.memory = arenaLayout(std::move(*buffers), maxScratch);

  Placer placer(g, p);
  for (size_t k = 0; k < p.module.kernels.size(); ++k) {
    const CudaKernel& kernel = p.module.kernels[k];
    const KernelInfo& info = p.module.infos[k];
    const size_t numInputs = kernel.paramTypes.size() - info.outputs.size();
    std::vector<CudaArg> args;
    size_t next = 0, packed = 0;
    for (size_t pos = 0; pos < kernel.paramTypes.size(); ++pos) {
      Expected<CudaArg> a = CudaArg{};
      if (packed < kernel.prepackedParams.size() &&
          kernel.prepackedParams[packed] == int32_t(pos)) {
        a = CudaArg{CudaArg::Kind::Weights, placer.addWeights(*kernel.prepackedData[packed++])};
      } else if (pos < numInputs) {
        if (next >= info.inputs.size())
          return Status::error("kernel " + kernel.name + " has more params than inputs",
                               "CUDA launch plan");
        a = placer.place(info.inputs[next++]);
      } else {
        a = placer.place(info.outputs[pos - numInputs]);
      }
      if (!a) return a.status();
      args.push_back(*a);
    }
    args.push_back(CudaArg{CudaArg::Kind::Arena, p.memory.scratchOffset()});
    p.gemmShapes.push_back(gemmShape(g, g.node(info.node)));
    p.args.push_back(std::move(args));
  }
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    if (placer.ownsOutput(i)) continue;
    auto from = placer.place(g.outputs()[i]);
    if (!from) return from.status();
    p.copies.push_back({int64_t(i), *from, p.outputs[i].bytes});
  }
  return p;
}

}  // namespace fuselens
