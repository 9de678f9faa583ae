// Compute definitions of the data-movement ops that are selects over reads:
// Gather, GatherElements, GatherND (a gathered index is a load of the indices
// operand, normalized when negative and clamped so a bad index never reads out
// of bounds), Split (each output a view at an offset), Tile, Expand,
// DepthToSpace (DCR and CRD), SpaceToDepth, OneHot, Size and Shape. Resize lives in
// compute_resize.cpp. Shapes are checked here before lowering, so the index
// maps below can trust them.
#include "codegen/lower/compute_data.h"

#include <algorithm>

#include "codegen/lower/compute_norm.h"
#include "codegen/lower/compute_rnn.h"
#include "codegen/lower/compute_scan.h"
#include "codegen/lower/compute_scatter.h"

namespace fuselens {
namespace {

ExprRef clampTo(ExprRef i, int64_t len) {
  return binary(BinOp::Max, intConst(0), binary(BinOp::Min, std::move(i), intConst(len - 1)));
}

// A gathered index: negative counts from the end; clamped into [0, len).
ExprRef normalized(ExprRef i, int64_t len) {
  if (i->kind == ExprKind::IntConst) {
    int64_t k = i->i < 0 ? i->i + len : i->i;
    return intConst(std::clamp<int64_t>(k, 0, len - 1));
  }
  ExprRef wrapped = select(compare(CmpOp::LT, i, intConst(0)), add(i, intConst(len)), i);
  return clampTo(wrapped, len);
}

int64_t axisAttr(const Node& n, int64_t rank, int64_t dflt = 0) {
  int64_t a = n.attrs.getInt("axis", dflt);
  return a < 0 ? a + rank : a;
}

std::vector<int64_t> shapeIn(const Graph& g, ValueId v) { return *g.value(v).type.staticShape(); }

// The output shape each op must have, from its operands; nullopt when the
// operands themselves are malformed (the message says why).
Expected<std::vector<int64_t>> expectedShape(const Graph& g, const Node& n, size_t output) {
  std::vector<int64_t> d = shapeIn(g, n.inputs[0]);
  int64_t r = int64_t(d.size());
  auto bad = [&](const std::string& why) { return Status::error(why, nodePlace(n)); };
  if (n.op == "Gather" || n.op == "GatherElements" || n.op == "GatherND") {
    if (n.inputs.size() != 2 || !n.inputs[1].valid()) return bad("needs data and indices inputs");
    std::vector<int64_t> q = shapeIn(g, n.inputs[1]);
    if (n.op == "GatherElements") {
      int64_t a = axisAttr(n, r);
      if (a < 0 || a >= r || q.size() != d.size()) return bad("indices must have the data's rank");
      return q;
    }
    if (n.op == "Gather") {
      int64_t a = axisAttr(n, r);
      if (a < 0 || a >= r) return bad("axis is out of range for rank " + std::to_string(r));
      std::vector<int64_t> out(d.begin(), d.begin() + a);
      out.insert(out.end(), q.begin(), q.end());
      out.insert(out.end(), d.begin() + a + 1, d.end());
      return out;
    }
    int64_t b = n.attrs.getInt("batch_dims", 0);
    if (q.empty() || b < 0 || b >= int64_t(q.size()) || b + q.back() > r)
      return bad("indices of shape " + formatShape(q) + " do not fit data of shape " +
                 formatShape(d) + " with batch_dims " + std::to_string(b));
    std::vector<int64_t> out(q.begin(), q.end() - 1);
    out.insert(out.end(), d.begin() + b + q.back(), d.end());
    return out;
  }
  if (n.op == "DepthToSpace" || n.op == "SpaceToDepth") {
    int64_t bs = n.attrs.getInt("blocksize", 0);
    if (r != 4 || bs <= 0) return bad("needs a 4-D input and a positive blocksize");
    if (n.op == "DepthToSpace") {
      if (d[1] % (bs * bs)) return bad("channels are not a multiple of blocksize squared");
      return std::vector<int64_t>{d[0], d[1] / (bs * bs), d[2] * bs, d[3] * bs};
    }
    if (d[2] % bs || d[3] % bs) return bad("height and width are not multiples of blocksize");
    return std::vector<int64_t>{d[0], d[1] * bs * bs, d[2] / bs, d[3] / bs};
  }
  if (n.op == "Size") return std::vector<int64_t>{};
  // Split, Tile, Expand, Shape, Resize: the output shapes from inference, whose
  // reads check themselves against the input shape.
  return shapeIn(g, n.outputs[output]);
}

Status checkDtypes(const Graph& g, const Node& n) {
  auto isData = [](DType t) { return dtypeSize(t) > 0; };  // moved, never computed on
  DType data = g.value(n.inputs[0]).type.dtype;
  if (n.op != "Size" && n.op != "Shape" && !isData(data))
    return Status::error("data of type " + std::string(dtypeName(data)) +
                             " has no code generation here (f32, i32, i64 and bool do)",
                         nodePlace(n));
  if (n.op == "Gather" || n.op == "GatherElements" || n.op == "GatherND") {
    DType t = g.value(n.inputs[1]).type.dtype;
    if (t != DType::I64 && t != DType::I32)
      return Status::error("indices of type " + std::string(dtypeName(t)) +
                               " have no code generation (i32 and i64 do)",
                           nodePlace(n));
  }
  if (n.op == "Resize" && data != DType::F32 && n.attrs.getString("mode", "nearest") != "nearest")
    return Status::error("linear and cubic Resize have code generation for f32 data only",
                         nodePlace(n));
  return Status::ok();
}

}  // namespace

bool isDataMovementOp(const std::string& op) {
  static const char* const kOps[] = {"Gather", "GatherElements", "GatherND",       "Split",  "Tile",
                                     "Expand", "DepthToSpace",   "SpaceToDepth",   "Resize", "Size",
                                     "Shape",  "OneHot",         "ConstantOfShape"};
  return std::find(std::begin(kOps), std::end(kOps), op) != std::end(kOps);
}

Status checkDataMovement(const Graph& body, const Node& n) {
  if (n.inputs.empty() || !n.inputs[0].valid())
    return Status::error("the data input is missing", nodePlace(n));
  for (ValueId v : n.inputs)
    if (v.valid() && (!body.value(v).type.rankKnown || !body.value(v).type.isStatic()))
      return Status::error("value '" + body.value(v).name + "' has the dynamic shape " +
                               body.value(v).type.str() +
                               "; code generation needs static shapes for now",
                           nodePlace(n));
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    const Value& o = body.value(n.outputs[k]);
    if (!o.type.rankKnown || !o.type.isStatic())
      return Status::error("value '" + o.name + "' has the dynamic shape " + o.type.str() +
                               "; code generation needs static shapes for now",
                           nodePlace(n));
    auto want = expectedShape(body, n, k);
    if (!want) return want.status();
    if (*want != *o.type.staticShape())
      return Status::error("output '" + o.name + "' has shape " +
                               formatShape(*o.type.staticShape()) + ", expected " +
                               formatShape(*want),
                           nodePlace(n));
  }
  if (n.outputs.size() != 1 && n.op != "Split")
    return Status::error(n.op + " must have one output", nodePlace(n));
  return checkDtypes(body, n);
}

