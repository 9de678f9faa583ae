// ONNX import: ModelProto -> Graph. In order: parse, read opsets, inline the
// calls of model-local functions (inline_functions.h), add graph
// inputs (minus initializers, the IR<4 style) and initializers, add nodes in
// dependency order (Constant nodes become constants; each node canonicalized
// to the latest opset's form and its types inferred), then graph outputs,
// a final shape inference and markAsOriginal. Model files are untrusted: every
// failure is one sentence naming the file or the node, never a crash. Refused
// outright: an IR version or default-domain opset FuseLens does not know (or
// none), and an attribute of another kind than its op's schema says.
#include "core/onnx/import.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <optional>
#include <queue>
#include <set>
#include <unordered_map>

#include "core/onnx/body_inputs.h"
#include "core/onnx/canonicalize.h"
#include "core/onnx/inline_functions.h"
#include "core/onnx/tensor_proto.h"
#include "core/ops/registry.h"

namespace fuselens {
namespace {

namespace fs = std::filesystem;
using onnximport::tensorFromProto;
using onnximport::typeFromProto;

// The newest default-domain opset FuseLens reads: its registry and the
// canonicalizer cover the ops' forms up to opset 21 (GroupNormalization-21 is
// the newest form they know). Newer opsets may change meanings, so they are
// refused rather than read with opset-21 meanings.
constexpr int64_t kLatestOpset = 21;
// The newest ONNX IR version released (ONNX 1.23 writes 14, 1.21 writes 13;
// 1.12, whose headers FuseLens builds with, writes 8). IR versions only add
// structure the importer ignores or refuses by field, so every real one is read.
constexpr int64_t kNewestIrVersion = 14;

struct Importer {
  ImportedModel& model;
  std::string where;                  // the file, for diagnostics
  std::string baseDir;                // for external data
  Graph* graph = nullptr;             // the graph being built: the model's, or a subgraph
  Importer* parent = nullptr;         // the enclosing graph's importer, for a subgraph
  std::vector<std::string> captured;  // outer-scope names this subgraph reads, in order
  // Types for a subgraph's formal inputs taken from the node that owns it, for
  // exporters that declare body inputs without a type (empty when unknown).
  std::vector<std::optional<TensorType>> inputHints;
  std::unordered_map<std::string, ValueId> values;
  std::unordered_map<std::string, const onnx::TypeProto*> declared;  // value_info + outputs
  std::set<std::string> nodeNames;
  std::map<std::string, int> opCounts;

