// Inlining model-local functions, on the protobuf before import. Per call:
//
//   function LinearAct(X, W) -> Y {alpha}     call "/enc/fc" = LinearAct(x, w0) {alpha: 0.1}
//     MatMul(X, W) -> t                       scope "/enc/fc:LinearAct"; X -> x, W -> w0
//     LeakyRelu(t) {alpha: @alpha} -> Y
//                    |
//                    v
//   "/enc/fc:LinearAct/MatMul"(x, w0) -> "/enc/fc:LinearAct/t"
//   "/enc/fc:LinearAct/LeakyRelu"("/enc/fc:LinearAct/t") {alpha: 0.1} -> the call's output
//
// The body's nodes are copied with names renamed and attribute references
// (ref_attr_name) replaced by the call's attributes, then emitted the way a
// graph's own node is: a copied node that calls a function is inlined in turn
// (its scope nests in the outer call's), and subgraphs are expanded too. A
// stack of the functions being inlined catches recursion.
#include "core/onnx/inline_functions.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/ops/registry.h"

namespace fuselens::onnximport {
namespace {

using Nodes = google::protobuf::RepeatedPtrField<onnx::NodeProto>;
using FunctionKey = std::pair<std::string, std::string>;  // (domain, name)

std::string canonicalDomain(const std::string& d) { return d == "ai.onnx" ? "" : d; }

std::string qualified(const onnx::FunctionProto& f) {
  return f.domain().empty() ? f.name() : f.domain() + "." + f.name();
}

std::string nodePlace(const onnx::NodeProto& n) {
  return "node '" + n.name() + "' (" + n.op_type() + ")";
}

// What one call maps the body's names and attribute references to.
struct Instance {
  const onnx::FunctionProto& fn;
  std::string scope;  // "/enc/fc:LinearAct"
  std::string place;  // the call, for diagnostics
  std::unordered_map<std::string, std::string> names;
  std::map<std::string, const onnx::AttributeProto*> attrs;  // the call's, by name

