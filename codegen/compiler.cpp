// compileGraph: walks the optimized graph in topological order, lowers each
// kernel (fused group or compute op) to a LoopFunc, applies the schedule
// (planKernels, shared with export), hands them to the JIT (which compiles
// each distinct kernel once, in parallel, through the disk cache) and wires
// the CPU executor.
// Progress is reported per kernel; cancel is checked between kernels.
#include "codegen/compiler.h"

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "codegen/driver/driver_kernel.h"
#include "codegen/kernel_plan.h"
#include "codegen/llvm/llvm_backend.h"
#include "codegen/loop/loop_cost.h"
#include "codegen/lower/lower.h"
#include "codegen/runtime/cpu_executor.h"
#include "codegen/runtime/host_kernel.h"
#include "codegen/runtime/memory_plan.h"
#include "codegen/schedule/schedule.h"
#include "codegen/schedule/tuner.h"
#include "codegen/symbolic/symbolic_plan.h"
#include "codegen/target.h"
#include "core/ops/registry.h"

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

// Whether the reference fallback could run n: every op in it has an eager kernel.
bool hasEagerKernel(const Node& n) {
  if (n.op == kFusedOp && n.domain == kFuseLensDomain && n.body) {
    for (NodeId id : n.body->nodeIds())
      if (!hasEagerKernel(n.body->node(id))) return false;
    return true;
  }
  const OpInfo* info = OpRegistry::instance().find(n.domain, n.op);
  return info && info->eager;
}

// Whether n is a valid node by the op registry's shape inference (its declared
// output types agree). The fallback stands in for nodes lowering cannot
// handle, not for malformed ones: those keep the lowering's error.
bool validByInference(const Graph& g, const Node& n) {
  if (n.op == kFusedOp && n.domain == kFuseLensDomain) return true;  // typed by its body
  const OpInfo* info = OpRegistry::instance().find(n.domain, n.op);
  if (!info || !info->infer) return true;
  InferContext ctx{n, {}, {}};
  for (ValueId in : n.inputs) {
    TensorType none;
    none.rankKnown = false;
    ctx.inputTypes.push_back(in.valid() ? g.value(in).type : none);
    ctx.constInputs.push_back(in.valid() ? g.value(in).constant.get() : nullptr);
  }
  auto types = info->infer(ctx);
  if (!types || types->size() > n.outputs.size()) return false;
  for (size_t i = 0; i < types->size(); ++i) {
    const TensorType& want = g.value(n.outputs[i]).type;
    auto a = (*types)[i].staticShape(), b = want.staticShape();
    if ((*types)[i].dtype != want.dtype || (a && b && *a != *b)) return false;
  }
  return true;
}

Status checkStatic(const Graph& g, ValueId v) {
  const Value& val = g.value(v);
  if (val.type.rankKnown && val.type.isStatic()) return Status::ok();
  return Status::error("value '" + val.name + "' has the dynamic shape " + val.type.str() +
                       "; code generation needs static shapes for now");
}

class LlvmCompiledModule : public CompiledModule {
 public:
  LlvmCompiledModule(std::vector<KernelInfo> kernels, std::vector<LoopFunc> funcs,
                     std::vector<std::string> notes, std::unique_ptr<JitModule> jit,
                     CpuExecutor exec, CompileStats stats, std::vector<KernelCost> costs)
      : stats_(stats),
        costs_(std::move(costs)),
        kernels_(std::move(kernels)),
        funcs_(std::move(funcs)),
        notes_(std::move(notes)),
        jit_(std::move(jit)),
        exec_(std::move(exec)) {}

