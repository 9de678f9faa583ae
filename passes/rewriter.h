// The one place where the local-rewrite passes (const-fold, cse, simplify)
// mutate the graph. Every rewrite goes through a Rewriter, which logs it as a
// Note in the PassResult's diagnostics ("x*1 -> x: Mul 'scale' multiplies by
// a constant 1") and counts it in the stats under the rule's name, so the GUI
// timeline and the CLI show what changed and why (MLIR's PatternRewriter).
//
// Origins: a value that replaces another takes over nothing (it keeps its own
// origin, which names an equal tensor); a value created here is given the
// origin of the value it stands for, and a node created here the origins of
// the nodes it replaces.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "passes/pass.h"

namespace fuselens {

class Rewriter {
 public:
  explicit Rewriter(Graph& g) : g_(g) {}

  const Graph& graph() const { return g_; }

  // Records one applied rewrite: a Note at `at` and stats[rule] += 1.
  void log(const std::string& rule, const Node& at, const std::string& sentence);

  // Every user of `from` (graph outputs included) reads `to` instead.
  void replaceValue(ValueId from, ValueId to) { g_.replaceAllUses(from, to); }

  // A new node standing for `replaced`: its outputs take the names and origins of
  // `replaced`'s first outputs, the node their origins. Outputs keep their names
  // once `replaced` is erased.
  NodeId addNodeFor(const Node& replaced, const std::string& op, std::vector<ValueId> inputs,
                    Attributes attrs, std::vector<TensorType> outputTypes);

  // Adds `origins` to n's (sorted, no duplicates): n also stands for those nodes.
  void addOrigins(NodeId n, const std::vector<NodeId>& origins);
  void rename(NodeId n, const std::string& name) { g_.mutableNode(n).name = name; }

  // A new constant equal to the tensor `standsFor` holds (its name and origin).
  ValueId addConstantFor(ValueId standsFor, std::shared_ptr<const TensorData> data);
  // A new constant with no counterpart in the imported graph (a folded weight).
  ValueId addConstant(const std::string& name, std::shared_ptr<const TensorData> data);

  // Removes `n` when none of its outputs is used or returned, then the producers
  // and constants that became dead with it.
  void eraseIfDead(NodeId n);
  void eraseIfDeadValue(ValueId v);

  // Moves the log into a PassResult (changed when anything was logged).
  void finish(PassResult& r);
  int64_t count() const { return count_; }

 private:
  Graph& g_;
  std::vector<Diagnostic> notes_;
  std::map<std::string, int64_t> stats_;
  int64_t count_ = 0;
};

// True when `v` may be replaced by another existing value without renaming a
// graph output (a model's output names are its contract).
bool canForward(const Graph& g, ValueId v);

// The constant tensor behind `v`, or nullptr.
const TensorData* constantOf(const Graph& g, ValueId v);
// `base`, or `base_1`, `base_2`, ... : the first name no value of `g` has.
std::string freshName(const Graph& g, const std::string& base);
// A float tensor (f32 or f64) of `shape` from doubles; other dtypes are not built here.
std::shared_ptr<const TensorData> floatTensor(DType t, std::vector<int64_t> shape,
                                              const std::vector<double>& values);
// True when every element of the constant `t` equals `x`.
bool allEqual(const TensorData& t, double x);

}  // namespace fuselens
