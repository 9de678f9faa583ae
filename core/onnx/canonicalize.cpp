// Opset canonicalization (see canonicalize.h): a table of {op, below opset,
// rewrite} rows, each rewriting one older form into the latest opset's form.
#include "core/onnx/canonicalize.h"

#include <cstring>
#include <functional>
#include <optional>

#include "core/ops/registry.h"

namespace fuselens::onnximport {
namespace {

struct Rewrite {
  Graph& g;
  NodeId n;
  int64_t opset;
  std::vector<ValueId> outs;   // what stands for the node's outputs
  std::vector<NodeId> before;  // new nodes feeding the node
  std::vector<NodeId> after;   // new nodes reading the node's outputs
  std::vector<Diagnostic>& diags;

  const Node& node() const { return g.node(n); }
  Status error(const std::string& message) const {
    return Status::error(message, describeNode(node()));
  }
  void note(const std::string& message) {
    diags.push_back({Severity::Note, describeNode(node()), message});
  }
  // Rules read inputs before the registry has checked them: refuse missing ones.
  Status needInputs(size_t count) const {
    const auto& ins = node().inputs;
    for (size_t i = 0; i < count; ++i)
      if (i >= ins.size() || !ins[i].valid())
        return error("expects at least " + std::to_string(count) + " inputs");
    return Status::ok();
  }
  ValueId constantI64(const std::string& name, const std::vector<int64_t>& v) {
    return g.addConstant(name, std::make_shared<TensorData>(
                                   TensorData::fromVector(DType::I64, {int64_t(v.size())}, v)));
  }
};

using RewriteFn = std::function<Status(Rewrite&)>;

struct Rule {
  const char* op;      // "*" matches every op
  int64_t belowOpset;  // applies when the model's opset is lower
  RewriteFn rewrite;
};

std::string opsetText(int64_t opset) { return "opset-" + std::to_string(opset); }

// Softmax before 13 flattens the input to 2-D at `axis` (default 1) and
// normalizes each row; 13 normalizes along `axis` alone.
Status softmaxPre13(Rewrite& r) {
  FL_RETURN_IF_ERROR(r.needInputs(1));
  const Node& nd = r.node();
  int64_t axis = nd.attrs.getInt("axis", 1);
  const TensorType t = r.g.value(nd.inputs.at(0)).type;
  if (!t.rankKnown)
    return r.error(opsetText(r.opset) + " " + nd.op +
                   " needs a known input rank to convert it to " + "opset-13 semantics");
  int64_t rank = int64_t(t.rank());
  if (axis < -rank || axis >= rank)
    return r.error("axis " + std::to_string(axis) + " is out of range for " + t.str());
  if (axis < 0) axis += rank;
  if (axis == rank - 1 || rank == 0) {  // one trailing dim: the two meanings agree
    r.g.mutableNode(r.n).attrs.set("axis", int64_t(-1));
    return Status::ok();
  }
  auto shape = t.staticShape();
  if (!shape)
    return r.error(opsetText(r.opset) + " " + nd.op + " over axis " + std::to_string(axis) +
                   " of " + t.str() + " flattens the trailing dims, which needs a static shape; " +
                   "re-export the model with opset 13 or later");
  int64_t pre = 1, post = 1;
  for (int64_t i = 0; i < rank; ++i) (i < axis ? pre : post) *= (*shape)[i];
  const std::string name = nd.name;
  ValueId x = nd.inputs[0], y = nd.outputs[0];
  const std::string yName = r.g.value(y).name;
  TensorType flat = TensorType::of(t.dtype, {pre, post});

  NodeId in2d = r.g.addNode("Reshape", {x, r.constantI64(name + "/shape_2d", {pre, post})},
                            {{yName + "/in_2d", flat}}, {}, name + "/to_2d");
  r.g.setInput(r.n, 0, r.g.node(in2d).outputs[0]);
  r.g.mutableNode(r.n).attrs.set("axis", int64_t(-1));
  r.g.mutableValue(y).name = yName + "/out_2d";
  r.g.mutableValue(y).type = flat;
  NodeId back = r.g.addNode("Reshape", {y, r.constantI64(name + "/shape_nd", *shape)}, {{yName, t}},
                            {}, name + "/from_2d");
  r.before.push_back(in2d);
  r.after.push_back(back);
  r.outs[0] = r.g.node(back).outputs[0];
  r.note("converted " + opsetText(r.opset) + " " + r.node().op + "(axis=" + std::to_string(axis) +
         ") to Reshape -> " + r.node().op + "(axis=-1) -> Reshape");
  return Status::ok();
}

// Reshape before 5 took the target as an attribute; later it is an input.
Status reshapeShapeAttr(Rewrite& r) {
  auto shape = r.node().attrs.getInts("shape");
  if (!shape) return Status::ok();
  if (r.node().inputs.size() != 1) return r.error("with a shape attribute expects 1 input");
  ValueId c = r.constantI64(r.node().name + "/shape", *shape);
  Node& nd = r.g.mutableNode(r.n);
  nd.attrs.erase("shape");
  nd.inputs.resize(1);
  nd.inputs.push_back(ValueId());  // an omitted slot, then filled through setInput for use lists
  r.g.setInput(r.n, 1, c);
  return Status::ok();
}

// Binary ops before 7 broadcast only with broadcast=1, aligning B at `axis`
// of A; numpy rules align at the end. Equal when B already ends A's shape;
// otherwise a constant B gets trailing 1s.
Status legacyBroadcast(Rewrite& r) {
  Node& nd = r.g.mutableNode(r.n);
  bool broadcast = nd.attrs.getInt("broadcast", 0) != 0;
  const Attribute* axisAttr = nd.attrs.find("axis");
  int64_t axis = axisAttr ? nd.attrs.getInt("axis", 0) : 0;
  nd.attrs.erase("broadcast");
  nd.attrs.erase("axis");
  if (!broadcast || !axisAttr) return Status::ok();
  FL_RETURN_IF_ERROR(r.needInputs(2));
  const Value& a = r.g.value(nd.inputs.at(0));
  const Value& b = r.g.value(nd.inputs.at(1));
  if (!a.type.rankKnown || !b.type.rankKnown)
    return r.error("legacy broadcasting with axis needs known input ranks");
  int64_t ra = int64_t(a.type.rank()), rb = int64_t(b.type.rank());
  if (axis < 0) axis += ra;
  int64_t trailing = ra - axis - rb;
  if (trailing == 0) return Status::ok();
  if (trailing < 0 || !b.constant)
    return r.error(opsetText(r.opset) + " broadcasting at axis " + std::to_string(axis) +
                   " of a non-constant input cannot be expressed with numpy broadcasting");
  auto data = std::make_shared<TensorData>(*b.constant);
  data->shape.insert(data->shape.end(), size_t(trailing), 1);
  r.g.setInput(r.n, 1, r.g.addConstant(b.name + "/aligned", data));
  return Status::ok();
}

// Moves an ints attribute into a constant i64 input at `slot` (the later
// opsets' form), e.g. Unsqueeze-11's axes attribute -> Unsqueeze-13's input 1.
// Absent attribute: nothing to move (the input stays omitted).
RewriteFn attrToInput(const char* attr, size_t slot) {
  return [attr, slot](Rewrite& r) {
    auto v = r.node().attrs.getInts(attr);
    if (!v) return Status::ok();
    if (r.node().inputs.size() > slot && r.node().inputs[slot].valid())
      return r.error(std::string("has both a '") + attr + "' attribute and input " +
                     std::to_string(slot));
    ValueId c = r.constantI64(r.node().name + "/" + attr, *v);
    Node& nd = r.g.mutableNode(r.n);
    nd.attrs.erase(attr);
    if (nd.inputs.size() <= slot) nd.inputs.resize(slot + 1);  // omitted slots in between
    r.g.setInput(r.n, slot, c);
    return Status::ok();
  };
}

// A float attribute as a scalar constant input of the node's input-0 dtype
// (f32, f64 or i64: the only types these old opsets allowed).
Status floatAttrToInput(Rewrite& r, const char* attr, size_t slot) {
  if (!r.node().attrs.has(attr)) return Status::ok();
  double v = r.node().attrs.getFloat(attr, 0);
  r.g.mutableNode(r.n).attrs.erase(attr);
  FL_RETURN_IF_ERROR(r.needInputs(1));
  DType dt = r.g.value(r.node().inputs[0]).type.dtype;
  std::shared_ptr<TensorData> t;
  if (dt == DType::F32)
    t = std::make_shared<TensorData>(
        TensorData::fromVector(DType::F32, {}, std::vector<float>{float(v)}));
  else if (dt == DType::F64)
    t = std::make_shared<TensorData>(
        TensorData::fromVector(DType::F64, {}, std::vector<double>{v}));
  else if (dt == DType::I64)
    t = std::make_shared<TensorData>(
        TensorData::fromVector(DType::I64, {}, std::vector<int64_t>{int64_t(v)}));
  else
    return r.error(std::string("converting the '") + attr +
                   "' attribute needs an f32, f64 or i64 input");
  ValueId c = r.g.addConstant(r.node().name + "/" + attr, t);
  Node& m = r.g.mutableNode(r.n);
  if (m.inputs.size() <= slot) m.inputs.resize(slot + 1);
  r.g.setInput(r.n, slot, c);
  return Status::ok();
}

// Clip before 11: min/max attributes -> inputs 1 and 2.
Status clipPre11(Rewrite& r) {
  // Clip-6 defaults are the float range; an absent bound is an omitted input.
  FL_RETURN_IF_ERROR(floatAttrToInput(r, "min", 1));
  return floatAttrToInput(r, "max", 2);
}

// Pad before 11: pads and value attributes -> inputs 1 and 2.
Status padPre11(Rewrite& r) {
  if (!r.node().attrs.getInts("pads")) return r.error("needs a pads attribute before opset 11");
  FL_RETURN_IF_ERROR(attrToInput("pads", 1)(r));
  return floatAttrToInput(r, "value", 2);
}

// GroupNormalization-18 scales each group; 21 each channel: repeat the
// constant per-group scale and bias over the channels of each group.
Status groupNormPre21(Rewrite& r) {
  FL_RETURN_IF_ERROR(r.needInputs(3));
  const Node& nd = r.node();
  int64_t groups = nd.attrs.getInt("num_groups", 0);
  const TensorType& x = r.g.value(nd.inputs[0]).type;
  if (!x.rankKnown || x.rank() < 2 || !x.shape[1].isStatic() || groups <= 0 ||
      x.shape[1].value % groups != 0)
    return r.error(opsetText(r.opset) +
                   " GroupNormalization needs a static channel count divisible by num_groups");
  int64_t C = x.shape[1].value;
  // C comes from a declared type, not from data: bound it before allocating C values.
  if (C > (int64_t(1) << 24))
    return r.error(opsetText(r.opset) + " GroupNormalization declares " + std::to_string(C) +
                   " channels, too many (over 2^24) to repeat its scale and bias per channel");
  for (size_t slot : {size_t(1), size_t(2)}) {
    const Value& v = r.g.value(nd.inputs[slot]);
    if (!v.constant || v.constant->numel() != groups)
      return r.error(opsetText(r.opset) +
                     " GroupNormalization needs constant per-group scale and bias");
    auto t = std::make_shared<TensorData>(v.constant->dtype, std::vector<int64_t>{C});
    size_t es = dtypeSize(t->dtype);
    for (int64_t c = 0; c < C; ++c)
      std::memcpy(t->bytes.data() + c * es, v.constant->bytes.data() + (c / (C / groups)) * es, es);
    r.g.setInput(r.n, slot, r.g.addConstant(v.name + "/per_channel", t));
  }
  return Status::ok();
}

// Slice before 10: starts/ends/axes attributes -> inputs 1, 2, 3.
Status slicePre10(Rewrite& r) {
  FL_RETURN_IF_ERROR(attrToInput("starts", 1)(r));
  FL_RETURN_IF_ERROR(attrToInput("ends", 2)(r));
  return attrToInput("axes", 3)(r);
}

// TopK before 10: the k attribute -> a 1-element input.
Status topkPre10(Rewrite& r) {
  int64_t k = r.node().attrs.getInt("k", -1);
  if (k < 0) return r.error("needs a k attribute before opset 10");
  r.g.mutableNode(r.n).attrs.set("k", std::vector<int64_t>{k});
  return attrToInput("k", 1)(r);
}

// BatchNormalization before 9 had spatial (1 = per channel, the later meaning).
Status batchNormPre9(Rewrite& r) {
  Node& nd = r.g.mutableNode(r.n);
  if (nd.attrs.getInt("spatial", 1) != 1)
    return r.error(opsetText(r.opset) + " BatchNormalization with spatial=0 is not supported");
  nd.attrs.erase("spatial");
  nd.attrs.erase("is_test");
  if (nd.outputs.size() > 1)
    return r.error("has training outputs (running mean/var); only inference is supported");
  return Status::ok();
}

// BatchNormalization 9-13 had no training_mode: extra outputs (mean, var,
// saved mean, saved var) meant training, in a form ONNX replaced in 14.
Status batchNormTrainingPre14(Rewrite& r) {
  if (r.node().outputs.size() > 1)
    return r.error(opsetText(r.opset) + " BatchNormalization with training outputs is not " +
                   "supported; re-export with opset 14+ (training_mode=1), which FuseLens runs");
  return Status::ok();
}

// Scan-8 carries a batch axis 0 everywhere and scans axis 1, with an optional
// sequence_lens first input and `directions`; the kernel runs it per batch
// entry, marked by scan8_batch_axis (Scan-9's form has no batch axis).
Status scanPre9(Rewrite& r) {
  Node& nd = r.g.mutableNode(r.n);
  nd.attrs.set("scan8_batch_axis", int64_t(1));
  if (auto d = nd.attrs.getInts("directions")) {
    nd.attrs.set("scan_input_directions", *d);
    nd.attrs.erase("directions");
  }
  return Status::ok();
}

// Resize-10 took (X, scales) with asymmetric coordinates and its own nearest
// rounding; 11+ takes (X, roi, scales, sizes) with those named as attributes.
Status resizePre11(Rewrite& r) {
  FL_RETURN_IF_ERROR(r.needInputs(2));
  Node& nd = r.g.mutableNode(r.n);
  ValueId scales = nd.inputs[1];
  nd.attrs.set("coordinate_transformation_mode", std::string("asymmetric"));
  nd.attrs.set("nearest_mode", std::string("simple"));
  nd.inputs.resize(3);
  r.g.setInput(r.n, 1, ValueId());
  r.g.setInput(r.n, 2, scales);
  return Status::ok();
}

// Upsample (opsets 7-9, deprecated in 10) is Resize-10: scales as an attribute
// (7) or an input (9) -> Resize(X, "", scales) with Resize-10's coordinates.
Status upsampleToResize(Rewrite& r) {
  FL_RETURN_IF_ERROR(r.needInputs(1));
  if (auto scales = r.node().attrs.find("scales")) {
    if (!std::holds_alternative<std::vector<double>>(*scales))
      return r.error("the scales attribute must be a list of floats");
    std::vector<float> v;
    for (double d : std::get<std::vector<double>>(*scales)) v.push_back(float(d));
    auto t =
        std::make_shared<TensorData>(TensorData::fromVector(DType::F32, {int64_t(v.size())}, v));
    ValueId c = r.g.addConstant(r.node().name + "/scales", t);
    Node& nd = r.g.mutableNode(r.n);
    nd.attrs.erase("scales");
    nd.inputs.resize(2);
    r.g.setInput(r.n, 1, c);
  }
  FL_RETURN_IF_ERROR(r.needInputs(2));
  r.g.mutableNode(r.n).op = "Resize";
  r.note("converted " + opsetText(r.opset) + " Upsample to Resize");
  return resizePre11(r);
}

RewriteFn eraseAttr(const char* attr) {
  return [attr](Rewrite& r) {
    r.g.mutableNode(r.n).attrs.erase(attr);
    return Status::ok();
  };
}

const std::vector<Rule>& rules() {
  static const std::vector<Rule> table = {
      {"*", 6, eraseAttr("consumed_inputs")},  // memory hint of opset 1-5, no meaning
      {"Softmax", 13, softmaxPre13},           // 2-D coercion -> Reshape+Softmax+Reshape
      {"Reshape", 5, reshapeShapeAttr},        // shape attribute -> constant input
      {"Add", 7, legacyBroadcast},             // broadcast/axis -> numpy broadcasting
      {"Sub", 7, legacyBroadcast},
      {"Mul", 7, legacyBroadcast},
      {"Div", 7, legacyBroadcast},
      {"Gemm", 7, eraseAttr("broadcast")},  // C broadcasts unidirectionally since 7
      {"LogSoftmax", 13, softmaxPre13},
      // axes attribute -> input: ReduceSum at 13, the other reductions at 18.
      {"ReduceSum", 13, attrToInput("axes", 1)},
      {"ReduceMean", 18, attrToInput("axes", 1)},
      {"ReduceMax", 18, attrToInput("axes", 1)},
      {"ReduceMin", 18, attrToInput("axes", 1)},
      {"ReduceProd", 18, attrToInput("axes", 1)},
      {"ReduceL1", 18, attrToInput("axes", 1)},
      {"ReduceL2", 18, attrToInput("axes", 1)},
      {"ReduceSumSquare", 18, attrToInput("axes", 1)},
      {"ReduceLogSum", 18, attrToInput("axes", 1)},
      {"ReduceLogSumExp", 18, attrToInput("axes", 1)},
      {"Squeeze", 13, attrToInput("axes", 1)},
      {"Unsqueeze", 13, attrToInput("axes", 1)},
      {"Split", 13, attrToInput("split", 1)},  // num_outputs (18) needs no rewrite
      {"Pad", 11, padPre11},                   // pads/value attributes -> inputs
      {"Clip", 11, clipPre11},                 // min/max attributes -> inputs
      {"Slice", 10, slicePre10},               // starts/ends/axes attributes -> inputs
      {"TopK", 10, topkPre10},                 // k attribute -> input
      {"BatchNormalization", 9, batchNormPre9},
      {"BatchNormalization", 14, batchNormTrainingPre14},
      {"Dropout", 7, eraseAttr("is_test")},
      {"GroupNormalization", 21, groupNormPre21},
      {"Resize", 11, resizePre11},
      {"Scan", 9, scanPre9},
      {"Upsample", 1000, upsampleToResize},  // every opset: the IR has no Upsample
  };
  return table;
}

}  // namespace

Expected<std::vector<ValueId>> canonicalizeNode(Graph& g, NodeId n, int64_t opset,
                                                std::vector<Diagnostic>& diags) {
  Rewrite r{g, n, opset, g.node(n).outputs, {}, {}, diags};
  const std::string op = g.node(n).op;
  for (const Rule& rule : rules()) {
    if ((rule.op != op && std::string(rule.op) != "*") || opset >= rule.belowOpset) continue;
    // An op's rewrite renames or rewires the node's result; one without any is malformed.
    if (rule.op == op && g.node(n).outputs.empty()) return r.error("has no outputs");
    FL_RETURN_IF_ERROR(rule.rewrite(r));
  }
  // Types flow producers first: what feeds the node, the node, what reads it.
  std::vector<NodeId> order = r.before;
  order.push_back(n);
  order.insert(order.end(), r.after.begin(), r.after.end());
  for (NodeId id : order) FL_RETURN_IF_ERROR(inferNodeTypes(g, id));
  return r.outs;
}

}  // namespace fuselens::onnximport