  const std::vector<KernelInfo>& kernels() const override { return kernels_; }
  // Printed on first request: a 20,000-node graph's 1,667 listings were 5%
  // of a warm compile, and most compiles never show them.
  std::string loopIrText() const override {
    std::call_once(listed_, [&] { loopIr_ = loopListing(funcs_, notes_); });
    return loopIr_;
  }
  std::string llvmIrText() const override { return jit_->irText(); }
  CompileStats stats() const override { return stats_; }
  Expected<std::vector<std::optional<TensorData>>> run(
      const std::map<std::string, TensorData>& inputs, const CancelToken& cancel) const override {
    return exec_.run(inputs, cancel);
  }
  Status runInto(const std::map<std::string, TensorData>& inputs,
                 std::map<std::string, TensorData>& outputs,
                 const CancelToken& cancel) const override {
    return exec_.runInto(inputs, outputs, cancel);
  }
  std::string memoryPlanText() const override { return exec_.memoryPlan().summary(); }
  int64_t arenaBytes() const override { return exec_.arenaBytes(); }
  Expected<std::vector<double>> profileKernels(const std::map<std::string, TensorData>& inputs,
                                               int runs) const override {
    return exec_.profile(inputs, runs);
  }
  Expected<ModuleProfile> profile(const std::map<std::string, TensorData>& inputs,
                                  int runs) const override {
    ModuleProfile p;
    FL_RETURN_IF_ERROR(exec_.profileRuns(inputs, runs, p.kernelSeconds, p.runSeconds,
                                         p.overheadSeconds, p.traceStart, p.traceSeconds,
                                         p.traceRunSeconds));
    return p;
  }
  std::vector<KernelCost> kernelCosts() const override { return costs_; }

 private:
  CompileStats stats_;
  std::vector<KernelCost> costs_;
  std::vector<KernelInfo> kernels_;
  std::vector<LoopFunc> funcs_;
  std::vector<std::string> notes_;
  mutable std::once_flag listed_;
  mutable std::string loopIr_;
  std::unique_ptr<JitModule> jit_;  // owns the code exec_ calls
  CpuExecutor exec_;
};

}  // namespace

std::string compileStatsText(const CompileStats& s) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "%zu kernels: %zu unique, %zu cached, %zu compiled on %d thread%s; lower %.2f s, "
                "LLVM %.2f s",
                s.kernels, s.uniqueKernels, s.cachedKernels, s.compiledKernels, s.compileThreads,
                s.compileThreads == 1 ? "" : "s", s.lowerSeconds, s.llvmWallSeconds);
  std::string text = buf;
  if (s.symbolicKernels > 0)
    text += "; " + std::to_string(s.symbolicKernels) + " symbolic (" +
            std::to_string(s.verifiedSymbolic) + " verified at this shape)";
  return text;
}

std::string fallbackKernelList(const std::vector<KernelInfo>& kernels) {
  std::string s;
  for (const KernelInfo& k : kernels)
    if (k.fallback) s += (s.empty() ? "" : ", ") + k.name;
  return s;
}

std::string loopListing(const std::vector<LoopFunc>& funcs, const std::vector<std::string>& notes) {
  std::string out;
  for (size_t i = 0; i < funcs.size(); ++i) {
    if (i) out += "\n";
    out += i < notes.size() && !notes[i].empty() ? notes[i] : printLoopFunc(funcs[i]);
  }
  return out;
}

std::vector<const LoopFunc*> KernelPlan::funcPtrs() const {
  std::vector<const LoopFunc*> ptrs;
  for (const LoopFunc& f : funcs) ptrs.push_back(&f);
  return ptrs;
}

namespace {

// The executor's view of kernel i of a plan (prepacked params, scratch), given its code.
ExecKernel execKernel(const KernelPlan& plan, size_t i, void (*fn)(void**)) {
  const LoopFunc& f = plan.funcs[i];
  ExecKernel k{plan.infos[i].name, fn, plan.infos[i].inputs, plan.infos[i].outputs, {}, 0};
  for (size_t pos = 0; pos < f.numInputs; ++pos)
    if (auto it = f.prepacked.find(f.params[pos].index); it != f.prepacked.end())
      k.prepacked[pos] = it->second;
  scratchLayout(f, &k.scratchBytes);
  return k;
}

// A host kernel's code is not loop IR: only its bytes are known, from the graph.
KernelCost costOf(const Graph& g, const KernelInfo& info, const LoopFunc& f) {
  if (!info.fallback && !info.driver) {
    LoopCost c = loopCost(f);
    return {c.flops, c.bytes};
  }
  KernelCost c;
  for (const auto* list : {&info.inputs, &info.outputs})
    for (ValueId v : *list)
      if (auto shape = g.value(v).type.staticShape()) {
        double n = 1;
        for (int64_t d : *shape) n *= double(d);
        c.bytes += n * double(dtypeSize(g.value(v).type.dtype));
      }
  return c;
}

}  // namespace

