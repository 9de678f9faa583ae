// Compute definitions of the per-channel normalizations:
//   InstanceNormalization, GroupNormalization (opset-21 form, per-channel scale
//   and bias; the importer expands the opset-18 per-group form): for every
//   (n, group) row of C/G * spatial contiguous elements, a mean pass, a
//   variance pass about the mean, then (x - mean) * inv * scale[c] + bias[c]
//   handed to the Sink. Instance norm is group norm with G = C.
//   BatchNormalization (inference): an inlined per-channel affine map,
//   (x - mean[c]) / sqrt(var[c] + eps) * scale[c] + bias[c].
#include "codegen/compute_norm.h"

namespace fuselens {
namespace {

StmtRef serialLoop(const Var& v, int64_t extent, std::vector<StmtRef> body) {
  StmtRef s = forLoop(v, extent, std::move(body));
  s->pinned = true;
  return s;
}

// The element of a per-channel vector v at channel c.
ExprRef channel(KernelBuilder& kb, ValueId v, ExprRef c) {
  return kb.valueAt(v, Index::ofFlat(kb.shapeOf(v), std::move(c)));
}

}  // namespace

bool isNormOp(const std::string& op) {
  return op == "InstanceNormalization" || op == "GroupNormalization";
}

Status checkNormOp(const Graph& body, const Node& n) {
  bool batch = n.op == "BatchNormalization";
  size_t want = batch ? 5 : 3;
  if (n.inputs.size() != want || n.outputs.size() != 1)
    return Status::error(n.op + " needs " + std::to_string(want) + " inputs and one output",
                         nodePlace(n));
  for (ValueId v : n.inputs) {
    if (!v.valid()) return Status::error("an input is missing", nodePlace(n));
    const Value& val = body.value(v);
    if (!val.type.rankKnown || !val.type.isStatic() || val.type.dtype != DType::F32)
      return Status::error(
          "input '" + val.name + "' must be a static f32 tensor, not " + val.type.str(),
          nodePlace(n));
  }
  std::vector<int64_t> x = *body.value(n.inputs[0]).type.staticShape();
  if (x.size() < 2) return Status::error("the input needs a channel axis", nodePlace(n));
  for (size_t i = 1; i < n.inputs.size(); ++i)
    if (*body.value(n.inputs[i]).type.numElements() != x[1])
      return Status::error("input " + std::to_string(i) + " must hold one value per channel (" +
                               std::to_string(x[1]) + ")",
                           nodePlace(n));
  int64_t groups = n.op == "GroupNormalization" ? n.attrs.getInt("num_groups", 0) : x[1];
  if (!batch && (groups <= 0 || x[1] % groups != 0))
    return Status::error("num_groups must divide the channel count", nodePlace(n));
  if (body.value(n.outputs[0]).type.staticShape() != x)
    return Status::error("the output shape differs from the input shape", nodePlace(n));
  return Status::ok();
}

std::vector<StmtRef> lowerGroupNorm(KernelBuilder& kb, const Node& n,
                                    const KernelBuilder::Sink& sink) {
  std::vector<int64_t> shape = kb.shapeOf(n.inputs[0]);
  int64_t c = shape[1], spatial = 1;
  for (size_t k = 2; k < shape.size(); ++k) spatial *= shape[k];
  int64_t groups = n.op == "GroupNormalization" ? n.attrs.getInt("num_groups", 1) : c;
  int64_t cols = c / groups * spatial;
  double eps = n.attrs.getFloat("epsilon", 1e-5);
  return kb.loopNest({shape[0], groups}, [&](const Index& at) -> std::vector<StmtRef> {
    std::vector<ExprRef> d = at.dimExprs();
    ExprRef base = mul(add(mul(d[0], intConst(groups)), d[1]), intConst(cols));
    auto elem = [&](ExprRef j) { return Index::ofFlat(shape, add(base, j)); };
    auto x = [&](ExprRef j) { return kb.valueAt(n.inputs[0], elem(j)); };
    Var mean = kb.newLocal("mean"), var = kb.newLocal("var"), inv = kb.newLocal("inv");
    Var r1 = kb.newLoopVar(), r2 = kb.newLoopVar(), j = kb.newLoopVar();
    ExprRef dlt = sub(x(varRef(r2)), varRef(mean));
    ExprRef ch = add(mul(d[1], intConst(c / groups)), div(varRef(j), intConst(spatial)));
    ExprRef y =
        add(mul(mul(sub(x(varRef(j)), varRef(mean)), varRef(inv)), channel(kb, n.inputs[1], ch)),
            channel(kb, n.inputs[2], ch));
    std::vector<StmtRef> body = {
        let(mean, floatConst(0)),
        serialLoop(r1, cols, {assign(mean, add(varRef(mean), x(varRef(r1))))}),
        assign(mean, mul(varRef(mean), floatConst(1.0 / double(cols)))),
        let(var, floatConst(0)),
        serialLoop(r2, cols, {assign(var, add(varRef(var), mul(dlt, dlt)))}),
        let(inv, div(floatConst(1),
                     unary(UnOp::Sqrt, add(mul(varRef(var), floatConst(1.0 / double(cols))),
                                           floatConst(eps))))),
        forLoop(j, cols, sink(elem(varRef(j)), y))};
    return body;
  });
}

ExprRef batchNormValue(KernelBuilder& kb, const Node& n, const Index& out) {
  std::vector<ExprRef> d = out.dimExprs();
  ExprRef c = d[1];
  double eps = n.attrs.getFloat("epsilon", 1e-5);
  ExprRef x = kb.valueAt(n.inputs[0], out);
  ExprRef inv = div(channel(kb, n.inputs[1], c),
                    unary(UnOp::Sqrt, add(channel(kb, n.inputs[4], c), floatConst(eps))));
  return add(mul(sub(x, channel(kb, n.inputs[3], c)), inv), channel(kb, n.inputs[2], c));
}

}  // namespace fuselens
