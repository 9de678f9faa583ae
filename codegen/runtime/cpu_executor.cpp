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

// Whether a run-time shape matches a type's rank and its static dims.
bool fitsType(const std::vector<int64_t>& shape, const TensorType& t) {
  if (!t.rankKnown || t.rank() != shape.size()) return false;
  for (size_t i = 0; i < shape.size(); ++i)
    if (t.shape[i].isStatic() && t.shape[i].value != shape[i]) return false;
  return true;
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
  if (k.scratchBytes > 0) args.push_back(scratch);
  k.fn(args.data());
  return Status::ok();
}

Status CpuExecutor::callHost(const ExecKernel& k, const std::function<void*(ValueId)>& data,
                             std::map<int32_t, TensorData>& dynamic) const {
  std::vector<TensorData> copies;  // reserved: ins points into it
  copies.reserve(k.inputs.size());
  std::vector<const TensorData*> ins;
  for (ValueId v : k.inputs) {
    const Value& val = g_->value(v);
    auto shape = val.type.staticShape();
    if (auto it = dynamic.find(storageOf(v).index); it != dynamic.end()) {
      const TensorData* t = &it->second;
      if (shape && *shape != t->shape) {  // a view read in its own shape, not its source's
        copies.push_back(*t);
        copies.back().shape = *shape;
        t = &copies.back();
      }
      ins.push_back(t);
      continue;
    }
    if (!shape)
      return Status::error("internal: value '" + val.name + "' (" + val.type.str() +
                               ") has no tensor yet; no earlier kernel made it",
                           "kernel " + k.name);
    // Constants are read in place: a driver's weights (an If's LSTM) were
    // copied in on every run.
    const Value& src = g_->value(storageOf(v));
    if (src.constant && src.constant->shape == *shape) {
      ins.push_back(src.constant.get());
      continue;
    }
    copies.emplace_back(val.type.dtype, *shape);
    if (void* p = data(v); p && !copies.back().bytes.empty())
      std::memcpy(copies.back().bytes.data(), p, copies.back().bytes.size());
    ins.push_back(&copies.back());
  }
  auto outs = k.host(ins);
  if (!outs) return outs.status();
  if (outs->size() < k.outputs.size())
    return Status::error("internal: the host kernel returned " + std::to_string(outs->size()) +
                             " of its " + std::to_string(k.outputs.size()) + " outputs",
                         "kernel " + k.name);
  for (size_t o = 0; o < k.outputs.size(); ++o) {
    ValueId v = k.outputs[o];
    TensorData& t = (*outs)[o];
    auto shape = g_->value(v).type.staticShape();
    if (!shape) {  // known only now: kept for the kernels after it
      dynamic[v.index] = std::move(t);
      continue;
    }
    if (*shape != t.shape)
      return Status::error("output '" + g_->value(v).name + "' came out " + formatShape(t.shape) +
                               "; the graph says " + g_->value(v).type.str(),
                           "kernel " + k.name);
    if (void* p = data(v); p && !t.bytes.empty()) std::memcpy(p, t.bytes.data(), t.bytes.size());
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
  std::vector<ValueId> late;  // outputs whose shape is known only at run time
  for (ValueId o : g_->outputs()) {
    const Value& val = g_->value(o);
    if (!val.type.staticShape()) {
      late.push_back(o);
      continue;
    }
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
  std::map<int32_t, TensorData> dynamic;  // values known only at run time, by storage
  auto data = [&](ValueId v) -> void* {
    ValueId s = storageOf(v);
    const Value& val = g_->value(s);
    if (val.constant) return const_cast<std::byte*>(val.constant->bytes.data());
    if (auto it = external.find(s.index); it != external.end()) return it->second;
    if (auto it = dynamic.find(s.index); it != dynamic.end()) return it->second.bytes.data();
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
    FL_RETURN_IF_ERROR(k.host ? callHost(k, data, dynamic) : call(k, data, scratch, args));
    if (kernelSeconds)
      (*kernelSeconds)[i] =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  for (auto& [t, s] : copies) {
    const void* from = data(s);
    if (from) std::memcpy(t->bytes.data(), from, t->bytes.size());
  }
  for (ValueId o : late) {
    const Value& val = g_->value(o);
    ValueId s = storageOf(o);
    auto it = dynamic.find(s.index);
    if (it == dynamic.end())
      return Status::error("internal: output '" + val.name + "' (" + val.type.str() +
                           ") has no tensor after the run");
    // A view of it (an Identity) is the same tensor; a reshaping one would need
    // its run-time target shape, which only run() works out.
    if (s != o && !fitsType(it->second.shape, val.type))
      return Status::error("output '" + val.name + "' (" + val.type.str() +
                           ") reshapes a value known only at run time; run() handles it, "
                           "the arena runtime cannot");
    outputs.insert_or_assign(val.name, it->second);
  }
  return Status::ok();
}

}  // namespace fuselens