  Graph& g() { return *graph; }
  // An outer-scope name is visible when some enclosing graph defines it.
  bool resolvable(const std::string& name) const {
    return values.count(name) || (parent && parent->resolvable(name));
  }
  // The value a name refers to; an outer-scope name becomes an input of this
  // subgraph (and, recursively, of every graph in between).
  std::optional<ValueId> lookup(const std::string& name) {
    if (auto it = values.find(name); it != values.end()) return it->second;
    if (!parent) return std::nullopt;
    auto outer = parent->lookup(name);
    if (!outer) return std::nullopt;
    ValueId v = g().addInput(name, parent->g().value(*outer).type);
    values.emplace(name, v);
    captured.push_back(name);
    return v;
  }
  void warn(const std::string& place, const std::string& message) {
    model.diagnostics.push_back({Severity::Warning, place, message});
  }
  int64_t opsetOf(const std::string& domain) {
    auto it = model.opsets.find(domain);
    return it == model.opsets.end() ? kLatestOpset : it->second;
  }
  Status define(const std::string& name, ValueId v, const std::string& place) {
    if (!values.emplace(name, v).second)
      return Status::error("value '" + name + "' is defined more than once", place);
    return Status::ok();
  }
  // The declared type of a value, or unknown rank when none (or not a tensor we support).
  TensorType declaredType(const std::string& name) {
    auto it = declared.find(name);
    if (it != declared.end())
      if (auto t = typeFromProto(*it->second, "value '" + name + "'")) return *t;
    TensorType t;
    t.rankKnown = false;
    return t;
  }
};

std::string canonicalDomain(const std::string& d) { return d == "ai.onnx" ? "" : d; }

std::string nodeWhere(const onnx::NodeProto& n, const std::string& name) {
  return "node '" + name + "' (" + n.op_type() + ")";
}

// Reads an attribute the IR keeps; nullopt (with a warning) for kinds it does not.
Expected<std::optional<Attribute>> attributeOf(Importer& im, const onnx::AttributeProto& a,
                                               const std::string& place) {
  using A = onnx::AttributeProto;
  int type = a.type();
  if (type == A::UNDEFINED) {  // some old exporters leave the type unset: go by the field
    type = a.ints_size()      ? A::INTS
           : a.floats_size()  ? A::FLOATS
           : a.strings_size() ? A::STRINGS
           : a.has_t()        ? A::TENSOR
           : a.has_s()        ? A::STRING
           : a.has_f()        ? A::FLOAT
                              : A::INT;
  }
  switch (type) {
    case A::INT:
      return std::optional<Attribute>(int64_t(a.i()));
    case A::FLOAT:
      return std::optional<Attribute>(double(a.f()));
    case A::STRING:
      return std::optional<Attribute>(a.s());
    case A::INTS:
      return std::optional<Attribute>(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
    case A::FLOATS:
      return std::optional<Attribute>(std::vector<double>(a.floats().begin(), a.floats().end()));
    case A::STRINGS:
      return std::optional<Attribute>(
          std::vector<std::string>(a.strings().begin(), a.strings().end()));
    case A::TENSOR: {
      auto t = tensorFromProto(a.t(), place + " attribute '" + a.name() + "'", im.baseDir);
      if (!t) return t.status();
      return std::optional<Attribute>(std::make_shared<const TensorData>(std::move(*t)));
    }
    default:
      im.warn(place, "attribute '" + a.name() + "' (" +
                         A::AttributeType_Name(A::AttributeType(type)) +
                         ") is not imported; the node cannot run");
      return std::optional<Attribute>();
  }
}

// A Constant node's value as a tensor (value, value_float(s), value_int(s)).
Expected<TensorData> constantValue(Importer& im, const onnx::NodeProto& n,
                                   const std::string& place) {
  for (const auto& a : n.attribute()) {
    const std::string& k = a.name();
    if (k == "value") return tensorFromProto(a.t(), place, im.baseDir);
    if (k == "value_float")
      return TensorData::fromVector(DType::F32, {}, std::vector<float>{a.f()});
    if (k == "value_int")
      return TensorData::fromVector(DType::I64, {}, std::vector<int64_t>{a.i()});
    if (k == "value_floats") {
      std::vector<float> v(a.floats().begin(), a.floats().end());
      return TensorData::fromVector(DType::F32, {int64_t(v.size())}, v);
    }
    if (k == "value_ints") {
      std::vector<int64_t> v(a.ints().begin(), a.ints().end());
      return TensorData::fromVector(DType::I64, {int64_t(v.size())}, v);
    }
  }
  return Status::error(
      "only numeric constants (value, value_float(s), value_int(s)) are "
      "supported",
      place);
}

// Node indices with producers first (ONNX requires sorted nodes; some files
// are not). Errors name an input no node, graph input or initializer makes.
// Every name the node's subgraphs read (at any depth): an If or Loop depends on
// the outer values its bodies use, though they are not among its inputs.
void subgraphReads(const onnx::NodeProto& n, std::set<std::string>& out, int depth = 0) {
  if (depth > 64) return;  // a hostile file nesting graphs without end
  for (const auto& a : n.attribute()) {
    std::vector<const onnx::GraphProto*> graphs;
    if (a.has_g()) graphs.push_back(&a.g());
    for (const auto& g : a.graphs()) graphs.push_back(&g);
    for (const onnx::GraphProto* g : graphs)
      for (const auto& inner : g->node()) {
        for (const auto& in : inner.input()) out.insert(in);
        subgraphReads(inner, out, depth + 1);
      }
  }
}

Expected<std::vector<int>> nodeOrder(const onnx::GraphProto& gp, const Importer& im) {
  int count = gp.node_size();
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < count; ++i)
    for (const auto& o : gp.node(i).output())
      if (!o.empty()) producer.emplace(o, i);
  std::vector<int> pending(count, 0);
  std::vector<std::vector<int>> users(count);
  for (int i = 0; i < count; ++i) {
    for (const auto& in : gp.node(i).input()) {
      if (in.empty() || im.values.count(in)) continue;
      auto it = producer.find(in);
      if (it == producer.end()) {
        if (im.parent && im.parent->resolvable(in)) continue;  // an outer-scope name
        return Status::error("input '" + in +
                                 "' is not produced by any node, graph input or "
                                 "initializer",
                             nodeWhere(gp.node(i), gp.node(i).name()));
      }
      users[it->second].push_back(i);
      ++pending[i];
    }
    std::set<std::string> reads;
    subgraphReads(gp.node(i), reads);
    for (const auto& in : reads) {
      auto it = producer.find(in);
      if (it == producer.end() || it->second == i || im.values.count(in)) continue;
      users[it->second].push_back(i);
      ++pending[i];
    }
  }
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;
  for (int i = 0; i < count; ++i)
    if (pending[i] == 0) ready.push(i);
  std::vector<int> order;
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int u : users[i])
      if (--pending[u] == 0) ready.push(u);
  }
  if (int(order.size()) != count) return Status::error("the graph has a cycle", im.where);
  return order;
}

