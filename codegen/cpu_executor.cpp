// The CPU executor. Storage is one TensorData per boundary value, allocated
// per run (a memory-planned arena is future work); constants are never copied.
#include "codegen/cpu_executor.h"

namespace fuselens {

CpuExecutor::CpuExecutor(std::shared_ptr<const Graph> g, std::vector<ExecKernel> kernels,
                         std::vector<std::pair<ValueId, ValueId>> aliases)
    : g_(std::move(g)), kernels_(std::move(kernels)), aliases_(std::move(aliases)) {
  for (auto& [v, src] : aliases_) aliasSource_[v.index] = src;
}

ValueId CpuExecutor::storageOf(ValueId v) const {
  for (auto it = aliasSource_.find(v.index); it != aliasSource_.end();
       it = aliasSource_.find(v.index))
    v = it->second;
  return v;
}

Status CpuExecutor::bindInputs(const std::map<std::string, TensorData>& inputs,
                               std::vector<std::optional<TensorData>>& slots) const {
  std::map<std::string, ValueId> byName;
  std::string names;
  for (ValueId v : g_->inputs()) {
    byName[g_->value(v).name] = v;
    names += (names.empty() ? "" : ", ") + g_->value(v).name;
  }
  for (const auto& [name, t] : inputs)
    if (!byName.count(name))
      return Status::error("there is no graph input named '" + name + "'; the inputs are " + names);
  for (const auto& [name, v] : byName) {
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
    slots[v.index] = t;
  }
  return Status::ok();
}

Expected<std::vector<std::optional<TensorData>>> CpuExecutor::run(
    const std::map<std::string, TensorData>& inputs, const CancelToken& cancel) const {
  std::vector<std::optional<TensorData>> slots(g_->valueCapacity());
  FL_RETURN_IF_ERROR(bindInputs(inputs, slots));
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
    for (ValueId v : k.outputs) {
      const TensorType& t = g_->value(v).type;
      slots[v.index] = TensorData(t.dtype, *t.staticShape());
      args.push_back(slots[v.index]->bytes.data());
    }
    k.fn(args.data());
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
    t.shape = *g_->value(v).type.staticShape();
    slots[v.index] = std::move(t);
  };
  for (auto& [v, src] : aliases_) materialize(v);
  for (ValueId o : g_->outputs())
    if (!slots[o.index]) materialize(o);
  return slots;
}

}  // namespace fuselens