bool isIntegerMatMul(const Graph& body, const Node& n) {
  if (n.op != "MatMul" || n.inputs.size() != 2 || !n.inputs[0].valid()) return false;
  DType t = body.value(n.inputs[0]).type.dtype;
  return t == DType::I64 || t == DType::I32;
}

bool checksOwnOperands(const Graph& body, const Node& n) {
  if (isIntegerMatMul(body, n)) return true;
  const std::string& op = n.op;
  return isDataMovementOp(op) || isScanOp(op) || isNormOp(op) || op == "BatchNormalization" ||
         op == "ConvTranspose" || op == "Einsum" || isScatterOp(op) || isRecurrentOp(op);
}

// Static f32 operands (omitted optional ones aside) and one output.
Status checkF32Operands(const Graph& body, const Node& n, size_t minInputs) {
  if (n.inputs.size() < minInputs || n.outputs.size() != 1)
    return Status::error(n.op + " needs " + std::to_string(minInputs) + " inputs and one output",
                         nodePlace(n));
  std::vector<ValueId> vs = n.inputs;
  vs.push_back(n.outputs[0]);
  for (size_t i = 0; i < vs.size(); ++i) {
    if (!vs[i].valid()) {
      if (i < minInputs)
        return Status::error("input " + std::to_string(i) + " is missing", nodePlace(n));
      continue;
    }
    const Value& v = body.value(vs[i]);
    if (!v.type.rankKnown || !v.type.isStatic() || v.type.dtype != DType::F32)
      return Status::error("value '" + v.name + "' is " + v.type.str() +
                               "; code generation needs static f32 tensors for this op",
                           nodePlace(n));
  }
  return Status::ok();
}