std::string uniqueNodeName(Importer& im, const onnx::NodeProto& n) {
  std::string name = n.name();
  while (name.empty() || im.nodeNames.count(name))
    name = n.op_type() + "_" + std::to_string(im.opCounts[n.op_type()]++);
  im.nodeNames.insert(name);
  return name;
}

Expected<std::pair<std::shared_ptr<Graph>, std::vector<std::string>>> importSubgraph(
    Importer& parent, const onnx::GraphProto& gp, const std::string& place,
    std::vector<std::optional<TensorType>> hints);

Status importNode(Importer& im, const onnx::NodeProto& n) {
  const std::string domain = canonicalDomain(n.domain());
  const std::string name = uniqueNodeName(im, n);
  const std::string place = nodeWhere(n, name);
  if (domain.empty() && n.op_type() == "Constant") {
    if (n.output_size() != 1) return Status::error("a Constant has exactly one output", place);
    auto t = constantValue(im, n, place);
    if (!t) return t.status();
    ValueId v = im.g().addConstant(n.output(0), std::make_shared<const TensorData>(std::move(*t)));
    return im.define(n.output(0), v, place);
  }
  std::vector<ValueId> inputs;
  for (const auto& in : n.input()) {
    if (in.empty()) {
      inputs.push_back(ValueId());
      continue;
    }
    auto v = im.lookup(in);
    if (!v) return Status::error("input '" + in + "' is not defined", place);
    inputs.push_back(*v);
  }
  Attributes attrs;
  std::vector<std::string> implicit;  // outer names the node's subgraphs read
  for (const auto& a : n.attribute()) {
    if (a.type() == onnx::AttributeProto::GRAPH ||
        (a.type() == onnx::AttributeProto::UNDEFINED && a.has_g())) {
      std::vector<std::optional<TensorType>> fed;  // what the node feeds, for body inputs
      for (ValueId v : inputs)
        fed.push_back(v.valid() ? std::optional(im.g().value(v).type) : std::nullopt);
      auto sub = importSubgraph(im, a.g(), place + " attribute '" + a.name() + "'",
                                onnximport::bodyInputHints(n, fed, im.opsetOf("")));
      if (!sub) return sub.status();
      for (const auto& name : sub->second)
        if (std::find(implicit.begin(), implicit.end(), name) == implicit.end())
          implicit.push_back(name);
      attrs.set(a.name(), std::shared_ptr<const Graph>(std::move(sub->first)));
      continue;
    }
    auto attr = attributeOf(im, a, place);
    if (!attr) return attr.status();
    if (*attr) attrs.set(a.name(), std::move(**attr));
  }
  if (!implicit.empty()) {
    // Outer values the bodies read become inputs of the node, after its own.
    for (const auto& name : implicit) inputs.push_back(*im.lookup(name));
    attrs.set("implicit_inputs", implicit);
  }
  std::vector<OutputSpec> outputs;
  for (int i = 0; i < n.output_size(); ++i) {
    // An omitted optional output still gets a value, with a name of its own.
    std::string out = n.output(i).empty() ? name + "/unused_" + std::to_string(i) : n.output(i);
    outputs.push_back({out, im.declaredType(n.output(i))});
  }
  NodeId id = im.g().addNode(n.op_type(), inputs, outputs, std::move(attrs), name);
  im.g().mutableNode(id).domain = domain;

  std::vector<ValueId> outs = im.g().node(id).outputs;
  // Import-time diagnostics name the opset the node was read under.
  const std::string opsetPlace = "node '" + name + "' (" + n.op_type() + ", " +
                                 (domain.empty() ? "" : domain + " ") + "opset " +
                                 std::to_string(im.opsetOf(domain)) + ")";
  // Before canonicalizing: its rewrites read the older forms' attributes too.
  if (Status kinds = checkAttributeKinds(im.g().node(id)); !kinds)
    return Status::error(kinds.diagnostic().message, im.where + ", " + opsetPlace);
  if (!OpRegistry::instance().find(domain, n.op_type())) {
    im.warn(opsetPlace, "op " + n.op_type() +
                            " is not supported; it imports as an opaque node and " +
                            "fails only when run");
  } else {
    auto canon = onnximport::canonicalizeNode(im.g(), id, im.opsetOf(domain), im.model.diagnostics);
    if (!canon) {
      Diagnostic d = canon.diagnostic();
      if (d.where == describeNode(im.g().node(id))) d.where = opsetPlace;
      return Status::fromDiagnostic(d);
    }
    outs = *canon;
  }
  for (int i = 0; i < n.output_size(); ++i)
    if (!n.output(i).empty()) FL_RETURN_IF_ERROR(im.define(n.output(i), outs[i], place));
  return Status::ok();
}

