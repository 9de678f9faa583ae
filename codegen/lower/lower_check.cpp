// Checks a kernel body before lowering: every op has a compute definition,
// every data value has a static shape and a dtype the lowering handles, and
// elementwise / index-map shapes agree. Errors name the node, so a user knows
// which op of which group to look at. (Reductions check their own operand
// shapes while they are lowered.)
#include <algorithm>

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

size_t expectedInputs(const Node& n) {
  if (n.op == "Gemm" || n.op == "LayerNormalization" || n.op == "Conv" || n.op == "ConvNCHWc")
    return n.inputs.size() >= 3 ? 3 : 2;
  if (n.op == "Max" || n.op == "Min" || n.op == "Sum" || n.op == "Mean")
    return std::max<size_t>(1, n.inputs.size());                         // variadic
  if (n.op == "Where") return 3;
  if (n.op == "CastLike") return 2;  // the second input only gives the type
  if (n.op == "Dropout") return std::clamp<size_t>(n.inputs.size(), 1, 3);  // ratio, training_mode
  if (n.op == "QuantizeLinear" || n.op == "DequantizeLinear")
    return std::clamp<size_t>(n.inputs.size(), 2, 3);  // zero point optional
  if (n.op == "Clip") return std::clamp<size_t>(n.inputs.size(), 1, 3);  // min, max optional
  if (n.op == "Squeeze" || n.op == "Unsqueeze") return n.inputs.size() >= 2 ? 2 : 1;  // axes
  if (n.op == "Concat") return std::max<size_t>(1, n.inputs.size());
  if (n.op == "Slice") return std::clamp<size_t>(n.inputs.size(), 3, 5);
  if (n.op == "Pad") return std::clamp<size_t>(n.inputs.size(), 1, 4);
  if (n.op.rfind("Reduce", 0) == 0) return n.inputs.size() >= 2 ? 2 : 1;  // axes optional
  bool binaryOp = isBinaryElementwise(n.op) || n.op == "MatMul" || n.op == "Reshape";
  return binaryOp ? 2 : 1;
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
    // LayerNormalization's Mean and InvStdDev, MaxPool's Indices: written by their nests.
    size_t maxOuts = n.op == "LayerNormalization" ? 3 : n.op == "MaxPool" || n.op == "Dropout" ? 2 : 1;
    if (n.inputs.size() != expectedInputs(n) || n.outputs.empty() || n.outputs.size() > maxOuts)
      return Status::error(n.op + " has " + std::to_string(n.inputs.size()) + " inputs and " +
                               std::to_string(n.outputs.size()) + " outputs; expected " +
                               std::to_string(expectedInputs(n)) + " and " +
                               (maxOuts > 1 ? "at most " : "") + std::to_string(maxOuts),
                           where);
    // Reshape's second input is its target shape (i64), a Reduce's its axes: not data.
    size_t dataInputs = n.op == "Reshape" || n.op == "Squeeze" || n.op == "Unsqueeze" ||
                                n.op == "Slice" || n.op == "Pad" || n.op.rfind("Reduce", 0) == 0
                            ? 1
                            : n.inputs.size();
    for (size_t i = 0; i < dataInputs; ++i) {
      if (!n.inputs[i].valid()) {
        if ((n.op == "Gemm" || n.op == "LayerNormalization" || n.op == "Conv") && i == 2)
          continue;                    // optional
        if (n.op == "Clip" || n.op == "Dropout") continue;  // optional inputs
        if ((n.op == "QuantizeLinear" || n.op == "DequantizeLinear") && i == 2) continue;
        return Status::error("input " + std::to_string(i) + " is missing", where);
      }
      FL_RETURN_IF_ERROR(checkValue(body.value(n.inputs[i]), where, takesNonFloat(n.op), &n));
    }
    FL_RETURN_IF_ERROR(checkValue(body.value(n.outputs[0]), where, takesNonFloat(n.op), &n));
    FL_RETURN_IF_ERROR(checkShapes(body, n, where));
  }
  for (ValueId v : body.outputs())
    FL_RETURN_IF_ERROR(checkValue(body.value(v), "kernel output '" + body.value(v).name + "'", true));
  return Status::ok();
}

}  // namespace fuselens
