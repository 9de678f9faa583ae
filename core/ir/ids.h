// Typed ids for graph entities. An id is an index into its graph's arena and
// stays stable while the graph is edited, so snapshots, fusion decisions and
// the GUI can refer to nodes and values without pointers or name conventions.
#pragma once

#include <cstdint>
#include <functional>

namespace fuselens {

template <class Tag>
struct Id {
  int32_t index = -1;
  constexpr Id() = default;
  constexpr explicit Id(int32_t i) : index(i) {}
  constexpr bool valid() const { return index >= 0; }
  friend constexpr bool operator==(Id a, Id b) { return a.index == b.index; }
  friend constexpr bool operator!=(Id a, Id b) { return a.index != b.index; }
  friend constexpr bool operator<(Id a, Id b) { return a.index < b.index; }
};

struct NodeTag {};
struct ValueTag {};
using NodeId = Id<NodeTag>;
using ValueId = Id<ValueTag>;

}  // namespace fuselens

template <class Tag>
struct std::hash<fuselens::Id<Tag>> {
  size_t operator()(fuselens::Id<Tag> id) const noexcept { return std::hash<int32_t>()(id.index); }
};
