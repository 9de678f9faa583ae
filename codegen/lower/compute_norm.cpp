// Compute definitions of the per-channel normalizations:
//   InstanceNormalization, GroupNormalization (opset-21 form, per-channel scale
//   and bias; the importer expands the opset-18 per-group form): for every
//   (n, group) row of C/G * spatial contiguous elements, a mean pass, a
//   variance pass about the mean, then (x - mean) * inv * scale[c] + bias[c]
//   handed to the Sink. Instance norm is group norm with G = C.
//   BatchNormalization (inference): an inlined per-channel affine map,
//   (x - mean[c]) / sqrt(var[c] + eps) * scale[c] + bias[c].
//   BatchNormalization (training_mode=1, opset 14+): per channel, the batch's
//   own mean and biased variance over N and the spatial axes normalize x, and
//   the running statistics outputs move towards them by 1 - momentum:
//   running = input_running * momentum + batch_stat * (1 - momentum).
//   Statistics run in f64, as the eager reference computes them, so a large
//   batch does not drift from it.
#include "codegen/lower/compute_norm.h"

#include <algorithm>

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

// Per channel c (a parallel loop): a mean pass and a variance pass over the
// N x spatial elements of c, then y over the same elements through the sink,
// and the running statistics at c.
std::vector<StmtRef> lowerBatchNormTraining(KernelBuilder& kb, const Node& n,
                                            const KernelBuilder::Sink& sink) {
  std::vector<int64_t> shape = kb.shapeOf(n.inputs[0]);
  int64_t batch = shape[0], c = shape[1], spatial = 1;
  for (size_t k = 2; k < shape.size(); ++k) spatial *= shape[k];
  double eps = n.attrs.getFloat("epsilon", 1e-5), momentum = n.attrs.getFloat("momentum", 0.9);
  double invCount = 1.0 / double(std::max<int64_t>(batch * spatial, 1));
  auto f64 = [](ExprRef e) { return cast(std::move(e), DType::F64); };
  return kb.loopNest({c}, [&](const Index& at) -> std::vector<StmtRef> {
    ExprRef ch = at.dimExprs()[0];
    auto elem = [&](const Var& b, const Var& s) {
      ExprRef flat = add(mul(add(mul(varRef(b), intConst(c)), ch), intConst(spatial)), varRef(s));
      return Index::ofFlat(shape, flat);
    };
    auto x = [&](const Var& b, const Var& s) { return f64(kb.valueAt(n.inputs[0], elem(b, s))); };
    Var mean = kb.newLocal("mean", DType::F64), var = kb.newLocal("var", DType::F64);
    Var b1 = kb.newLoopVar(), s1 = kb.newLoopVar(), b2 = kb.newLoopVar(), s2 = kb.newLoopVar();
    Var b3 = kb.newLoopVar(), s3 = kb.newLoopVar();
    ExprRef dlt = sub(x(b2, s2), varRef(mean));
    ExprRef y = add(mul(div(sub(x(b3, s3), varRef(mean)),
                            unary(UnOp::Sqrt, add(varRef(var), floatConst(eps, DType::F64)))),
                        f64(channel(kb, n.inputs[1], ch))),
                    f64(channel(kb, n.inputs[2], ch)));
    std::vector<StmtRef> body = {
        let(mean, floatConst(0, DType::F64)),
        serialLoop(b1, batch,
                   {serialLoop(s1, spatial, {assign(mean, add(varRef(mean), x(b1, s1)))})}),
        assign(mean, mul(varRef(mean), floatConst(invCount, DType::F64))),
        let(var, floatConst(0, DType::F64)),
        serialLoop(b2, batch,
                   {serialLoop(s2, spatial, {assign(var, add(varRef(var), mul(dlt, dlt)))})}),
        assign(var, mul(varRef(var), floatConst(invCount, DType::F64))),
        forLoop(b3, batch, {forLoop(s3, spatial, sink(elem(b3, s3), cast(y, DType::F32)))})};
    // Running statistics: input_running * momentum + batch_stat * (1 - momentum).
    for (size_t k = 1; k < n.outputs.size(); ++k) {
      ExprRef stat = k == 1 ? varRef(mean) : varRef(var);
      ExprRef prev = f64(channel(kb, n.inputs[2 + k], ch));
      ExprRef run = add(mul(prev, floatConst(momentum, DType::F64)),
                        mul(stat, floatConst(1 - momentum, DType::F64)));
      Index pos = Index::ofFlat(kb.shapeOf(n.outputs[k]), ch);
      for (StmtRef& st : kb.storeOutput(n.outputs[k], pos, cast(run, DType::F32)))
        body.push_back(std::move(st));
    }
    return body;
  });
}

}  // namespace

bool isBatchNormTraining(const Node& n) {
  return n.op == "BatchNormalization" && n.attrs.getInt("training_mode", 0) != 0;
}

bool isNormOp(const std::string& op) {
  return op == "InstanceNormalization" || op == "GroupNormalization";
}

Status checkNormOp(const Graph& body, const Node& n) {
  bool batch = n.op == "BatchNormalization";
  size_t want = batch ? 5 : 3;
  size_t maxOuts = isBatchNormTraining(n) ? 3 : 1;
  if (n.inputs.size() != want || n.outputs.empty() || n.outputs.size() > maxOuts)
    return Status::error(n.op + " needs " + std::to_string(want) + " inputs and " +
                             (maxOuts == 1 ? "one output" : "one to three outputs"),
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
  for (size_t k = 1; k < n.outputs.size(); ++k) {  // running mean and variance
    const TensorType& t = body.value(n.outputs[k]).type;
    if (!t.rankKnown || !t.isStatic() || t.dtype != DType::F32 || *t.numElements() != x[1])
      return Status::error("output " + std::to_string(k) + " must be a static f32 tensor of " +
                               std::to_string(x[1]) + " values, not " + t.str(),
                           nodePlace(n));
  }
  return Status::ok();
}

std::vector<StmtRef> lowerGroupNorm(KernelBuilder& kb, const Node& n,
                                    const KernelBuilder::Sink& sink) {
  if (isBatchNormTraining(n)) return lowerBatchNormTraining(kb, n, sink);
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