  std::string rename(const std::string& name) const {
    if (name.empty()) return name;
    auto it = names.find(name);
    return it != names.end() ? it->second : scope + "/" + name;
  }
  bool declares(const std::string& attr) const {
    for (const auto& a : fn.attribute())
      if (a == attr) return true;
    return false;
  }
  Status instantiate(onnx::NodeProto& n) const;
  Status instantiate(onnx::GraphProto& g) const;
};

// Renames `n`'s values and resolves its attribute references, subgraphs included.
Status Instance::instantiate(onnx::NodeProto& n) const {
  for (auto& in : *n.mutable_input()) in = rename(in);
  for (auto& out : *n.mutable_output()) out = rename(out);
  google::protobuf::RepeatedPtrField<onnx::AttributeProto> resolved;
  for (auto& a : *n.mutable_attribute()) {
    if (!a.ref_attr_name().empty()) {
      auto it = attrs.find(a.ref_attr_name());
      if (it != attrs.end()) {
        using A = onnx::AttributeProto;
        // The body says which kind it reads; a Constant's value_float would
        // read an int as 0 without a word.
        if (a.type() != A::UNDEFINED && it->second->type() != A::UNDEFINED &&
            a.type() != it->second->type())
          return Status::error("node '" + n.name() + "' of function " + qualified(fn) +
                                   " takes attribute '" + a.name() + "' (" +
                                   A::AttributeType_Name(a.type()) + ") from '" +
                                   a.ref_attr_name() + "', but the call gives " +
                                   A::AttributeType_Name(it->second->type()),
                               place);
        onnx::AttributeProto given = *it->second;
        given.set_name(a.name());
        *resolved.Add() = std::move(given);
        continue;
      }
      // Declared but not given: the attribute is absent (the ONNX IR's rule).
      if (declares(a.ref_attr_name())) continue;
      return Status::error("node '" + n.name() + "' of function " + qualified(fn) +
                               " takes attribute '" + a.name() + "' from '" + a.ref_attr_name() +
                               "', which the call does not give and the function does not declare",
                           place);
    }
    if (a.has_g()) FL_RETURN_IF_ERROR(instantiate(*a.mutable_g()));
    for (auto& g : *a.mutable_graphs()) FL_RETURN_IF_ERROR(instantiate(g));
    *resolved.Add() = std::move(a);
  }
  n.mutable_attribute()->Swap(&resolved);
  return Status::ok();
}

// A subgraph inside the body reads the body's values: the same renaming holds.
Status Instance::instantiate(onnx::GraphProto& g) const {
  for (auto& v : *g.mutable_input()) v.set_name(rename(v.name()));
  for (auto& v : *g.mutable_output()) v.set_name(rename(v.name()));
  for (auto& v : *g.mutable_value_info()) v.set_name(rename(v.name()));
  for (auto& t : *g.mutable_initializer()) t.set_name(rename(t.name()));
  for (auto& n : *g.mutable_node()) FL_RETURN_IF_ERROR(instantiate(n));
  return Status::ok();
}

// Model files are untrusted: functions that call each other twice per level
// would ask for 2^depth nodes, a long chain of calls for a deep recursion.
// Both are measured before anything is copied. Real models stay far below:
// the largest exports hold some 100,000 nodes, nested a few functions deep.
constexpr uint64_t kMaxInlinedNodes = 1000000;
constexpr size_t kMaxCallDepth = 64;

uint64_t saturatingAdd(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

struct Inliner {
  std::map<FunctionKey, const onnx::FunctionProto*> functions;
  std::set<std::string> domains;                  // domains some function is in
  std::vector<const onnx::FunctionProto*> stack;  // functions being inlined, outermost first
  std::set<std::string> scopes;                   // call scopes given out
  std::map<std::string, int> unnamedCalls;        // per function
  // What a call becomes: its nodes once inlined, and how deep calls nest in it.
  struct Measure {
    uint64_t size = 1;
    size_t height = 0;
    Measure operator+(const Measure& o) const {
      return {saturatingAdd(size, o.size), std::max(height, o.height)};
    }
  };
  std::map<const onnx::FunctionProto*, Measure> measures;

  const onnx::FunctionProto* calledBy(const onnx::NodeProto& n) const {
    auto it = functions.find({canonicalDomain(n.domain()), n.op_type()});
    return it == functions.end() ? nullptr : it->second;
  }
  Measure measure(const onnx::NodeProto& n, size_t depth);
  Measure measure(const onnx::FunctionProto& fn, size_t depth);
  Measure measure(const onnx::GraphProto& g, size_t depth);
  Status emit(onnx::NodeProto n, Nodes& out);
  Status expandGraph(onnx::GraphProto& g);
  Status expandCall(const onnx::NodeProto& call, const onnx::FunctionProto& fn, Nodes& out);
  std::string callScope(const onnx::NodeProto& call, const onnx::FunctionProto& fn);
};

// Nodes `n` becomes once every call in it is inlined (saturating), and how
// deep the calls in it nest. A function already being measured counts as one
// node: expanding it reports the recursion. Stops descending past the depth
// limit, so a chain of thousands of functions costs no deep recursion here.
Inliner::Measure Inliner::measure(const onnx::NodeProto& n, size_t depth) {
  if (depth > kMaxCallDepth) return {1, depth};
  Measure m;
  if (const onnx::FunctionProto* fn = calledBy(n)) {
    if (auto it = measures.find(fn); it != measures.end()) return it->second;
    measures[fn] = m;
    Measure body = measure(*fn, depth);
    m = {body.size, body.height + 1};
    measures[fn] = m;
    return m;
  }
  for (const auto& a : n.attribute()) {
    if (a.has_g()) m = m + measure(a.g(), depth);
    for (const auto& g : a.graphs()) m = m + measure(g, depth);
  }
  return m;
}

Inliner::Measure Inliner::measure(const onnx::FunctionProto& fn, size_t depth) {
  Measure m{0, 0};
  for (const auto& n : fn.node()) m = m + measure(n, depth + 1);
  return m;
}

Inliner::Measure Inliner::measure(const onnx::GraphProto& g, size_t depth) {
  Measure m{0, 0};
  for (const auto& n : g.node()) m = m + measure(n, depth);
  return m;
}

Status Inliner::expandGraph(onnx::GraphProto& g) {
  Nodes out;
  for (auto& n : *g.mutable_node()) FL_RETURN_IF_ERROR(emit(std::move(n), out));
  g.mutable_node()->Swap(&out);
  return Status::ok();
}

Status Inliner::emit(onnx::NodeProto n, Nodes& out) {
  const std::string domain = canonicalDomain(n.domain());
  if (const onnx::FunctionProto* fn = calledBy(n)) return expandCall(n, *fn, out);
  // A function domain's other names would import as opaque ops: say why instead.
  if (domains.count(domain) && !OpRegistry::instance().find(domain, n.op_type()))
    return Status::error(
        "calls function " + domain + "." + n.op_type() + ", which the model does not define",
        nodePlace(n));
  for (auto& a : *n.mutable_attribute()) {
    if (a.has_g()) FL_RETURN_IF_ERROR(expandGraph(*a.mutable_g()));
    for (auto& g : *a.mutable_graphs()) FL_RETURN_IF_ERROR(expandGraph(g));
  }
  *out.Add() = std::move(n);
  return Status::ok();
}

// "/enc/fc" calling LinearAct -> "/enc/fc:LinearAct"; a call whose name
// already says the function keeps it; an unnamed call -> "LinearAct_0".
std::string Inliner::callScope(const onnx::NodeProto& call, const onnx::FunctionProto& fn) {
  std::string base;
  if (call.name().empty()) {
    base = fn.name() + "_" + std::to_string(unnamedCalls[fn.name()]++);
  } else {
    const std::string leaf = call.name().substr(call.name().rfind('/') + 1);
    base = call.name() + (leaf.find(fn.name()) == std::string::npos ? ":" + fn.name() : "");
  }
  std::string scope = base;
  for (int k = 1; !scopes.insert(scope).second; ++k) scope = base + "_" + std::to_string(k);
  return scope;
}

Status Inliner::expandCall(const onnx::NodeProto& call, const onnx::FunctionProto& fn, Nodes& out) {
  const std::string place = nodePlace(call);
  if (stack.size() >= kMaxCallDepth)  // measured before; a guard all the same
    return Status::error(
        "functions call functions more than " + std::to_string(kMaxCallDepth) + " deep", place);
  for (const onnx::FunctionProto* f : stack) {
    if (f != &fn) continue;
    std::string path;
    for (const onnx::FunctionProto* g : stack) path += qualified(*g) + " -> ";
    return Status::error("function " + qualified(fn) + " calls itself (" + path + qualified(fn) +
                             "), so it cannot be inlined",
                         place);
  }
  if (call.input_size() > fn.input_size() || call.output_size() > fn.output_size())
    return Status::error("the call passes " + std::to_string(call.input_size()) + " inputs and " +
                             std::to_string(call.output_size()) + " outputs, but function " +
                             qualified(fn) + " takes " + std::to_string(fn.input_size()) + " and " +
                             std::to_string(fn.output_size()),
                         place);
  Instance in{fn, callScope(call, fn), place, {}, {}};
  for (int i = 0; i < fn.input_size(); ++i)
    in.names[fn.input(i)] = i < call.input_size() ? call.input(i) : std::string();
  for (int i = 0; i < fn.output_size(); ++i)
    in.names[fn.output(i)] = i < call.output_size() && !call.output(i).empty()
                                 ? call.output(i)
                                 : in.scope + "/" + fn.output(i);
  for (const auto& a : call.attribute()) in.attrs[a.name()] = &a;

  stack.push_back(&fn);
  for (int i = 0; i < fn.node_size(); ++i) {
    onnx::NodeProto n = fn.node(i);
    std::string leaf = n.name().empty() ? n.op_type() + "_" + std::to_string(i) : n.name();
    while (!leaf.empty() && leaf.front() == '/') leaf.erase(0, 1);
    n.set_name(in.scope + "/" + leaf);
    FL_RETURN_IF_ERROR(in.instantiate(n));
    FL_RETURN_IF_ERROR(emit(std::move(n), out));
  }
  stack.pop_back();
  return Status::ok();
}

}  // namespace

Status inlineLocalFunctions(onnx::ModelProto& model, const std::string& where) {
  if (model.functions_size() == 0) return Status::ok();
  int64_t opset = 0;
  for (const auto& op : model.opset_import())
    if (canonicalDomain(op.domain()).empty()) opset = op.version();
  Inliner inliner;
  for (const auto& f : model.functions()) {
    if (!inliner.functions.emplace(FunctionKey{canonicalDomain(f.domain()), f.name()}, &f).second)
      return Status::error("function " + qualified(f) + " is defined more than once", where);
    if (!canonicalDomain(f.domain()).empty()) inliner.domains.insert(canonicalDomain(f.domain()));
    // Inlined ops are read under the model's opset: another one would change their meaning.
    for (const auto& op : f.opset_import())
      if (canonicalDomain(op.domain()).empty() && op.version() != opset)
        return Status::error("function " + qualified(f) + " imports opset " +
                                 std::to_string(op.version()) +
                                 " of the default domain but the model imports opset " +
                                 std::to_string(opset) + "; FuseLens reads both at one opset",
                             where);
  }
  const Inliner::Measure m = inliner.measure(model.graph(), 0);
  if (m.height > kMaxCallDepth)
    return Status::error("functions call functions more than " + std::to_string(kMaxCallDepth) +
                             " deep; FuseLens inlines no deeper",
                         where);
  if (m.size > kMaxInlinedNodes)
    return Status::error("inlining the model's functions would make more than " +
                             std::to_string(kMaxInlinedNodes) + " nodes",
                         where);
  return inliner.expandGraph(*model.mutable_graph());
}

}  // namespace fuselens::onnximport