// A graph input's type: as declared, or, for a body input declared without an
// element type, what the owning node feeds it (keeping a declared shape).
Expected<TensorType> inputType(Importer& im, const onnx::ValueInfoProto& in, size_t index) {
  const std::string what = "graph input '" + in.name() + "'";
  bool untyped =
      !in.has_type() || (in.type().has_tensor_type() && in.type().tensor_type().elem_type() == 0);
  if (!untyped) return typeFromProto(in.type(), what);
  if (index >= im.inputHints.size() || !im.inputHints[index])
    return Status::error(what + " is declared without a type and its type cannot be taken from " +
                             "the node that owns the graph",
                         im.where);
  TensorType t = *im.inputHints[index];
  if (in.type().tensor_type().has_shape()) {
    onnx::TypeProto typed = in.type();
    typed.mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    auto shaped = typeFromProto(typed, what);
    if (!shaped) return shaped.status();
    shaped->dtype = t.dtype;
    return *shaped;
  }
  return t;
}

// The model's input dims that have no name (`?`: no dim_value, no
// dim_param) get one, <input>_<axis> ("x_2"), unless a dim_param already
// uses it: a named dim can be bound (--dim x_2=48), swept and asked for in
// the dims dialog, where `?` could only be fixed with the input's whole shape.
void nameUnknownInputDims(const onnx::GraphProto& gp, const std::set<std::string>& skip,
                          std::map<std::string, TensorType>& types) {
  std::set<std::string> used;
  for (const auto& in : gp.input())
    if (in.type().has_tensor_type())
      for (const auto& d : in.type().tensor_type().shape().dim())
        if (d.has_dim_param()) used.insert(d.dim_param());
  for (const auto& in : gp.input()) {
    auto it = types.find(in.name());
    if (skip.count(in.name()) || it == types.end() || !it->second.rankKnown) continue;
    std::string base;
    for (char c : in.name())
      base += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
    if (base.empty() || std::isdigit(static_cast<unsigned char>(base[0]))) base = "in_" + base;
    for (size_t axis = 0; axis < it->second.shape.size(); ++axis) {
      Dim& d = it->second.shape[axis];
      if (d.isStatic() || !d.symbol.empty()) continue;
      std::string name = base + "_" + std::to_string(axis);
      while (used.count(name)) name += "_";
      used.insert(name);
      d = Dim::named(name);
    }
  }
}

