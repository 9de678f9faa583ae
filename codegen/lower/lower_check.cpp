// Checks a kernel body before lowering: every op has a compute definition,
// every data value has a static shape and a dtype the lowering handles, and
// elementwise / index-map shapes agree. Errors name the node, so a user knows
// which op of which group to look at. (Reductions check their own operand
// shapes while they are lowered.)
#include <algorithm>
#include <cstdint>
#include <string_view>

#include "codegen/lower/compute_data.h"
#include "codegen/lower/lower_internal.h"
#include "codegen/lower/operand_limit.h"

namespace fuselens {
namespace {

// anyType: the value may have any dtype (kernel inputs and outputs, whose
// consumers and producers are checked per node); else the dtypes n's compute
// definition handles (computeHandlesDType), or f32 when no node is given.
Status checkValue(const Value& v, const std::string& where, bool anyType = false,
                  const Node* n = nullptr) {
  if (!v.type.rankKnown || !v.type.isStatic())
    return Status::error("value '" + v.name + "' has the dynamic shape " + v.type.str() +
                             "; code generation needs static shapes for now",
                         where);
  DType t = v.type.dtype;
  if (anyType || (n && computeHandlesDType(*n, t))) return Status::ok();
  if (t != DType::F32)
    return Status::error("value '" + v.name + "' is " + std::string(dtypeName(v.type.dtype)) +
                             "; code generation does not handle this dtype for this op yet",
                         where);
  return Status::ok();
}

Status checkShapes(const Graph& g, const Node& n, const std::string& where) {
  std::vector<int64_t> out = *g.value(n.outputs[0]).type.staticShape();
  std::vector<int64_t> in = *g.value(n.inputs[0]).type.staticShape();
  if (computeClassOf(n) == ComputeClass::Elementwise) {
    if (n.op == "QuantizeLinear" || n.op == "DequantizeLinear")
      return checkElementwiseOperands(g, n);  // per-axis operands
    for (ValueId v : n.inputs)
      if (v.valid() && !broadcastsTo(*g.value(v).type.staticShape(), out))
        return Status::error("input '" + g.value(v).name + "' of shape " +
                                 formatShape(*g.value(v).type.staticShape()) +
                                 " does not broadcast to the output shape " + formatShape(out),
                             where);
    return Status::ok();
  }
  if (n.op == "Identity" && in != out)
    return Status::error(
        "output shape " + formatShape(out) + " differs from the input shape " + formatShape(in),
        where);
  bool reshapeLike =
      n.op == "Reshape" || n.op == "Squeeze" || n.op == "Unsqueeze" || n.op == "Flatten";
  if (reshapeLike &&
      *g.value(n.inputs[0]).type.numElements() != *g.value(n.outputs[0]).type.numElements())
    return Status::error("cannot reshape " + formatShape(in) + " to " + formatShape(out), where);
  if (n.op == "Transpose") {
    if (in.size() != out.size())
      return Status::error("output rank differs from the input rank", where);
    std::vector<int64_t> perm(in.size());
    for (size_t k = 0; k < in.size(); ++k) perm[k] = int64_t(in.size() - 1 - k);
    if (auto p = n.attrs.getInts("perm")) perm = *p;
    if (perm.size() != in.size())
      return Status::error("perm has " + std::to_string(perm.size()) + " entries for rank " +
                               std::to_string(in.size()),
                           where);
    for (size_t k = 0; k < perm.size(); ++k)
      if (perm[k] < 0 || perm[k] >= int64_t(in.size()) || in[perm[k]] != out[k])
        return Status::error(
            "output shape " + formatShape(out) + " is not " + formatShape(in) + " permuted by perm",
            where);
  }
  return Status::ok();
}

// What a kernel body's node may have as operands, one row per op whose counts
// differ from the default (one input, or two for binary elementwise ops):
// input count range, output count, how many inputs are data (the rest are
// shapes, axes or the like), and which inputs may be omitted.
constexpr size_t kVariadic = size_t(-1), kAllInputs = size_t(-1);
constexpr uint32_t kAnyOptional = ~0u;

struct OperandRow {
  std::string_view op;
  size_t minIn, maxIn;  // maxIn kVariadic: any count from minIn
  size_t maxOut = 1;
  size_t dataIn = kAllInputs;
  uint32_t optional = 0;  // bit i: input i may be omitted
};
constexpr OperandRow kOperandRows[] = {
    {"Gemm", 2, 3, 1, kAllInputs, 1u << 2},                // C optional
    {"LayerNormalization", 2, 3, 3, kAllInputs, 1u << 2},  // bias optional; Mean, InvStdDev
    {"Conv", 2, 3, 1, kAllInputs, 1u << 2},                // bias optional
    {"ConvNCHWc", 2, 3},                                   // blocked conv, bias given
    {"Max", 1, kVariadic},
    {"Min", 1, kVariadic},  // variadic
    {"Sum", 1, kVariadic},
    {"Mean", 1, kVariadic},
    {"Concat", 1, kVariadic},
    {"Where", 3, 3},
    {"CastLike", 2, 2},                                // the second input only gives the type
    {"Dropout", 1, 3, 2, kAllInputs, kAnyOptional},    // ratio, training_mode; mask output
    {"QuantizeLinear", 2, 3, 1, kAllInputs, 1u << 2},  // zero point optional
    {"DequantizeLinear", 2, 3, 1, kAllInputs, 1u << 2},
    {"Clip", 1, 3, 1, kAllInputs, kAnyOptional},  // min, max optional
    {"Squeeze", 1, 2, 1, 1},
    {"Unsqueeze", 1, 2, 1, 1},  // axes
    {"Slice", 3, 5, 1, 1},      // starts, ends, axes, steps
    {"Pad", 1, 4, 1, 1},        // pads, constant value, axes
    {"Reshape", 2, 2, 1, 1},    // the target shape
    {"MatMul", 2, 2},
    {"MaxPool", 1, 1, 2},  // Indices
};
// Every Reduce* op: data, then optional axes.
constexpr OperandRow kReduceRow = {"Reduce*", 1, 2, 1, 1};

OperandRow operandRow(const Node& n) {
  for (const OperandRow& r : kOperandRows)
    if (r.op == n.op) return r;
  if (n.op.rfind("Reduce", 0) == 0) return kReduceRow;
  return isBinaryElementwise(n.op) ? OperandRow{n.op, 2, 2} : OperandRow{n.op, 1, 1};
}

size_t expectedInputs(const OperandRow& r, const Node& n) {
  return std::clamp(n.inputs.size(), r.minIn,
                    r.maxIn == kVariadic ? std::max(r.minIn, n.inputs.size()) : r.maxIn);
}

}  // namespace

Status checkKernelBody(const Graph& body, const std::vector<NodeId>& order) {
  for (ValueId v : body.inputs())
    if (!body.value(v).type.isStatic() || !body.value(v).type.rankKnown)
      return checkValue(body.value(v), "kernel input '" + body.value(v).name + "'", true);
  for (NodeId id : order) {
    const Node& n = body.node(id);
    std::string where = nodePlace(n);
    if (computeClassOf(n) == ComputeClass::Unsupported)
      return Status::error("no code generation for op " + n.op, where);
    FL_RETURN_IF_ERROR(checkOperandCount(n, where));  // wide variadic ops: eager fallback
    if (checksOwnOperands(body, n)) {  // data movement, scans, norms (compute_data.h)
      FL_RETURN_IF_ERROR(checkOwnOperands(body, n));
      continue;
    }
    const OperandRow row = operandRow(n);
    const size_t expected = expectedInputs(row, n), maxOuts = row.maxOut;
    if (n.inputs.size() != expected || n.outputs.empty() || n.outputs.size() > maxOuts)
      return Status::error(n.op + " has " + std::to_string(n.inputs.size()) + " inputs and " +
                               std::to_string(n.outputs.size()) + " outputs; expected " +
                               std::to_string(expected) + " and " +
                               (maxOuts > 1 ? "at most " : "") + std::to_string(maxOuts),
                           where);
    const size_t dataInputs = std::min(row.dataIn, n.inputs.size());
    for (size_t i = 0; i < dataInputs; ++i) {
      if (!n.inputs[i].valid()) {
        if (i < 32 && (row.optional >> i) & 1u) continue;
        return Status::error("input " + std::to_string(i) + " is missing", where);
      }
      FL_RETURN_IF_ERROR(checkValue(body.value(n.inputs[i]), where, false, &n));
    }
    FL_RETURN_IF_ERROR(checkValue(body.value(n.outputs[0]), where, false, &n));
    FL_RETURN_IF_ERROR(checkShapes(body, n, where));
  }
  for (ValueId v : body.outputs())
    FL_RETURN_IF_ERROR(
        checkValue(body.value(v), "kernel output '" + body.value(v).name + "'", true));
  return Status::ok();
}

}  // namespace fuselens
