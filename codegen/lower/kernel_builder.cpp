// The shared machinery of lowering: element positions (Index), the op table
// that says how each op is lowered, and KernelBuilder::valueAt, which is where
// producers get inlined into their consumers.
#include <cassert>
#include <cmath>
#include <cstring>
#include <string_view>

#include "codegen/lower/compute.h"
#include "codegen/lower/compute_data.h"
#include "codegen/lower/compute_norm.h"
#include "codegen/lower/compute_rnn.h"
#include "codegen/lower/compute_scan.h"
#include "codegen/lower/compute_scatter.h"
#include "codegen/lower/compute_table.h"

namespace fuselens {

Index Index::ofDims(std::vector<int64_t> shape, std::vector<ExprRef> dims) {
  assert(shape.size() == dims.size() && "one index per dim");
  Index i;
  i.shape = std::move(shape);
  i.dims = std::move(dims);
  return i;
}

Index Index::ofFlat(std::vector<int64_t> shape, ExprRef flat) {
  Index i;
  i.shape = std::move(shape);
  i.flat = std::move(flat);
  return i;
}

std::vector<ExprRef> Index::dimExprs() const {
  if (dims) return *dims;
  std::vector<ExprRef> out(shape.size());
  int64_t stride = 1;
  for (size_t k = shape.size(); k-- > 0;) {
    if (shape[k] == 1) {
      out[k] = intConst(0);
      continue;
    }
    ExprRef q = binary(BinOp::Div, flat, intConst(stride));
    // The outermost dim needs no modulo: flat < numel.
    out[k] = k == 0 ? q : binary(BinOp::Mod, q, intConst(shape[k]));
    stride *= shape[k];
  }
  return out;
}

ExprRef Index::flatExpr() const {
  if (flat) return flat;
  ExprRef sum = intConst(0);
  int64_t stride = 1;
  std::vector<ExprRef> terms(shape.size());
  for (size_t k = shape.size(); k-- > 0;) {
    terms[k] = mul((*dims)[k], intConst(stride));
    stride *= shape[k];
  }
  for (const ExprRef& t : terms) sum = add(sum, t);
  return sum;
}

ComputeClass computeClassOf(const Node& n) {
  if (isBatchNormTraining(n))
    return ComputeClass::Reduction;  // it also reduces the batch statistics
  const OpInfo* info = OpRegistry::instance().find(n.domain, n.op);
  return info ? info->compute : ComputeClass::Unsupported;
}

std::string nodePlace(const Node& n) {
  std::string name = n.name.empty() ? "#" + std::to_string(n.id.index) : n.name;
  return "node '" + name + "' (" + n.op + ")";
}

std::vector<int64_t> KernelBuilder::shapeOf(ValueId v) const {
  auto s = body_.value(v).type.staticShape();
  assert(s && "lowering checks static shapes before building");
  return *s;
}

namespace {

// f16 or bf16 bits -> f32, exactly (a plain conversion of codegen's own; the
// eager reference has its own).
float widenHalf(uint16_t h, DType t) {
  uint32_t bits = 0;
  if (t == DType::BF16) {
    bits = uint32_t(h) << 16;
  } else {
    const uint32_t sign = uint32_t(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    if (exp == 0x1f) {
      bits = sign | 0x7f800000u | (man << 13);  // inf, NaN
    } else if (exp != 0) {
      bits = sign | ((exp + 112) << 23) | (man << 13);
    } else {
      float f = std::ldexp(float(man), -24);  // zero or subnormal: exact in f32
      return sign ? -f : f;
    }
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

}  // namespace

std::shared_ptr<const TensorData> KernelBuilder::constantOf(ValueId v) const {
  const Value& val = body_.value(v);
  if (val.constant) return val.constant;
  if (auto it = outerConstants_.find(v.index); it != outerConstants_.end()) return it->second;
  // reduce-precision stores weights in f16/bf16 and widens them with a Cast at
  // the kernel's entry: widened, they are a constant still (exactly), so MatMul
  // packs them and Resize reads them at compile time as before.
  if (!val.producer.valid() || val.type.dtype != DType::F32) return nullptr;
  const Node& p = body_.node(val.producer);
  if (p.op != "Cast" || !p.domain.empty() || p.inputs.size() != 1) return nullptr;
  if (auto it = widened_.find(v.index); it != widened_.end()) return it->second;
  auto src = constantOf(p.inputs[0]);
  if (!src || (src->dtype != DType::F16 && src->dtype != DType::BF16)) return nullptr;
  auto wide = std::make_shared<TensorData>(DType::F32, src->shape);
  for (int64_t i = 0; i < src->numel(); ++i)
    wide->data<float>()[i] = widenHalf(src->data<uint16_t>()[i], src->dtype);
  widened_[v.index] = wide;
  return wide;
}

BufferId KernelBuilder::addPrepacked(const std::string& name,
                                     std::shared_ptr<const TensorData> data) {
  BufferId b = fn_.addBuffer(name, BufferKind::Input, data->dtype, data->shape);
  fn_.params.insert(fn_.params.begin() + std::ptrdiff_t(fn_.numInputs), b);
  ++fn_.numInputs;
  fn_.prepacked[b.index] = std::move(data);
  return b;
}

Var KernelBuilder::newLocal(const std::string& prefix, DType t) {
  int n = localCounts_[prefix]++;
  return fn_.addVar(prefix + std::to_string(n), t);
}

// A one-element constant as a literal of its compute type (f16 rounded already).
static ExprRef scalarLiteral(const TensorData& c) {
  DType ct = computeType(c.dtype);
  if (ct == DType::F32 || ct == DType::F64) return floatConst(c.at(0), ct);
  if (ct == DType::Bool) return boolConst(c.at(0) != 0);
  int64_t v = 0;
  switch (c.dtype) {
    case DType::I8:
      v = c.data<int8_t>()[0];
      break;
    case DType::U8:
      v = c.data<uint8_t>()[0];
      break;
    case DType::I16:
      v = c.data<int16_t>()[0];
      break;
    case DType::I32:
      v = c.data<int32_t>()[0];
      break;
    default:
      v = c.data<int64_t>()[0];
      break;
  }
  return intConst(v);
}

// Values are seen in their compute type (loop_ir.h): loads are widened, and an
// inlined op's result is rounded to its dtype as eager's per-op store would.
ExprRef KernelBuilder::valueAt(ValueId v, const Index& idx) {
  const Value& val = body_.value(v);
  if (subst_ && subst_->first == v) return roundTrip(subst_->second, val.type.dtype);
  // A one-element constant is a literal, whatever its rank (also when the kernel
  // receives it as an input bound to a constant of the outer graph).
  if (auto c = constantOf(v); c && c->numel() == 1) return scalarLiteral(*c);
  if (auto it = bound_.find(v.index); it != bound_.end()) {
    const Buffer& b = fn_.buffer(it->second);
    return cast(load(b, idx.flatExpr()), computeType(b.dtype));
  }
  if (!val.producer.valid()) {
    fail(Status::error("internal: value '" + val.name + "' has no buffer in this kernel"));
    return floatConst(0);
  }
  auto key = std::make_pair(v.index, idx.flat ? std::vector<ExprRef>{idx.flat} : *idx.dims);
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  ExprRef e = roundTrip(inlineProducer(body_.node(val.producer), v, idx), val.type.dtype);
  memo_.emplace(std::move(key), e);
  return e;
}

ExprRef KernelBuilder::inlineProducer(const Node& p, ValueId v, const Index& idx) {
  switch (computeClassOf(p)) {
    case ComputeClass::Elementwise: {
      std::vector<ExprRef> args;
      for (size_t i = 0; i < p.inputs.size();
           ++i)  // an omitted optional input (Clip's min) stays null
        args.push_back(p.inputs[i].valid()
                           ? valueAt(p.inputs[i], elementwiseOperandIndex(*this, p, i, idx))
                           : nullptr);
      size_t k = 0;
      while (k + 1 < p.outputs.size() && p.outputs[k] != v) ++k;
      return elementwiseExpr(*this, p, args, k);
    }
    case ComputeClass::IndexMap:
      return valueAt(p.inputs[0], indexMapSource(*this, p, idx));
    case ComputeClass::Injective:
      if (const InjectiveRow* row = injectiveRow(p)) {
        size_t k = 0;
        while (k + 1 < p.outputs.size() && p.outputs[k] != v) ++k;
        return row->value(*this, p, k, idx);
      }
      fail(Status::error("internal: no value function in the dispatch table", nodePlace(p)));
      return floatConst(0);
    default:
      fail(Status::error("internal: the result is read before it is materialized", nodePlace(p)));
      return floatConst(0);
  }
}

std::vector<StmtRef> KernelBuilder::loopNest(
    const std::vector<int64_t>& shape,
    const std::function<std::vector<StmtRef>(const Index&)>& inner,
    const std::vector<size_t>& order) {
  std::vector<ExprRef> dims(shape.size(), intConst(0));
  std::vector<std::pair<Var, int64_t>> loops;
  for (size_t j = 0; j < shape.size(); ++j) {
    size_t k = order.empty() ? j : order[j];
    if (shape[k] == 1) continue;
    Var v = newLoopVar();
    dims[k] = varRef(v);
    loops.emplace_back(v, shape[k]);
  }
  std::vector<StmtRef> body = inner(Index::ofDims(shape, dims));
  for (size_t k = loops.size(); k-- > 0;) body = {forLoop(loops[k].first, loops[k].second, body)};
  return body;
}

std::optional<int64_t> rowOpAxis(KernelBuilder& kb, const Node& n) {
  const std::vector<int64_t> shape = kb.shapeOf(n.inputs[0]);
  const int64_t rank = int64_t(shape.size());
  int64_t axis = n.attrs.getInt("axis", -1);
  if (axis < -rank || axis >= rank) {
    kb.fail(Status::error(
        "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank),
        nodePlace(n)));
    return std::nullopt;
  }
  if (kb.shapeOf(n.outputs[0]) != shape) {
    kb.fail(Status::error("output shape differs from the input shape", nodePlace(n)));
    return std::nullopt;
  }
  return axis < 0 ? axis + rank : axis;
}

}  // namespace fuselens
