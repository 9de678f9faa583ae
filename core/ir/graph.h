// The graph IR: nodes and values in arenas indexed by typed ids.
//
// A Value is produced by at most one node (SSA); graph inputs and constants
// (initializers) have no producer. Every value and node records its origin in
// the imported graph, which is what lets a tensor computed after any number of
// passes be compared with the eager run of the original model.
//
// Nodes may carry a body graph: a fused group (op "Fused", domain "fuselens")
// whose body inputs/outputs correspond one to one with the node's inputs and
// outputs. Inputs/outputs/users are edited only through Graph's methods so the
// use lists stay right; other node fields may be edited through mutableNode().
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/ir/attribute.h"
#include "core/ir/ids.h"
#include "core/ir/layout.h"
#include "core/ir/tensor.h"
#include "core/ir/tensor_type.h"

namespace fuselens {

inline constexpr const char* kFusedOp = "Fused";
inline constexpr const char* kFuseLensDomain = "fuselens";

struct Value {
  ValueId id;
  std::string name;
  TensorType type;
  NodeId producer;                             // invalid for inputs and constants
  std::vector<NodeId> users;                   // each user once, in insertion order
  std::shared_ptr<const TensorData> constant;  // set for initializers
  ValueId origin;                              // the equal value in the imported graph
  // How this value is stored (plain, or NCHW<b>c after the layout pass); it and
  // its origin are compared after undoing both layouts (core/ir/layout.h).
  Layout layout;
};

struct Node {
  NodeId id;
  std::string op;
  std::string domain;  // "" is the ONNX default domain
  std::string name;
  Attributes attrs;
  std::vector<ValueId> inputs;  // an invalid id stands for an omitted optional input
  std::vector<ValueId> outputs;
  std::vector<NodeId> origins;  // the imported nodes this node stands for
  std::shared_ptr<const Graph> body;
};

struct OutputSpec {
  std::string name;
  TensorType type;
};

class Graph {
 public:
  std::string name = "main";

  // --- building ---
  ValueId addInput(std::string name, TensorType type);
  ValueId addConstant(std::string name, std::shared_ptr<const TensorData> data);
  NodeId addNode(std::string op, std::vector<ValueId> inputs, std::vector<OutputSpec> outputs,
                 Attributes attrs = {}, std::string name = {});
  void addOutput(ValueId v) {
    touch();
    outputs_.push_back(v);
  }
  void setOutputs(std::vector<ValueId> outs) {
    touch();
    outputs_ = std::move(outs);
  }
  // Sets origins to self on every node and value: the graph becomes "the original".
  void markAsOriginal();

  // --- editing ---
  void setInput(NodeId n, size_t index, ValueId v);
  void replaceAllUses(ValueId from, ValueId to);  // graph outputs included
  void removeNode(NodeId n);                      // its outputs must be unused
  void removeValue(ValueId v);                    // must be unused and unproduced
  Node& mutableNode(NodeId n);
  Value& mutableValue(ValueId v);

  // --- queries ---
  const Node& node(NodeId n) const;
  const Value& value(ValueId v) const;
  bool hasNode(NodeId n) const;
  bool hasValue(ValueId v) const;
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  std::vector<NodeId> nodeIds() const;    // live nodes, in insertion order
  std::vector<ValueId> valueIds() const;  // live values, in creation order
  std::vector<ValueId> constants() const;
  // Live nodes so that producers come first; ties keep insertion order.
  // nullopt when the graph has a cycle.
  std::optional<std::vector<NodeId>> topoOrder() const;
  size_t nodeCount() const { return liveNodes_; }
  bool isGraphOutput(ValueId v) const;
  std::optional<ValueId> findValue(const std::string& name) const;
  std::optional<NodeId> findNode(const std::string& name) const;
  // Capacity of the id space (ids are < this), for side tables indexed by id.
  size_t nodeCapacity() const { return nodes_.size(); }
  size_t valueCapacity() const { return values_.size(); }
  // Names this graph's content: every edit (any method above that can change
  // nodes, values, inputs or outputs, mutableNode/mutableValue included) takes
  // a stamp no graph has had, and a copy keeps its source's. So equal stamps
  // mean equal content (`name` aside), which lets the pass manager share an
  // unchanged pass's graph instead of copying and re-verifying it.
  uint64_t stamp() const { return stamp_; }

 private:
  void touch();
  ValueId newValue(std::string name, TensorType type);
  void addUser(ValueId v, NodeId n);
  void dropUserIfUnused(ValueId v, NodeId n);

  std::vector<std::optional<Node>> nodes_;
  std::vector<std::optional<Value>> values_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
  size_t liveNodes_ = 0;
  uint64_t stamp_ = 0;
};

// A graph holding node n of g alone (op, domain, attributes, body, name, its
// outputs with their names and types as the graph's outputs). Each present
// input i becomes what `input(graph, i)` adds to the new graph: a graph input
// or a constant. What codegen compiles or runs one node at a time starts here.
Graph graphOfNode(const Graph& g, const Node& n,
                  const std::function<ValueId(Graph& alone, size_t input)>& input);

}  // namespace fuselens
