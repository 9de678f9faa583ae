// Node attributes: the ONNX attribute kinds FuseLens keeps, in a sorted map so
// printing and comparing are deterministic.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/ir/tensor.h"

namespace fuselens {

class Graph;

using Attribute = std::variant<int64_t, double, std::string, std::vector<int64_t>,
                               std::vector<double>, std::vector<std::string>,
                               std::shared_ptr<const TensorData>, std::shared_ptr<const Graph>>;

class Attributes {
 public:
  void set(const std::string& name, Attribute a) { map_[name] = std::move(a); }
  bool has(const std::string& name) const { return map_.count(name) != 0; }
  void erase(const std::string& name) { map_.erase(name); }
  const Attribute* find(const std::string& name) const {
    auto it = map_.find(name);
    return it == map_.end() ? nullptr : &it->second;
  }
  // Typed getters return the fallback when absent or of another kind.
  int64_t getInt(const std::string& name, int64_t fallback) const;
  double getFloat(const std::string& name, double fallback) const;  // ints convert
  std::string getString(const std::string& name, const std::string& fallback) const;
  std::optional<std::vector<int64_t>> getInts(const std::string& name) const;
  std::shared_ptr<const TensorData> getTensor(const std::string& name) const;
  const std::map<std::string, Attribute>& all() const { return map_; }
  bool empty() const { return map_.empty(); }
  bool operator==(const Attributes& o) const;

 private:
  std::map<std::string, Attribute> map_;
};

}  // namespace fuselens