Status importGraph(Importer& im, const onnx::GraphProto& gp) {
  for (const auto& vi : gp.value_info()) im.declared[vi.name()] = &vi.type();
  for (const auto& o : gp.output()) im.declared[o.name()] = &o.type();

  std::vector<std::pair<std::string, TensorData>> inits;
  std::set<std::string> initNames;
  for (const auto& t : gp.initializer()) {
    auto data = tensorFromProto(t, "initializer '" + t.name() + "'", im.baseDir);
    if (!data) return data.status();
    inits.emplace_back(t.name(), std::move(*data));
    initNames.insert(t.name());
  }
  std::map<std::string, TensorType> types;
  for (int i = 0; i < gp.input_size(); ++i) {
    const auto& in = gp.input(i);
    if (initNames.count(in.name())) continue;  // IR < 4 lists initializers as inputs too
    auto type = inputType(im, in, size_t(i));
    if (!type) return type.status();
    types[in.name()] = *type;
  }
  if (!im.parent) nameUnknownInputDims(gp, initNames, types);
  for (const auto& in : gp.input())
    if (!initNames.count(in.name()))
      FL_RETURN_IF_ERROR(
          im.define(in.name(), im.g().addInput(in.name(), types[in.name()]), im.where));
  for (auto& [name, data] : inits) {
    ValueId v = im.g().addConstant(name, std::make_shared<const TensorData>(std::move(data)));
    FL_RETURN_IF_ERROR(im.define(name, v, im.where));
  }

  auto order = nodeOrder(gp, im);
  if (!order) return order.status();
  for (int i : *order) FL_RETURN_IF_ERROR(importNode(im, gp.node(i)));

  for (const auto& o : gp.output()) {
    auto v = im.lookup(o.name());  // a subgraph may return an outer value as it is
    if (!v)
      return Status::error("graph output '" + o.name() + "' is not produced by any node", im.where);
    im.g().addOutput(*v);
  }
  return Status::ok();
}

// Imports a GRAPH attribute as its own Graph; returns it with the outer-scope
// names it reads (already inputs of it, after its formal inputs).
Expected<std::pair<std::shared_ptr<Graph>, std::vector<std::string>>> importSubgraph(
    Importer& parent, const onnx::GraphProto& gp, const std::string& place,
    std::vector<std::optional<TensorType>> hints) {
  int depth = 0;
  for (Importer* p = &parent; p; p = p->parent) ++depth;
  if (depth > 32) return Status::error("subgraphs are nested more than 32 deep", place);
  auto graph = std::make_shared<Graph>();
  graph->name = gp.name().empty() ? "subgraph" : gp.name();
  Importer im{parent.model, parent.where, parent.baseDir};
  im.graph = graph.get();
  im.parent = &parent;
  im.inputHints = std::move(hints);
  Status s = importGraph(im, gp);
  if (!s) return s;
  FL_RETURN_IF_ERROR(inferGraphTypes(*graph));
  graph->markAsOriginal();
  return std::pair{graph, im.captured};
}

