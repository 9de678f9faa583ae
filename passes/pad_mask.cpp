// pad-mask: find the axes that are `dim` by probing, then mask the ops that
// read along them (passes/pad_mask.h has the contract).
//
//   1. probe   bind `dim` to two primes, infer, fold: an axis whose extent is
//              each prime is `dim`; one that moves otherwise is derived from it
//   2. check   refuse ops that mix positions along `dim` unmaskably
//   3. rewrite insert the masks, then infer the symbolic graph's types again
#include "passes/pad_mask.h"

#include <set>

#include "core/ir/dim_expr.h"
#include "core/ops/op_util.h"
#include "core/ops/registry.h"
#include "passes/const_fold.h"

namespace fuselens {
namespace {

constexpr int64_t kProbes[2] = {1009, 1013};
constexpr float kMaskedLogit = -1e30f;  // exp of it minus any valid logit is exactly 0

enum class Axis : int8_t { Other, Dim, Derived };

Expected<Graph> probe(const Graph& g, const std::string& dim, int64_t value) {
  Graph p = g;
  for (ValueId v : p.valueIds())
    for (Dim& d : p.mutableValue(v).type.shape)
      d = bindDim(d, {{dim, value}});  // seq-1 evaluates too
  FL_RETURN_IF_ERROR(inferGraphTypes(p));
  PassContext ctx;
  PassResult folded = ConstFoldPass(int64_t(1) << 16).run(p, ctx);
  if (!folded.status) return folded.status;
  return p;
}

std::vector<int64_t> constInts(const Graph& g, ValueId v) {
  std::vector<int64_t> out;
  if (!v.valid() || !g.value(v).constant) return out;
  const TensorData& t = *g.value(v).constant;
  for (int64_t i = 0; i < t.numel(); ++i) out.push_back(int64_t(t.at(i)));
  return out;
}

class Masker {
 public:
  Masker(Graph& g, std::string dim, std::vector<std::vector<Axis>> kinds,
         std::vector<std::vector<int64_t>> extents)
      : g_(g), dim_(std::move(dim)), kinds_(std::move(kinds)), extents_(std::move(extents)) {}

  Status visit(NodeId id);
  Status checkOutput(ValueId v) const;
  int64_t masks() const { return masks_; }
  void addKeep() { keep_ = g_.addInput(padMaskInputName(dim_), {DType::F32, {Dim::named(dim_)}}); }