Expected<KernelPlan> planKernels(const Graph& g, const CompileOptions& opts,
                                 const Progress& progress, const CancelToken& cancel) {
  auto order = g.topoOrder();
  if (!order) return Status::error("the graph has a cycle", "graph '" + g.name + "'");
  for (ValueId v : g.inputs()) FL_RETURN_IF_ERROR(checkStatic(g, v));

  auto t0 = std::chrono::steady_clock::now();
  KernelPlan plan;
  plan.schedule = opts.schedule ? *opts.schedule : Schedule::defaults();
  std::string logPath = opts.tuningLog ? *opts.tuningLog : "";
  if (!opts.tuningLog)
    if (const char* env = std::getenv("FUSELENS_TUNING_LOG")) logPath = env;
  std::optional<TuningLog> log;
  if (!logPath.empty()) {
    auto l = TuningLog::load(logPath);
    if (!l) return l.status();
    log = std::move(*l);
  }
  const std::string target = codegenTarget().key();
  size_t kernelNodes = 0;
  for (NodeId id : *order) kernelNodes += needsKernel(g, g.node(id)) ? 1 : 0;
  for (NodeId id : *order) {
    const Node& n = g.node(id);
    // With the fallback, a value whose shape is known only at run time (NonZero,
    // Loop outputs) flows through host kernels: lowering refuses every node that
    // touches it, so each becomes one.
    // Without it, only a driver kernel (tried below) may produce such a value.
    Status dynamicOutput = Status::ok();
    for (ValueId v : n.outputs)
      if (Status st = checkStatic(g, v); !st && dynamicOutput) dynamicOutput = st;
    if (!needsKernel(g, n)) {  // a view: shares its input's storage
      plan.aliases.emplace_back(n.outputs[0], n.inputs[0]);
      continue;
    }
    if (cancel.cancelled()) return Status::error("compilation cancelled");
    KernelInfo info{kernelName(plan.infos.size(), n), id, {}, n.outputs};
    for (ValueId v : n.inputs)
      if (v.valid()) info.inputs.push_back(v);
    report(progress, double(plan.infos.size()) / double(kernelNodes + 1), "lower " + info.name);
    Schedule sched = plan.schedule;
    if (log)
      if (auto tuned = log->find(target, kernelSignature(g, n))) sched = *tuned;
    Status driverError = Status::ok();  // a driver's refusal is the better fallback reason
    if (auto drv = lowerDriverKernel(g, n, info.name, opts)) {
      if (*drv) {
        info.driver = true;
        info.driverSummary = (*drv)->summary;
        LoopFunc placeholder;  // never called: the executor runs the driver
        placeholder.name = info.name;
        plan.schedules.push_back(sched);
        plan.notes.push_back("// " + info.name + ": driver kernel, " + info.driverSummary + "\n" +
                             (*drv)->loopIr);
        plan.funcs.push_back(std::move(placeholder));
        plan.drivers.push_back(std::move((*drv)->run));
        plan.infos.push_back(std::move(info));
        continue;
      }
      if (!opts.fallback || !hasEagerKernel(n)) return drv->status();
      driverError = drv->status();
    }
    if (!dynamicOutput && !opts.fallback)
      return Status::error(dynamicOutput.diagnostic().message,
                           "node '" + n.name + "' (" + n.op + ")");
    auto fn = lowerKernel(g, n, info.name, sched);
    if (!fn && opts.fallback && !cancel.cancelled() && hasEagerKernel(n) &&
        validByInference(g, n)) {
      // A host kernel stands in; its placeholder LoopFunc keeps funcs and infos
      // parallel and compiles to an empty function that is never called.
      info.fallback = true;
      info.fallbackReason = (driverError ? fn.status() : driverError).diagnostic().str();
      LoopFunc placeholder;
      placeholder.name = info.name;
      plan.schedules.push_back(sched);
      plan.notes.push_back("// " + info.name + ": " + kFallbackLabel + "\n//   " +
                           info.fallbackReason + "\n");
      plan.funcs.push_back(std::move(placeholder));
      plan.drivers.emplace_back();
      plan.infos.push_back(std::move(info));
      continue;
    }
    if (!fn) return fn.status();
    if (Status st = scheduleKernel(*fn, sched); !st) {
      // A tuning-log entry whose steps no longer fit the kernel (lowering
      // changed since it was measured) must not break the compile: the
      // kernel gets the plain schedule instead. An explicit schedule's error stands.
      if (sched == plan.schedule) return st;
      sched = plan.schedule;
      fn = lowerKernel(g, n, info.name, sched);
      if (!fn) return fn.status();
      FL_RETURN_IF_ERROR(scheduleKernel(*fn, sched));
    }
    plan.schedules.push_back(sched);
    plan.notes.emplace_back();  // printed from the func when the listing is asked for
    plan.funcs.push_back(std::move(*fn));
    plan.drivers.emplace_back();
    plan.infos.push_back(std::move(info));
  }
  plan.lowerSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return plan;
}

