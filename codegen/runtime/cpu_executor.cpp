// The CPU executor (see cpu_executor.h).
#include "codegen/runtime/cpu_executor.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>

#include "codegen/runtime/kernel_hook.h"

namespace fuselens {
namespace {

thread_local const CancelToken* tRunCancel = nullptr;

// Makes `cancel` the current run's token on this thread until scope exit.
struct RunCancelScope {
  const CancelToken* saved;
  explicit RunCancelScope(const CancelToken& c) : saved(tRunCancel) { tRunCancel = &c; }
  ~RunCancelScope() { tRunCancel = saved; }
};

}  // namespace

CancelToken currentRunCancelToken() { return tRunCancel ? *tRunCancel : CancelToken(); }

// One 64-byte aligned block, freed on scope exit; null when bytes is 0.
struct AlignedBlock {
  void* p = nullptr;
  ~AlignedBlock() { std::free(p); }
};

namespace {

Status allocate(AlignedBlock& b, int64_t bytes, const std::string& what) {
  if (bytes <= 0) return Status::ok();
  b.p = std::aligned_alloc(64, size_t((bytes + 63) / 64 * 64));
  if (!b.p)
    return Status::error("cannot allocate " + std::to_string(bytes) + " bytes for the " + what);
  return Status::ok();
}

}  // namespace

CpuExecutor::CpuExecutor(std::shared_ptr<const Graph> g, std::vector<ExecKernel> kernels,
                         std::vector<std::pair<ValueId, ValueId>> aliases,
                         std::shared_ptr<const BufferPlan> buffers)
    : g_(std::move(g)), kernels_(std::move(kernels)), aliases_(std::move(aliases)) {
  for (auto& [v, src] : aliases_) aliasSource_[v.index] = src;
  int64_t maxScratch = 0;
  for (const ExecKernel& k : kernels_) maxScratch = std::max(maxScratch, k.scratchBytes);
  plan_ = arenaLayout(std::move(buffers), maxScratch);
  for (ValueId v : g_->inputs()) inputByName_[g_->value(v).name] = v;
}

ValueId CpuExecutor::storageOf(ValueId v) const {
  for (auto it = aliasSource_.find(v.index); it != aliasSource_.end();
       it = aliasSource_.find(v.index))
    v = it->second;
  return v;
}

Status CpuExecutor::checkInputs(const std::map<std::string, TensorData>& inputs) const {
  for (const auto& [name, t] : inputs)
    if (!inputByName_.count(name)) {
      std::string names;
      for (ValueId v : g_->inputs()) names += (names.empty() ? "" : ", ") + g_->value(v).name;
      return Status::error("there is no graph input named '" + name + "'; the inputs are " + names);
    }
  for (const auto& [name, v] : inputByName_) {
    const TensorType& want = g_->value(v).type;
    auto it = inputs.find(name);
    if (it == inputs.end())
      return Status::error("input '" + name + "' (" + want.str() + ") is missing");
    const TensorData& t = it->second;
    if (t.dtype != want.dtype)
      return Status::error("input '" + name + "' is " + std::string(dtypeName(t.dtype)) +
                           "; the graph expects " + std::string(dtypeName(want.dtype)));
    auto shape = want.staticShape();
    if (!shape || *shape != t.shape)
      return Status::error("input '" + name + "' has shape " + formatShape(t.shape) +
                           "; the graph expects " + want.str());
    if (t.bytes.size() != size_t(t.numel()) * dtypeSize(t.dtype))
      return Status::error("input '" + name + "' holds " + std::to_string(t.bytes.size()) +
                           " bytes; " + want.str() + " needs " +
                           std::to_string(size_t(t.numel()) * dtypeSize(t.dtype)));
  }
  return Status::ok();
}

Status CpuExecutor::call(const ExecKernel& k, const std::function<void*(ValueId)>& data,
                         void* scratch, std::vector<void*>& args) const {
  args.clear();
  size_t nextInput = 0;
  for (size_t pos = 0; pos < k.inputs.size() + k.prepacked.size(); ++pos) {
    if (auto it = k.prepacked.find(pos); it != k.prepacked.end()) {
      args.push_back(const_cast<std::byte*>(it->second->bytes.data()));
      continue;
    }
    ValueId v = k.inputs[nextInput++];
    void* p = data(v);
    if (!p && g_->value(storageOf(v)).type.numElements().value_or(0) > 0)
      return Status::error("internal: value '" + g_->value(v).name + "' is not computed yet",
                           "kernel " + k.name);
    args.push_back(p);
  }
  for (ValueId v : k.outputs) args.push_back(data(v));
  if (k.host) return callHost(k, args);
  if (k.scratchBytes > 0) args.push_back(scratch);
  k.fn(args.data());
  return Status::ok();
}

Status CpuExecutor::callHost(const ExecKernel& k, const std::vector<void*>& args) const {
  std::vector<TensorData> ins;
  ins.reserve(k.inputs.size());
  std::vector<const TensorData*> ptrs;
  for (size_t i = 0; i < k.inputs.size(); ++i) {
    const TensorType& t = g_->value(k.inputs[i]).type;
    auto shape = t.staticShape();
    if (!shape)
      return Status::error("value '" + g_->value(k.inputs[i]).name +
                               "' has a shape known only at run time; run() handles it, the "
                               "arena runtime cannot",
                           "kernel " + k.name);
    ins.emplace_back(t.dtype, *shape);
    if (!ins.back().bytes.empty())
      std::memcpy(ins.back().bytes.data(), args[i], ins.back().bytes.size());
    ptrs.push_back(&ins.back());
  }
  auto outs = k.host(ptrs);
  if (!outs) return outs.status();
  for (size_t o = 0; o < k.outputs.size(); ++o) {
    const TensorData& t = (*outs)[o];
    auto shape = g_->value(k.outputs[o]).type.staticShape();
    if (!shape || *shape != t.shape)
      return Status::error(
          "output '" + g_->value(k.outputs[o]).name +
              "' has a shape known only at run time; the arena runtime cannot hold it",
          "kernel " + k.name);
    if (!t.bytes.empty()) std::memcpy(args[k.inputs.size() + o], t.bytes.data(), t.bytes.size());
  }
  return Status::ok();
}

namespace {

// Hands a kernel's outputs to the thread's after-kernel hook, when one is set.
void afterKernel(const ExecKernel& k, std::vector<std::optional<TensorData>>& slots) {
  const AfterKernelHook* hook = afterKernelHook();
  if (!hook) return;
  std::vector<TensorData*> outs;
  for (ValueId v : k.outputs)
    if (slots[v.index]) outs.push_back(&*slots[v.index]);
  (*hook)(k.name, outs);
}

}  // namespace

Expected<std::vector<std::optional<TensorData>>> CpuExecutor::run(
    const std::map<std::string, TensorData>& inputs, const CancelToken& cancel) const {
  FL_RETURN_IF_ERROR(checkInputs(inputs));
  RunCancelScope cancelScope(cancel);
  std::vector<std::optional<TensorData>> slots(g_->valueCapacity());
  for (ValueId v : g_->inputs()) slots[v.index] = inputs.at(g_->value(v).name);
  AlignedBlock scratch;
  FL_RETURN_IF_ERROR(allocate(scratch, plan_.scratchBytes, "kernel scratch"));
  // Kernels only read their inputs; the const_cast meets the C ABI of void** args.
  auto data = [&](ValueId v) -> void* {
    ValueId s = storageOf(v);
    const Value& val = g_->value(s);
    if (val.constant) return const_cast<std::byte*>(val.constant->bytes.data());
    return slots[s.index] ? slots[s.index]->bytes.data() : nullptr;
  };
  std::vector<void*> args;
  for (const ExecKernel& k : kernels_) {
    if (cancel.cancelled()) return Status::error("cancelled before kernel " + k.name);
    if (k.host) {  // outputs of any shape, dynamic ones included, straight into slots
      std::vector<const TensorData*> ins;
      std::vector<TensorData> reshaped;  // aliases read in their own shape, not their source's
      reshaped.reserve(k.inputs.size());
      for (ValueId v : k.inputs) {
        ValueId s = storageOf(v);
        const Value& val = g_->value(s);
        const TensorData* t = val.constant     ? val.constant.get()
                              : slots[s.index] ? &*slots[s.index]
                                               : nullptr;
        auto shape = g_->value(v).type.staticShape();
        if (t && s != v && shape && *shape != t->shape) {
          reshaped.push_back(*t);
          reshaped.back().shape = *shape;
          t = &reshaped.back();
        }
        ins.push_back(t);
      }
      auto outs = k.host(ins);
      if (!outs) return outs.status();
      for (size_t o = 0; o < k.outputs.size() && o < outs->size(); ++o)
        slots[k.outputs[o].index] = std::move((*outs)[o]);
      afterKernel(k, slots);
      continue;
    }
    try {
      for (ValueId v : k.outputs) {
        const TensorType& t = g_->value(v).type;
        slots[v.index] = TensorData(t.dtype, *t.staticShape());
      }
    } catch (const std::bad_alloc&) {
      return Status::error("cannot allocate the outputs of kernel " + k.name);
    }
    FL_RETURN_IF_ERROR(call(k, data, scratch.p, args));
    afterKernel(k, slots);
  }
  // Aliases and constant outputs get their own tensors in the result.
  auto materialize = [&](ValueId v) {
    ValueId s = storageOf(v);
    const Value& src = g_->value(s);
    const TensorData* from = src.constant     ? src.constant.get()
                             : slots[s.index] ? &*slots[s.index]
                                              : nullptr;
    if (!from) return;
    TensorData t = *from;
    if (auto shape = g_->value(v).type.staticShape()) t.shape = *shape;
    slots[v.index] = std::move(t);
  };
  for (auto& [v, src] : aliases_) materialize(v);
  for (ValueId o : g_->outputs())
    if (!slots[o.index]) materialize(o);
  return slots;
}

Status CpuExecutor::runInto(const std::map<std::string, TensorData>& inputs,
                            std::map<std::string, TensorData>& outputs, const CancelToken& cancel,
                            std::vector<double>* kernelSeconds,
                            std::vector<double>* kernelStarts) const {
  auto runStart = std::chrono::steady_clock::now();
  FL_RETURN_IF_ERROR(checkInputs(inputs));
  RunCancelScope cancelScope(cancel);
  // Graph outputs: the caller's tensors (allocated here when absent). The first
  // output naming a storage value is written by its kernel; others are copies.
  std::map<int32_t, void*> external;  // storage value -> caller memory
  std::vector<std::pair<TensorData*, ValueId>> copies;
  for (ValueId v : g_->inputs())
    external[v.index] = const_cast<std::byte*>(inputs.at(g_->value(v).name).bytes.data());
  for (ValueId o : g_->outputs()) {
    const Value& val = g_->value(o);
    if (!val.type.staticShape())
      return Status::error("output '" + val.name + "' has a shape known only at run time (" +
                           val.type.str() + "); run() handles it, the arena runtime cannot");
    auto shape = *val.type.staticShape();
    auto it = outputs.find(val.name);
    if (it == outputs.end()) {
      try {
        it = outputs.emplace(val.name, TensorData(val.type.dtype, shape)).first;
      } catch (const std::bad_alloc&) {
        return Status::error("cannot allocate output '" + val.name + "'");
      }
    }
    TensorData& t = it->second;
    if (t.dtype != val.type.dtype || t.shape != shape ||
        t.bytes.size() != size_t(t.numel()) * dtypeSize(t.dtype))
      return Status::error("output '" + val.name + "' is " + std::string(dtypeName(t.dtype)) +
                           formatShape(t.shape) + "; the graph produces " + val.type.str());
    ValueId s = storageOf(o);
    if (external.count(s.index) || g_->value(s).constant)
      copies.emplace_back(&t, s);
    else
      external[s.index] = t.bytes.data();
  }
  // The arena is kept between runs; a concurrent run gets a fresh one.
  std::unique_lock<std::mutex> reuse(arenaCache_->mu, std::try_to_lock);
  AlignedBlock freshArena, freshScratch;
  void* arenaBase = nullptr;
  void* scratch = nullptr;
  const std::string what = "arena (" + plan_.summary() + ")";
  if (reuse.owns_lock()) {
    auto keep = [&](std::shared_ptr<AlignedBlock>& cached, int64_t bytes,
                    const std::string& name) -> Expected<void*> {
      if (!cached && bytes > 0) {
        auto block = std::make_shared<AlignedBlock>();
        FL_RETURN_IF_ERROR(allocate(*block, bytes, name));
        cached = block;
      }
      return cached ? cached->p : nullptr;
    };
    auto a = keep(arenaCache_->arena, plan_.arenaBytes, what);
    if (!a) return a.status();
    auto s = keep(arenaCache_->scratch, plan_.scratchBytes, "kernel scratch");
    if (!s) return s.status();
    arenaBase = *a, scratch = *s;
  } else {
    FL_RETURN_IF_ERROR(allocate(freshArena, plan_.arenaBytes, what));
    FL_RETURN_IF_ERROR(allocate(freshScratch, plan_.scratchBytes, "kernel scratch"));
    arenaBase = freshArena.p, scratch = freshScratch.p;
  }
  auto data = [&](ValueId v) -> void* {
    ValueId s = storageOf(v);
    const Value& val = g_->value(s);
    if (val.constant) return const_cast<std::byte*>(val.constant->bytes.data());
    if (auto it = external.find(s.index); it != external.end()) return it->second;
    auto at = plan_.offsetOf.find(s.index);
    return at == plan_.offsetOf.end() ? nullptr : static_cast<std::byte*>(arenaBase) + at->second;
  };
  std::vector<void*> args;
  if (kernelSeconds) kernelSeconds->assign(kernels_.size(), 0.0);
  if (kernelStarts) kernelStarts->assign(kernels_.size(), 0.0);
  for (size_t i = 0; i < kernels_.size(); ++i) {
    const ExecKernel& k = kernels_[i];
    if (cancel.cancelled()) return Status::error("cancelled before kernel " + k.name);
    auto t0 = std::chrono::steady_clock::now();
    if (kernelStarts) (*kernelStarts)[i] = std::chrono::duration<double>(t0 - runStart).count();
    FL_RETURN_IF_ERROR(call(k, data, scratch, args));
    if (kernelSeconds)
      (*kernelSeconds)[i] =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  for (auto& [t, s] : copies) {
    const void* from = data(s);
    if (from) std::memcpy(t->bytes.data(), from, t->bytes.size());
  }
  return Status::ok();
}

}  // namespace fuselens

namespace fuselens {

Expected<std::vector<double>> CpuExecutor::profile(const std::map<std::string, TensorData>& inputs,
                                                   int runs) const {
  std::map<std::string, TensorData> out;
  std::vector<double> one;
  FL_RETURN_IF_ERROR(runInto(inputs, out, {}, &one));  // warm-up
  std::vector<std::vector<double>> all(kernels_.size());
  for (int r = 0; r < std::max(1, runs); ++r) {
    FL_RETURN_IF_ERROR(runInto(inputs, out, {}, &one));
    for (size_t i = 0; i < one.size(); ++i) all[i].push_back(one[i]);
  }
  std::vector<double> med;
  for (auto& v : all) {
    std::sort(v.begin(), v.end());
    med.push_back(v[v.size() / 2]);
  }
  return med;
}

Status CpuExecutor::profileRuns(const std::map<std::string, TensorData>& inputs, int runs,
                                std::vector<double>& kernelMedians, double& runMedian,
                                double& overheadMedian, std::vector<double>& traceStart,
                                std::vector<double>& traceSeconds, double& traceRun) const {
  // Each run gives its kernels' times, its whole time and the difference (the
  // executor's own work); medians of each, taken over the same runs, so a run
  // preempted by another process shifts neither the kernels nor the overhead.
  std::map<std::string, TensorData> out;
  std::vector<double> secs, starts;
  FL_RETURN_IF_ERROR(runInto(inputs, out, {}, &secs, &starts));  // warm-up
  size_t n = size_t(std::max(1, runs));
  std::vector<std::vector<double>> perKernel(kernels_.size());
  std::vector<double> totals, overheads;
  std::vector<std::vector<double>> allStarts, allSecs;
  for (size_t r = 0; r < n; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    FL_RETURN_IF_ERROR(runInto(inputs, out, {}, &secs, &starts));
    double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double sum = 0;
    for (size_t i = 0; i < secs.size(); ++i) perKernel[i].push_back(secs[i]), sum += secs[i];
    totals.push_back(total);
    overheads.push_back(std::max(0.0, total - sum));
    allStarts.push_back(starts);
    allSecs.push_back(secs);
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  kernelMedians.clear();
  for (auto& v : perKernel) kernelMedians.push_back(median(v));
  runMedian = median(totals);
  overheadMedian = median(overheads);
  // The trace shows the run whose length is the median one.
  size_t pick = 0;
  for (size_t r = 0; r < n; ++r)
    if (std::fabs(totals[r] - runMedian) < std::fabs(totals[pick] - runMedian)) pick = r;
  traceStart = allStarts[pick];
  traceSeconds = allSecs[pick];
  traceRun = totals[pick];
  return Status::ok();
}

}  // namespace fuselens