 private:
  size_t rank(ValueId v) const { return kinds_[v.index].size(); }
  Axis kind(ValueId v, int64_t axis) const {
    return v.valid() && axis >= 0 && size_t(axis) < rank(v) ? kinds_[v.index][axis] : Axis::Other;
  }
  std::vector<int64_t> axesOf(const Node& n, size_t r) const;
  Status refuse(const Node& n, const std::string& why) const {
    return Status::error(n.op + " " + why + " along the padded dim '" + dim_ +
                             "', which no mask can fix; compile this model per shape "
                             "(no buckets)",
                         "node '" + n.name + "'");
  }
  ValueId node(const std::string& op, std::vector<ValueId> in, Attributes attrs = {}) {
    const std::string name = "pad_mask/" + std::to_string(counter_++) + "_" + op;
    TensorType unknown;
    unknown.rankKnown = false;
    NodeId n = g_.addNode(op, std::move(in), {{name, unknown}}, std::move(attrs), name);
    return g_.node(n).outputs[0];
  }
  ValueId scalar(float v) {
    auto t = std::make_shared<TensorData>(TensorData::fromVector<float>(DType::F32, {}, {v}));
    return g_.addConstant("pad_mask/c" + std::to_string(counter_++), t);
  }
  ValueId ones(const std::vector<int64_t>& shape) {
    int64_t count = 1;
    for (int64_t e : shape) count *= e;
    auto t = std::make_shared<TensorData>(
        TensorData::fromVector<float>(DType::F32, shape, std::vector<float>(size_t(count), 1.0f)));
    return g_.addConstant("pad_mask/c" + std::to_string(counter_++), t);
  }
  ValueId ints(const std::vector<int64_t>& v) {
    auto t = std::make_shared<TensorData>(
        TensorData::fromVector<int64_t>(DType::I64, {int64_t(v.size())}, v));
    return g_.addConstant("pad_mask/c" + std::to_string(counter_++), t);
  }
  // A [dim] vector shaped to broadcast along `axis` of a rank-`r` tensor.
  ValueId along(ValueId vec, int64_t axis, size_t r) {
    std::vector<int64_t> trailing;
    for (int64_t a = 1; a < int64_t(r) - axis; ++a) trailing.push_back(a);
    return trailing.empty() ? vec : node("Unsqueeze", {vec, ints(trailing)});
  }
  // The f32 mask `m` in the dtype of `x`, which it is combined with.
  ValueId like(ValueId m, ValueId x) {
    return g_.value(x).type.dtype == DType::F32 ? m : node("CastLike", {m, x});
  }
  ValueId bias() {
    if (!bias_.valid())
      bias_ = node("Mul", {node("Sub", {keep_, scalar(1)}), scalar(-kMaskedLogit)});
    return bias_;
  }
  Status maskSoftmax(const Node& n);
  Status maskReduce(const Node& n);
  Status maskMatMul(const Node& n);
  Status maskWindow(const Node& n);
  Status maskAveragePoolExcludingPads(const Node& n, int64_t axis);
  Status maskLayerNorm(const Node& n);
  // Puts `now` where the node's only result was and drops the node.
  void replaceResult(const Node& n, ValueId now) {
    const ValueId old = n.outputs[0];
    const std::string name = g_.value(old).name;
    g_.replaceAllUses(old, now);
    g_.removeNode(n.id);
    g_.mutableValue(now).name = name;  // graph outputs keep their names
  }
  // sum(keep) times the extents of the other `axes`: how many valid positions
  // a reduction over `axes` of `x` sees, in x's dtype.
  ValueId validCount(ValueId x, const std::vector<int64_t>& axes) {
    int64_t others = 1;
    for (int64_t a : axes)
      if (kind(x, a) != Axis::Dim) others *= extents_[x.index][a];
    Attributes scalarSum;
    scalarSum.set("keepdims", Attribute(int64_t(0)));
    ValueId count = node("ReduceSum", {keep_}, scalarSum);
    if (others != 1) count = node("Mul", {count, scalar(float(others))});
    return like(count, x);
  }

