// The hierarchy of name scopes the graph view collapses and expands. Exporters
// name ops by the module that made them ("/encoder/layer.3/attention/self/MatMul",
// tf2onnx's "model/dense/MatMul"): every path prefix is a scope, and the op
// sits in the deepest one. A fused group is one unit, placed in the deepest
// scope that holds all its members. Where names carry no scope (or a scope
// holds too many ops or child scopes of its own), what it holds is cut into
// chunks along the topological order, chunks of chunks when there are many,
// so a 20,000-op chain or a 700-layer stack still folds into a few dozen boxes.
//
// Scope paths ("/encoder/layer.3", chunks "/encoder/#2") are the keys that
// survive passes: the expansion state is a set of them, and the view keeps it
// when it steps to another snapshot. Qt-free.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/ir/ids.h"
#include "passes/fusion_decision.h"
#include "session/graphview/flat_graph.h"

namespace fuselens::graphview {

struct ScopeTag {};
using ScopeId = Id<ScopeTag>;

// One thing a scope holds directly: an op, a fused group (all its body ops),
// or a graph input or output (always in the root scope).
struct ScopeUnit {
  std::vector<int> nodes;  // FlatGraph::nodes it draws (a group: its members)
  int group = -1;          // index into FlatGraph::groups, or -1
  ScopeId scope;
};

struct Scope {
  ScopeId id, parent;  // the root's parent is invalid
  std::string name;    // "layer.3"; a chunk: "ops 41-80"
  std::string path;    // "/encoder/layer.3"; the root: ""
  bool chunk = false;
  int depth = 0;
  std::vector<ScopeId> children;  // in the order of their first op
  std::vector<int> units;         // ScopeTree::units, in topological order
  int firstNode = 0;              // the smallest FlatGraph node index inside
  int lastNode = -1;              // the largest
};

// What a collapsed box says about everything inside it.
struct ScopeStats {
  size_t ops = 0;         // drawn ops (a fused group counts its body ops)
  size_t groups = 0;      // fused groups
  size_t rejected = 0;    // rejected fusion decisions whose consumer is inside
  double worstHeat = -1;  // the highest heat fraction of a value made inside; -1 none
  double seconds = -1;  // profiled kernel time of the kernels whose output is made inside; -1 none
  // Diff mode (snapshot_diff.h): ops added, changed and removed inside by the pass.
  bool diffed = false;
  size_t added = 0, changed = 0, removed = 0;
  bool unchanged() const { return diffed && added + changed + removed == 0; }
};

class ScopeTree {
 public:
  static constexpr size_t kChunk = 40;  // ops a scope shows before it is chunked

  explicit ScopeTree(FlatGraph flat, size_t chunk = kChunk);

  const FlatGraph& flat() const { return flat_; }
  ScopeId root() const { return ScopeId(0); }
  const Scope& scope(ScopeId s) const { return scopes_[size_t(s.index)]; }
  const std::vector<Scope>& scopes() const { return scopes_; }
  const std::vector<ScopeUnit>& units() const { return units_; }
  // The unit that draws a FlatGraph node.
  int unitOf(int node) const { return unitOfNode_[size_t(node)]; }
  ScopeId scopeOfNode(int node) const { return units_[size_t(unitOf(node))].scope; }
  std::optional<ScopeId> find(const std::string& path) const;
  // The FlatGraph node of an op by its name; -1 when none.
  int nodeNamed(const std::string& name) const;
  // a is b or one of b's ancestors.
  bool contains(ScopeId a, ScopeId b) const;
  ScopeId commonAncestor(ScopeId a, ScopeId b) const;
  // The child of `ancestor` on the way down to `s` (s itself when it is one).
  ScopeId childToward(ScopeId ancestor, ScopeId s) const;
  // The root first, `s` last.
  std::vector<ScopeId> chain(ScopeId s) const;

 private:
  ScopeId addScope(ScopeId parent, std::string name, std::string path, bool chunk);
  int firstNodes(ScopeId s);
  void chunk(ScopeId s, size_t chunkSize);
  std::string chunkName(ScopeId first, ScopeId last, int firstNode, int lastNode) const;
  void renumber();

  FlatGraph flat_;
  std::vector<Scope> scopes_;
  std::vector<ScopeUnit> units_;
  std::vector<int> unitOfNode_;
  std::unordered_map<std::string, ScopeId> byPath_;
  std::unordered_map<std::string, int> nodeByName_;
};

// The scope components of an op name: "/a/b/MatMul" and "a/b/MatMul" -> {a, b}.
std::vector<std::string> scopeOfName(const std::string& opName);

// Per scope (indexed like ScopeTree::scopes), summed over its subtree.
// `heat`: heat fraction (0..1) by value name, as the overlay colors nodes.
// `seconds`: a profile's kernel times by the value each kernel writes first
// (Session::kernelSecondsByValue), summed where those values are made.
std::vector<ScopeStats> scopeStats(const ScopeTree& tree,
                                   const std::vector<FusionDecision>& decisions,
                                   const std::map<std::string, double>& heat,
                                   const std::map<std::string, double>& seconds = {});

// Which scopes are open, by path; the root always is.
struct Expansion {
  std::set<std::string> open;
  bool isOpen(const Scope& s) const { return s.path.empty() || open.count(s.path) > 0; }
};

// Boxes drawn when `e` is applied: ops of open scopes, collapsed scopes
// directly inside open ones, inputs and outputs.
size_t visibleBoxes(const ScopeTree& tree, const Expansion& e);
// Opens scopes breadth first, in order, while the boxes drawn stay within `budget`.
Expansion initialExpansion(const ScopeTree& tree, size_t budget = 200);
// Opens every scope above `s` (and `s` too when `self`), so what it holds is drawn.
void reveal(const ScopeTree& tree, ScopeId s, Expansion& e, bool self = false);
// Opens scopes breadth first down to `depth` levels below the root.
Expansion expandToDepth(const ScopeTree& tree, int depth);

}  // namespace fuselens::graphview