// The IR version and default-domain opset must be ones FuseLens knows: an
// op's meaning depends on its opset, so guessing one would run another model.
Status checkVersions(const ImportedModel& m, const std::string& where) {
  const std::string irs = "FuseLens reads IR versions 1 to " + std::to_string(kNewestIrVersion);
  const std::string opsets = "FuseLens reads opsets 1 to " + std::to_string(kLatestOpset);
  const std::string ir = std::to_string(m.irVersion);
  if (m.irVersion == 0)
    return Status::error("the model has no IR version (ir_version is 0 or unset); " + irs, where);
  if (m.irVersion < 0 || m.irVersion > kNewestIrVersion)
    return Status::error("IR version " + ir + " is not one FuseLens knows; " + irs, where);
  auto opset = m.opsets.find("");
  if (opset == m.opsets.end())
    return Status::error("the model imports no opset for the default ONNX domain, so its ops " +
                             std::string("have no defined meaning; ") + opsets,
                         where);
  const std::string v = std::to_string(opset->second);
  if (opset->second < 1)
    return Status::error("default-domain opset " + v + " is not valid; " + opsets, where);
  if (opset->second > kLatestOpset)
    return Status::error("default-domain opset " + v + " is newer than FuseLens knows; " + opsets,
                         where);
  return Status::ok();
}

}  // namespace

Expected<ImportedModel> importOnnxFile(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return Status::error("file not found", path);
  if (fs::is_directory(path, ec)) return Status::error("is a folder, not an ONNX model", path);
  // Protobuf cannot parse a message over 2 GB; such models keep weights as external data.
  if (fs::file_size(path, ec) > (uintmax_t(1) << 31) - 1)
    return Status::error("the file is over 2 GB; large models must store weights as external data",
                         path);
  // One read of the whole file: a byte-wise stream iterator took ~5% of a warm
  // `run` on a 10,000-node model.
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) return Status::error("cannot read the file", path);
  const std::streamoff size = f.tellg();
  if (size < 0) return Status::error("cannot read the file", path);
  std::string bytes(size_t(size), '\0');
  f.seekg(0);
  if (!f.read(bytes.data(), size)) return Status::error("cannot read the file", path);
  std::string dir = fs::path(path).parent_path().string();
  return importOnnxBytes(bytes, path, dir.empty() ? "." : dir);
}

Expected<ImportedModel> importOnnxBytes(const std::string& bytes, const std::string& where,
                                        const std::string& baseDir) {
  onnx::ModelProto proto;
  if (!proto.ParseFromString(bytes))
    return Status::error("not a valid ONNX model (protobuf parse failed)", where);
  if (!proto.has_graph()) return Status::error("not a valid ONNX model (it has no graph)", where);

  ImportedModel model;
  model.irVersion = proto.ir_version();
  model.producer = proto.producer_name();
  if (!proto.producer_version().empty()) model.producer += " " + proto.producer_version();
  for (const auto& kv : proto.metadata_props()) model.metadata[kv.key()] = kv.value();
  for (const auto& op : proto.opset_import())
    model.opsets[canonicalDomain(op.domain())] = op.version();
  // IR versions 1 and 2 predate opset_import: their ops are opset 1's.
  if (model.irVersion > 0 && model.irVersion < 3) model.opsets.emplace("", 1);
  FL_RETURN_IF_ERROR(checkVersions(model, where));
  FL_RETURN_IF_ERROR(onnximport::inlineLocalFunctions(proto, where));

  Importer im{model, where, baseDir};
  im.graph = &model.graph;
  FL_RETURN_IF_ERROR(importGraph(im, proto.graph()));
  FL_RETURN_IF_ERROR(inferGraphTypes(model.graph));
  model.graph.markAsOriginal();
  return model;
}

}  // namespace fuselens