Expected<std::unique_ptr<CompiledModule>> compileGraph(const Graph& g, const CompileOptions& opts,
                                                       const Progress& progress,
                                                       const CancelToken& cancel) {
  auto plan = planKernels(g, opts, progress, cancel);
  if (!plan) return plan.status();
  size_t n = plan->infos.size();
  if (cancel.cancelled()) return Status::error("compilation cancelled");
  report(progress, double(n) / double(n + 1), "LLVM optimize and JIT");
  CompileStats stats;
  // The listing shows the kernels as planned, before a symbolic kernel's
  // instance stands in for one (a copy shares the statement trees).
  std::vector<LoopFunc> listed;
  if (opts.symbolic) {
    listed = plan->funcs;
    applySymbolicKernels(*opts.symbolic, g, *plan, stats);
  }
  stats.lowerSeconds = plan->lowerSeconds;
  // A kernel's schedule is part of its key; most kernels share the plan's.
  const std::string planSchedule = plan->schedule.toJson();
  std::vector<std::string> contexts;
  for (const Schedule& s : plan->schedules)
    contexts.push_back(s == plan->schedule ? planSchedule : s.toJson());
  auto jit = JitModule::compile(plan->funcPtrs(), opts.optLevel, contexts);
  if (!jit) return jit.status();
  const JitModule& j = **jit;
  stats.llvmEmitSeconds = j.emitSeconds;
  stats.llvmOptimizeSeconds = j.optimizeSeconds;
  stats.llvmCodegenSeconds = j.codegenSeconds + j.linkSeconds;
  stats.llvmWallSeconds = j.wallSeconds;
  stats.kernels = j.kernels;
  stats.uniqueKernels = j.unique;
  stats.cachedKernels = j.cached;
  stats.compiledKernels = j.compiled;
  stats.compileThreads = j.threads;
  stats.cacheDir = j.cacheDir;

  std::vector<ExecKernel> exec;
  for (size_t i = 0; i < n; ++i) {
    exec.push_back(execKernel(*plan, i, (*jit)->kernel(i)));
    if (plan->infos[i].fallback) exec.back().host = makeHostKernel(g, g.node(plan->infos[i].node));
    if (plan->infos[i].driver) exec.back().host = plan->drivers[i];
  }
  std::vector<KernelCost> costs;
  for (size_t i = 0; i < n; ++i) costs.push_back(costOf(g, plan->infos[i], plan->funcs[i]));
  auto buffers = runPlan(g, opts.bufferPlan);
  if (!buffers) return buffers.status();
  CpuExecutor executor(std::make_shared<const Graph>(g), std::move(exec), std::move(plan->aliases),
                       std::move(*buffers));
  report(progress, 1.0, "compiled");
  return std::unique_ptr<CompiledModule>(std::make_unique<LlvmCompiledModule>(
      std::move(plan->infos), opts.symbolic ? std::move(listed) : std::move(plan->funcs),
      std::move(plan->notes), std::move(*jit), std::move(executor), stats, std::move(costs)));
}

}  // namespace fuselens

namespace fuselens {

Status CompiledModule::runInto(const std::map<std::string, TensorData>&,
                               std::map<std::string, TensorData>&, const CancelToken&) const {
  return Status::error("this compiled module has no arena runtime; use run()");
}

}  // namespace fuselens
