#include "core/ir/attribute.h"

namespace fuselens {

int64_t Attributes::getInt(const std::string& name, int64_t fallback) const {
  const Attribute* a = find(name);
  if (a && std::holds_alternative<int64_t>(*a)) return std::get<int64_t>(*a);
  return fallback;
}

double Attributes::getFloat(const std::string& name, double fallback) const {
  const Attribute* a = find(name);
  if (!a) return fallback;
  if (std::holds_alternative<double>(*a)) return std::get<double>(*a);
  if (std::holds_alternative<int64_t>(*a)) return static_cast<double>(std::get<int64_t>(*a));
  return fallback;
}

std::string Attributes::getString(const std::string& name, const std::string& fallback) const {
  const Attribute* a = find(name);
  if (a && std::holds_alternative<std::string>(*a)) return std::get<std::string>(*a);
  return fallback;
}

std::optional<std::vector<int64_t>> Attributes::getInts(const std::string& name) const {
  const Attribute* a = find(name);
  if (a && std::holds_alternative<std::vector<int64_t>>(*a))
    return std::get<std::vector<int64_t>>(*a);
  return std::nullopt;
}

std::shared_ptr<const TensorData> Attributes::getTensor(const std::string& name) const {
  const Attribute* a = find(name);
  if (a && std::holds_alternative<std::shared_ptr<const TensorData>>(*a))
    return std::get<std::shared_ptr<const TensorData>>(*a);
  return nullptr;
}

bool Attributes::operator==(const Attributes& o) const {
  if (map_.size() != o.map_.size()) return false;
  for (const auto& [k, v] : map_) {
    const Attribute* w = o.find(k);
    if (!w || w->index() != v.index()) return false;
    // Tensors and graphs compare by identity: equal pointers mean equal payloads.
    if (v != *w) return false;
  }
  return true;
}

}  // namespace fuselens