Status checkOwnOperands(const Graph& body, const Node& n) {
  if (isIntegerMatMul(body, n)) {
    for (ValueId v : {n.inputs[0], n.inputs[1], n.outputs[0]}) {
      const Value& val = body.value(v);
      if (!v.valid() || !val.type.rankKnown || !val.type.isStatic() ||
          val.type.dtype != body.value(n.inputs[0]).type.dtype || val.type.rank() == 0)
        return Status::error("integer MatMul needs static operands of one integer type",
                             nodePlace(n));
    }
    return Status::ok();
  }
  if (n.op == "ConvTranspose") return checkF32Operands(body, n, 2);
  if (n.op == "Einsum") return checkF32Operands(body, n, 1);
  if (isScanOp(n.op)) return checkScanOp(body, n);
  if (isScatterOp(n.op)) return checkScatterOp(body, n);
  if (isRecurrentOp(n.op)) return checkRecurrentOp(body, n);
  if (isNormOp(n.op) || n.op == "BatchNormalization") return checkNormOp(body, n);
  return checkDataMovement(body, n);
}

std::optional<std::vector<int64_t>> constInts(KernelBuilder& kb, const Node& n, size_t i) {
  if (i >= n.inputs.size() || !n.inputs[i].valid()) return std::nullopt;
  auto c = kb.constantOf(n.inputs[i]);
  if (!c || (c->dtype != DType::I64 && c->dtype != DType::I32)) return std::nullopt;
  std::vector<int64_t> v;
  for (int64_t k = 0; k < c->numel(); ++k) v.push_back(int64_t(c->at(k)));
  return v;
}

ExprRef indexValueAt(KernelBuilder& kb, ValueId v, const Index& idx) {
  auto c = kb.constantOf(v);
  if (c && c->numel() == 1) return intConst(int64_t(c->at(0)));
  if (c && !kb.isBound(v))
    kb.bindBuffer(v, kb.addPrepacked("idx" + std::to_string(kb.func().buffers.size()), c));
  ExprRef e = kb.valueAt(v, idx);
  if (e->type != DType::I64) {
    kb.fail(Status::error("internal: an index operand is not i64"));
    return intConst(0);
  }
  return e;
}