  Graph& g_;
  std::string dim_;
  std::vector<std::vector<Axis>> kinds_;       // by value index: per axis
  std::vector<std::vector<int64_t>> extents_;  // by value index: per axis, at the first probe
  ValueId keep_, bias_;
  std::set<int32_t> maskedSoftmax_;  // outputs already zero at padded positions
  int64_t masks_ = 0, counter_ = 0;
};

// The axes an op reads across (reduces, slides, normalizes, concatenates).
std::vector<int64_t> Masker::axesOf(const Node& n, size_t r) const {
  auto norm = [&](int64_t a) { return ops::normalizeAxis(a, int64_t(r)).value_or(0); };
  std::vector<int64_t> axes;
  const std::string& op = n.op;
  if (op == "Conv" || op == "ConvTranspose" || op.find("Pool") != std::string::npos ||
      op == "LpNormalization" || op == "InstanceNormalization" || op == "GroupNormalization" ||
      op == "LRN" || op == "Resize" || op == "Einsum" || op == "Slice" || op == "Pad" ||
      op == "ReverseSequence")
    for (size_t a = (op == "Slice" || op == "Pad" || op == "Einsum" ? 0 : 2); a < r; ++a)
      axes.push_back(int64_t(a));
  else if (op == "LayerNormalization")
    for (int64_t a = norm(n.attrs.getInt("axis", -1)); a < int64_t(r); ++a) axes.push_back(a);
  else if (op.rfind("Reduce", 0) == 0) {
    std::vector<int64_t> given =
        n.inputs.size() > 1 ? constInts(g_, n.inputs[1]) : std::vector<int64_t>{};
    if (given.empty()) given = n.attrs.getInts("axes").value_or(std::vector<int64_t>{});
    if (given.empty())
      for (size_t a = 0; a < r; ++a) given.push_back(int64_t(a));
    for (int64_t a : given) axes.push_back(norm(a));
  } else if (op == "ArgMax" || op == "ArgMin" || op == "Concat" || op == "Split" ||
             op == "Gather" || op == "TopK" || op == "Softmax" || op == "LogSoftmax" ||
             op == "Hardmax")
    axes.push_back(norm(n.attrs.getInt("axis", op == "Softmax" || op == "LogSoftmax" ? -1 : 0)));
  else if (op == "CumSum")
    for (int64_t a : constInts(g_, n.inputs[1])) axes.push_back(norm(a));
  else if (op == "MatMul" && r >= 1)
    axes.push_back(int64_t(r) - 1);
  else if (op == "Gemm")
    axes.push_back(n.attrs.getInt("transA", 0) ? 0 : 1);
  return axes;
}

Status Masker::visit(NodeId id) {
  const Node n = g_.node(id);  // a copy: adding nodes moves the graph's node arena
  if (n.inputs.empty() || !n.inputs[0].valid() || !n.domain.empty()) return Status::ok();
  const ValueId x = n.inputs[0];
  int dimAxes = 0, derived = 0;
  for (int64_t a : axesOf(n, rank(x))) {
    dimAxes += kind(x, a) == Axis::Dim;
    derived += kind(x, a) == Axis::Derived;
  }
  if (derived) return refuse(n, "reads across an axis derived from it (such as seq*heads)");
  if (dimAxes == 0) return Status::ok();
  if (dimAxes > 1) return refuse(n, "reads across two axes");
  if (n.op == "Softmax" || n.op == "LogSoftmax") return maskSoftmax(n);
  if (n.op == "ReduceSum" || n.op == "ReduceMean") return maskReduce(n);
  if (n.op == "MatMul") return maskMatMul(n);
  if (n.op == "Conv" || n.op == "MaxPool" || n.op == "AveragePool") return maskWindow(n);
  if (n.op == "LayerNormalization") return maskLayerNorm(n);
  return refuse(n, "reads across positions");
}

Status Masker::maskSoftmax(const Node& n) {
  const ValueId x = n.inputs[0];
  const int64_t axis = axesOf(n, rank(x))[0];
  const ValueId out = n.outputs[0];
  g_.setInput(n.id, 0, node("Add", {x, like(along(bias(), axis, rank(x)), x)}));
  maskedSoftmax_.insert(out.index);
  ++masks_;
  return Status::ok();
}

// A window sliding along `dim` with stride 1 and the output as long as the
// input (same padding): padded positions must read as the op's own padding,
// zero for Conv and AveragePool counting pads, -inf (the masked logit) for MaxPool.
Status Masker::maskWindow(const Node& n) {
  const ValueId x = n.inputs[0];
  int64_t axis = 0;
  for (int64_t a : axesOf(n, rank(x)))
    if (kind(x, a) == Axis::Dim) axis = a;
  if (kind(n.outputs[0], axis) != Axis::Dim)
    return refuse(n, "strides or pads so its output is not as long as its input");
  const int64_t kernel =
      n.op == "Conv"
          ? extents_[n.inputs[1].index][axis]
          : n.attrs.getInts("kernel_shape").value_or(std::vector<int64_t>(rank(x), 1))[axis - 2];
  if (kernel == 1) return Status::ok();  // reads one position: nothing to mask
  if (n.op == "AveragePool" && n.attrs.getInt("count_include_pad", 0) == 0)
    return maskAveragePoolExcludingPads(n, axis);
  const ValueId masked = n.op == "MaxPool" ? node("Add", {x, like(along(bias(), axis, rank(x)), x)})
                                           : node("Mul", {x, like(along(keep_, axis, rank(x)), x)});
  g_.setInput(n.id, 0, masked);
  ++masks_;
  return Status::ok();
}

// count_include_pad=0: each window averages the positions that are in the
// input, so the bucket's padded tail must not count either. Both pools below
// count pads, so their divisors cancel: pool(x*keep) / pool(keep) is the sum
// over valid positions over their number. keep is spread over the other
// spatial axes (times ones of their extents, static here) so their borders
// count as the op counts them, whatever x holds at padded positions. A window
// wholly in the padding gives 0/0: the floor on the divisor makes it 0
// instead of a NaN that a later mask (NaN*0) would let through.
Status Masker::maskAveragePoolExcludingPads(const Node& n, int64_t axis) {
  const ValueId x = n.inputs[0];
  std::vector<int64_t> spread(rank(x), 1);
  for (size_t a = 2; a < rank(x); ++a)
    if (int64_t(a) != axis) spread[a] = extents_[x.index][a];
  const ValueId keep = node("Mul", {like(along(keep_, axis, rank(x)), x), like(ones(spread), x)});
  Attributes attrs = n.attrs;
  attrs.set("count_include_pad", Attribute(int64_t(1)));
  const ValueId sum = node("AveragePool", {node("Mul", {x, keep})}, attrs);
  const ValueId count = node("Max", {node("AveragePool", {keep}, attrs), like(scalar(1e-6f), x)});
  replaceResult(n, node("Div", {sum, count}));
  ++masks_;
  return Status::ok();
}

// LayerNormalization over axes that include `dim`: the statistics of the
// valid positions only, then the op's own affine map.
//   mean = sum(x*keep) / count        d = (x - mean) * keep
//   var  = sum(d*d) / count           y = d / sqrt(var + epsilon) * scale + bias
// count is sum(keep) times the other normalized extents. Padded positions
// come out as `bias`, which the slice back drops.
Status Masker::maskLayerNorm(const Node& n) {
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (n.outputs[i].valid() && !g_.value(n.outputs[i]).users.empty())
      return refuse(n, "returns its Mean or InvStdDev, which the masked form does not compute,");
  for (ValueId out : g_.outputs())
    for (size_t i = 1; i < n.outputs.size(); ++i)
      if (out == n.outputs[i])
        return refuse(n, "returns its Mean or InvStdDev, which the masked form does not compute,");
  const ValueId x = n.inputs[0];
  const std::vector<int64_t> axes = axesOf(n, rank(x));
  int64_t dimAxis = 0;
  for (int64_t a : axes)
    if (kind(x, a) == Axis::Dim) dimAxis = a;
  const ValueId keep = like(along(keep_, dimAxis, rank(x)), x);
  const ValueId count = validCount(x, axes);
  Attributes keepdims;
  keepdims.set("keepdims", Attribute(int64_t(1)));
  auto meanOf = [&](ValueId t) {
    return node("Div", {node("ReduceSum", {t, ints(axes)}, keepdims), count});
  };
  const ValueId mean = meanOf(node("Mul", {x, keep}));
  const ValueId d = node("Mul", {node("Sub", {x, mean}), keep});
  const ValueId var = meanOf(node("Mul", {d, d}));
  const float eps = float(n.attrs.getFloat("epsilon", 1e-5));
  const ValueId root = node("Sqrt", {node("Add", {var, like(scalar(eps), x)})});
  ValueId y = node("Mul", {node("Div", {d, root}), n.inputs[1]});
  if (n.inputs.size() > 2 && n.inputs[2].valid()) y = node("Add", {y, n.inputs[2]});
  replaceResult(n, y);
  ++masks_;
  return Status::ok();
}

Status Masker::maskMatMul(const Node& n) {
  if (maskedSoftmax_.count(n.inputs[0].index)) return Status::ok();  // already zero there
  // keep runs along the last axis
  g_.setInput(n.id, 0, node("Mul", {n.inputs[0], like(keep_, n.inputs[0])}));
  ++masks_;
  return Status::ok();
}

Status Masker::maskReduce(const Node& n) {
  const ValueId x = n.inputs[0];
  const std::vector<int64_t> axes = axesOf(n, rank(x));
  int64_t dimAxis = 0, others = 1;
  for (int64_t a : axes)
    if (kind(x, a) == Axis::Dim)
      dimAxis = a;
    else
      others *= extents_[x.index][a];
  const ValueId masked = node("Mul", {x, like(along(keep_, dimAxis, rank(x)), x)});
  ++masks_;
  if (n.op == "ReduceSum") {
    g_.setInput(n.id, 0, masked);
    return Status::ok();
  }
  // The mean over valid positions: the masked sum over their count.
  Attributes keepdims;
  keepdims.set("keepdims", Attribute(n.attrs.getInt("keepdims", 1)));
  const ValueId sum = node("ReduceSum", {masked, ints(axes)}, keepdims);
  Attributes scalarSum;
  scalarSum.set("keepdims", Attribute(int64_t(0)));
  ValueId count = node("ReduceSum", {keep_}, scalarSum);
  if (others != 1) count = node("Mul", {count, scalar(float(others))});
  const ValueId mean = node("Div", {sum, like(count, x)});
  const ValueId old = n.outputs[0];
  const std::string name = g_.value(old).name;
  g_.replaceAllUses(old, mean);
  g_.removeNode(n.id);
  g_.mutableValue(mean).name = name;  // graph outputs keep their names
  return Status::ok();
}

Status Masker::checkOutput(ValueId v) const {
  for (size_t a = 0; a < rank(v); ++a)
    if (kind(v, int64_t(a)) == Axis::Derived)
      return Status::error("the output has an axis derived from '" + dim_ +
                               "' (such as seq*heads), which cannot be sliced back to the "
                               "valid length; compile this model per shape (no buckets)",
                           "output '" + g_.value(v).name + "'");
  return Status::ok();
}

}  // namespace

std::string padMaskInputName(const std::string& dim) { return dim + "_keep"; }

TensorData padMaskKeep(int64_t valid, int64_t size) {
  TensorData t(DType::F32, {size});
  for (int64_t i = 0; i < size; ++i) t.data<float>()[i] = i < valid ? 1.0f : 0.0f;
  return t;
}

PassResult PadMaskPass::run(Graph& g, PassContext& ctx) {
  if (g.findValue(padMaskInputName(dim_))) return PassResult::unchanged();  // masked already
  auto a = probe(g, dim_, kProbes[0]);
  if (!a) return PassResult::failed(a.status());
  auto b = probe(g, dim_, kProbes[1]);
  if (!b) return PassResult::failed(b.status());
  std::vector<std::vector<Axis>> kinds(g.valueCapacity());
  std::vector<std::vector<int64_t>> extents(g.valueCapacity());
  bool seen = false;
  for (ValueId v : g.valueIds()) {
    if (!a->hasValue(v) || !b->hasValue(v)) continue;
    const TensorType &ta = a->value(v).type, &tb = b->value(v).type;
    if (!ta.rankKnown || !tb.rankKnown || ta.rank() != tb.rank()) continue;
    for (size_t i = 0; i < ta.rank(); ++i) {
      const int64_t ea = ta.shape[i].value, eb = tb.shape[i].value;
      Axis k = ea == kProbes[0] && eb == kProbes[1] ? Axis::Dim
               : ea != eb || ea < 0                 ? Axis::Derived
                                                    : Axis::Other;
      seen = seen || k == Axis::Dim;
      kinds[v.index].push_back(k);
      extents[v.index].push_back(ea);
    }
  }
  if (!seen) {  // nothing will be padded: the graph stays as it is
    PassResult r;
    r.diagnostics.push_back(
        {Severity::Note, "pass pad-mask",
         "the graph has no axis of the symbolic dim '" + dim_ + "': nothing to mask"});
    return r;
  }
  Masker masker(g, dim_, std::move(kinds), std::move(extents));
  for (ValueId v : g.outputs())
    if (Status s = masker.checkOutput(v); !s) return PassResult::failed(s);
  masker.addKeep();
  const std::vector<NodeId> order = g.topoOrder().value();  // verified acyclic
  for (NodeId n : order) {
    if (ctx.cancel.cancelled()) return PassResult::failed(Status::error("cancelled", "pad-mask"));
    if (Status s = masker.visit(n); !s) return PassResult::failed(s);
  }
  if (Status s = inferGraphTypes(g); !s) return PassResult::failed(s);
  PassResult r;
  r.changed = true;
  r.stats["masks inserted"] = masker.masks();
  return r;
}

}  // namespace fuselens
