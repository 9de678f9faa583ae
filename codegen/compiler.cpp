// compileGraph: walks the optimized graph in topological order, lowers each
// kernel (fused group or compute op) to a LoopFunc, applies the default
// schedule, compiles them all as one LLVM module and wires the CPU executor.
// Progress is reported per kernel; cancel is checked between kernels.
#include "codegen/compiler.h"

#include <cctype>

#include "codegen/cpu_executor.h"
#include "codegen/llvm_backend.h"
#include "codegen/lower.h"
#include "codegen/schedule.h"

namespace fuselens {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = std::isalnum(static_cast<unsigned char>(c)) ? char(std::tolower(c)) : '_';
  return s;
}

// "k0_fused_matmul_add_relu", "k3_softmax".
std::string kernelName(size_t index, const Node& n) {
  std::string name = "k" + std::to_string(index) + "_";
  if (!(n.op == kFusedOp && n.domain == kFuseLensDomain && n.body)) return name + lower(n.op);
  name += "fused";
  auto order = n.body->topoOrder();
  size_t shown = 0;
  for (NodeId id : order.value_or(n.body->nodeIds())) {
    if (++shown > 6) return name + "_etc";
    name += "_" + lower(n.body->node(id).op);
  }
  return name;
}

Status checkStatic(const Graph& g, ValueId v) {
  const Value& val = g.value(v);
  if (val.type.rankKnown && val.type.isStatic()) return Status::ok();
  return Status::error("value '" + val.name + "' has the dynamic shape " + val.type.str() +
                       "; code generation needs static shapes for now");
}

class LlvmCompiledModule : public CompiledModule {
 public:
  LlvmCompiledModule(std::vector<KernelInfo> kernels, std::string loopIr,
                     std::unique_ptr<JitModule> jit, CpuExecutor exec)
      : kernels_(std::move(kernels)),
        loopIr_(std::move(loopIr)),
        jit_(std::move(jit)),
        exec_(std::move(exec)) {}

  const std::vector<KernelInfo>& kernels() const override { return kernels_; }
  std::string loopIrText() const override { return loopIr_; }
  std::string llvmIrText() const override { return jit_->irText(); }
  Expected<std::vector<std::optional<TensorData>>> run(
      const std::map<std::string, TensorData>& inputs, const CancelToken& cancel) const override {
    return exec_.run(inputs, cancel);
  }

 private:
  std::vector<KernelInfo> kernels_;
  std::string loopIr_;
  std::unique_ptr<JitModule> jit_;  // owns the code exec_ calls
  CpuExecutor exec_;
};

}  // namespace

Expected<std::unique_ptr<CompiledModule>> compileGraph(const Graph& g, const CompileOptions& opts,
                                                       const Progress& progress,
                                                       const CancelToken& cancel) {
  auto order = g.topoOrder();
  if (!order) return Status::error("the graph has a cycle", "graph '" + g.name + "'");
  for (ValueId v : g.inputs()) FL_RETURN_IF_ERROR(checkStatic(g, v));

  const Schedule sched = opts.schedule ? *opts.schedule : Schedule::defaults();
  std::vector<KernelInfo> infos;
  std::vector<LoopFunc> funcs;
  std::vector<std::pair<ValueId, ValueId>> aliases;
  size_t kernelNodes = 0;
  for (NodeId id : *order) kernelNodes += isAliasNode(g.node(id)) ? 0 : 1;
  std::string loopIr;
  for (NodeId id : *order) {
    const Node& n = g.node(id);
    for (ValueId v : n.outputs) FL_RETURN_IF_ERROR(checkStatic(g, v));
    if (isAliasNode(n)) {
      if (n.inputs.empty() || !n.inputs[0].valid() || n.outputs.size() != 1)
        return Status::error(n.op + " needs a data input and one output",
                             "node '" + n.name + "' (" + n.op + ")");
      aliases.emplace_back(n.outputs[0], n.inputs[0]);
      continue;
    }
    if (cancel.cancelled()) return Status::error("compilation cancelled");
    KernelInfo info{kernelName(infos.size(), n), id, {}, n.outputs};
    for (ValueId v : n.inputs)
      if (v.valid()) info.inputs.push_back(v);
    report(progress, double(infos.size()) / double(kernelNodes + 1), "lower " + info.name);
    auto fn = lowerKernel(g, n, info.name, sched);
    if (!fn) return fn.status();
    applySchedule(*fn, sched);
    loopIr += (loopIr.empty() ? "" : "\n") + printLoopFunc(*fn);
    funcs.push_back(std::move(*fn));
    infos.push_back(std::move(info));
  }

  if (cancel.cancelled()) return Status::error("compilation cancelled");
  report(progress, double(kernelNodes) / double(kernelNodes + 1), "LLVM optimize and JIT");
  std::vector<const LoopFunc*> ptrs;
  for (const LoopFunc& f : funcs) ptrs.push_back(&f);
  auto jit = JitModule::compile(ptrs, opts.optLevel);
  if (!jit) return jit.status();

  std::vector<ExecKernel> exec;
  for (size_t i = 0; i < infos.size(); ++i) {
    ExecKernel k{infos[i].name, (*jit)->kernel(i), infos[i].inputs, infos[i].outputs, {}};
    for (size_t pos = 0; pos < funcs[i].numInputs; ++pos)
      if (auto it = funcs[i].prepacked.find(funcs[i].params[pos].index);
          it != funcs[i].prepacked.end())
        k.prepacked[pos] = it->second;
    exec.push_back(std::move(k));
  }
  CpuExecutor executor(std::make_shared<const Graph>(g), std::move(exec), std::move(aliases));
  report(progress, 1.0, "compiled");
  return std::unique_ptr<CompiledModule>(std::make_unique<LlvmCompiledModule>(
      std::move(infos), std::move(loopIr), std::move(*jit), std::move(executor)));
}

}  // namespace fuselens