ExprRef dataMovementValue(KernelBuilder& kb, const Node& n, size_t output, const Index& out) {
  if (n.op == "Resize") return resizeValue(kb, n, out);
  if (n.op == "ConstantOfShape") {  // the shape operand fixed the output type; fill with `value`
    auto v = n.attrs.getTensor("value");
    if (!v || v->numel() != 1) return floatConst(0);  // ONNX's default: f32 zero
    DType t = computeType(v->dtype);
    if (t == DType::Bool) return boolConst(v->at(0) != 0);
    if (v->dtype == DType::I64) return intConst(v->data<int64_t>()[0]);  // exact past 2^53
    if (t == DType::I64) return intConst(int64_t(v->at(0)));
    return floatConst(v->at(0), t);
  }
  std::vector<int64_t> d = kb.shapeOf(n.inputs[0]);
  int64_t r = int64_t(d.size());
  if (n.op == "Size") {
    int64_t k = 1;
    for (int64_t x : d) k *= x;
    return intConst(k);
  }
  std::vector<ExprRef> od = out.dimExprs();
  auto read = [&](std::vector<ExprRef> dims) {
    return kb.valueAt(n.inputs[0], Index::ofDims(d, std::move(dims)));
  };
  if (n.op == "Shape") {
    int64_t start = n.attrs.getInt("start", 0);
    if (start < 0) start = std::max<int64_t>(0, start + r);
    int64_t len = out.shape.empty() ? 0 : out.shape[0];
    if (len == 0) return intConst(0);
    ExprRef v = intConst(d[size_t(std::min(start + len - 1, r - 1))]);
    for (int64_t i = len - 1; i-- > 0;)
      v = select(compare(CmpOp::EQ, od[0], intConst(i)), intConst(d[size_t(start + i)]), v);
    return v;
  }
  if (n.op == "Expand") return kb.valueAt(n.inputs[0], broadcastIndex(out, d));
  if (n.op == "OneHot") {  // values[1] where the (wrapped) index equals the position on axis
    int64_t a = n.attrs.getInt("axis", -1), rank = int64_t(out.shape.size());
    if (a < 0) a += rank;
    int64_t depth = out.shape[size_t(a)];
    std::vector<ExprRef> id = od;
    id.erase(id.begin() + a);
    ExprRef i = kb.valueAt(n.inputs[0], Index::ofDims(d, id));
    if (i->type != DType::I64) i = cast(i, DType::I64);
    i = select(compare(CmpOp::LT, i, intConst(0)), add(i, intConst(depth)), i);
    std::vector<int64_t> vs = kb.shapeOf(n.inputs[2]);
    return select(compare(CmpOp::EQ, i, od[size_t(a)]),
                  kb.valueAt(n.inputs[2], Index::ofFlat(vs, intConst(1))),
                  kb.valueAt(n.inputs[2], Index::ofFlat(vs, intConst(0))));
  }
  if (n.op == "Tile") {
    for (size_t k = 0; k < d.size(); ++k)
      if (out.shape[k] != d[k]) od[k] = binary(BinOp::Mod, od[k], intConst(d[k]));
    return read(od);
  }
  if (n.op == "Split") {
    int64_t a = axisAttr(n, r), offset = 0;
    for (size_t k = 0; k < output; ++k) offset += kb.shapeOf(n.outputs[k])[size_t(a)];
    od[size_t(a)] = add(od[size_t(a)], intConst(offset));
    return read(od);
  }
  if (n.op == "Gather") {
    int64_t a = axisAttr(n, r);
    std::vector<int64_t> q = kb.shapeOf(n.inputs[1]);
    std::vector<ExprRef> qd(od.begin() + a, od.begin() + a + int64_t(q.size()));
    ExprRef i = normalized(indexValueAt(kb, n.inputs[1], Index::ofDims(q, qd)), d[size_t(a)]);
    std::vector<ExprRef> dims(od.begin(), od.begin() + a);
    dims.push_back(i);
    dims.insert(dims.end(), od.begin() + a + int64_t(q.size()), od.end());
    return read(dims);
  }
  if (n.op == "GatherElements") {
    int64_t a = axisAttr(n, r);
    ExprRef i = normalized(indexValueAt(kb, n.inputs[1], out), d[size_t(a)]);
    od[size_t(a)] = i;
    return read(od);
  }
  if (n.op == "GatherND") {
    std::vector<int64_t> q = kb.shapeOf(n.inputs[1]);
    int64_t b = n.attrs.getInt("batch_dims", 0), k = q.back(), lead = int64_t(q.size()) - 1;
    std::vector<ExprRef> dims(od.begin(), od.begin() + b);
    std::vector<ExprRef> qd(od.begin(), od.begin() + lead);
    qd.push_back(nullptr);
    for (int64_t j = 0; j < k; ++j) {
      qd.back() = intConst(j);
      dims.push_back(
          normalized(indexValueAt(kb, n.inputs[1], Index::ofDims(q, qd)), d[size_t(b + j)]));
    }
    dims.insert(dims.end(), od.begin() + lead, od.end());
    return read(dims);
  }
  int64_t bs = n.attrs.getInt("blocksize", 1);
  if (n.op == "DepthToSpace") {
    // Output (n, c, h*bs + bh, w*bs + bw) reads input channel DCR (bh*bs + bw)*C' + c
    // or CRD c*bs*bs + bh*bs + bw, at (h, w).
    int64_t cOut = d[1] / (bs * bs);
    ExprRef bh = binary(BinOp::Mod, od[2], intConst(bs)),
            bw = binary(BinOp::Mod, od[3], intConst(bs));
    ExprRef blk = add(mul(bh, intConst(bs)), bw);
    ExprRef ch = n.attrs.getString("mode", "DCR") == "CRD" ? add(mul(od[1], intConst(bs * bs)), blk)
                                                           : add(mul(blk, intConst(cOut)), od[1]);
    return read({od[0], ch, div(od[2], intConst(bs)), div(od[3], intConst(bs))});
  }
  // SpaceToDepth: output channel (bh*bs + bw)*C + c reads (c, h*bs + bh, w*bs + bw).
  ExprRef c = binary(BinOp::Mod, od[1], intConst(d[1])), blk = div(od[1], intConst(d[1]));
  ExprRef bh = div(blk, intConst(bs)), bw = binary(BinOp::Mod, blk, intConst(bs));
  return read({od[0], c, add(mul(od[2], intConst(bs)), bh), add(mul(od[3], intConst(bs)), bw)});
}

}  // namespace fuselens
