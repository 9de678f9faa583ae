// Shape ops: Reshape (target shape from a constant input, with 0 = copy the
// input dim unless allowzero, and one -1 inferred) and Transpose (perm,
// reversed by default). Both are Injective; their kernels move bytes, so they
// work for every dtype. Inference keeps symbolic dims where it can, e.g.
// Reshape([batch,4,16], [0,-1]) -> [batch,64].
#include <algorithm>
#include <cstring>

#include "core/ir/dim_expr.h"
#include "core/ops/op_util.h"

namespace fuselens::ops {
namespace {

using Outputs = Expected<std::vector<TensorData>>;
using Types = Expected<std::vector<TensorType>>;

// Static element count and sorted symbols of a shape; `unknown` when a dim is neither.
struct DimProduct {
  int64_t staticProduct = 1;
  std::vector<std::string> symbols;
  bool unknown = false;
  bool overflow = false;  // a hostile target shape: no tensor has that many elements
};

DimProduct productOf(const std::vector<Dim>& dims, int skip) {
  DimProduct p;
  for (int i = 0; i < int(dims.size()); ++i) {
    if (i == skip) continue;
    if (dims[i].isStatic())
      p.overflow |= __builtin_mul_overflow(p.staticProduct, dims[i].value, &p.staticProduct);
    else if (dims[i].symbol.empty())
      p.unknown = true;
    else
      p.symbols.push_back(dims[i].symbol);
  }
  std::sort(p.symbols.begin(), p.symbols.end());
  return p;
}

// The product of the dims but `skip` as one dim (batch*seq*768).
Dim dimProduct(const std::vector<Dim>& dims, int skip) {
  Dim p = Dim::fixed(1);
  for (int i = 0; i < int(dims.size()); ++i)
    if (i != skip) p = dimMul(p, dims[i]);
  return p;
}

// Resolves Reshape's target against the input dims; used by inference
// (symbolic dims) and the kernel (static dims) alike.
Expected<std::vector<Dim>> reshapeDims(const Node& n, const std::vector<Dim>& in,
                                       const std::vector<int64_t>& target, bool allowzero) {
  std::vector<Dim> out;
  int neg = -1;
  bool hasZero = false;
  for (int i = 0; i < int(target.size()); ++i) {
    int64_t t = target[i];
    if (t == -1) {
      if (neg >= 0) return nodeError(n, "the target shape has more than one -1");
      neg = i;
      out.push_back(Dim::unknown());
    } else if (t == 0 && !allowzero) {
      if (i >= int(in.size()))
        return nodeError(n, "target entry " + std::to_string(i) +
                                " is 0 (copy the input dim) but the input has rank " +
                                std::to_string(in.size()));
      out.push_back(in[i]);
    } else if (t < 0) {
      return nodeError(n, "target shape entry " + std::to_string(t) + " is invalid");
    } else {
      hasZero |= t == 0;
      out.push_back(Dim::fixed(t));
    }
  }
  if (allowzero && hasZero && neg >= 0)
    return nodeError(n, "with allowzero=1 the target shape cannot hold both 0 and -1");
  DimProduct pin = productOf(in, -1), pout = productOf(out, neg);
  if (pin.overflow || pout.overflow)
    return nodeError(n, "the shape " + shapeStr(target) + " is too large");
  bool comparable = !pin.unknown && !pout.unknown && pin.symbols == pout.symbols;
  std::string fail = "cannot reshape " + dimsStr(in) + " into " + shapeStr(target);
  if (comparable && neg >= 0) {
    if (pout.staticProduct == 0 || pin.staticProduct % pout.staticProduct != 0)
      return nodeError(n, fail);
    out[neg] = Dim::fixed(pin.staticProduct / pout.staticProduct);
  } else if (comparable && pin.staticProduct != pout.staticProduct) {
    return nodeError(n, fail + " (the element counts differ)");
  } else if (neg >= 0 && !pin.unknown && !pout.unknown) {
    // Different symbols on the two sides ([batch,seq,768] -> [0,-1,64]): the
    // -1 is numel(in) / numel(rest) when that divides for every value.
    out[neg] = dimDivExact(dimProduct(in, -1), dimProduct(out, neg));
  }
  return out;
}

Expected<std::vector<int64_t>> targetOf(const Node& n, const TensorData& shape) {
  if (shape.dtype != DType::I64 || shape.rank() != 1)
    return nodeError(n, "the shape input must be a 1-D i64 tensor, got " + shape.type().str());
  return std::vector<int64_t>(shape.data<int64_t>(), shape.data<int64_t>() + shape.numel());
}

Types inferReshape(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 2, 2));
  const TensorType& x = c.inputTypes[0];
  TensorType out;
  out.dtype = x.dtype;
  bool allowzero = c.node.attrs.getInt("allowzero", 0) != 0;
  if (const TensorData* shape = c.constInputs[1]) {
    auto target = targetOf(c.node, *shape);
    if (!target) return target.status();
    if (!x.rankKnown) {
      // The target still gives the rank and its literal dims; 0 and -1 stay unknown.
      for (int64_t t : *target) {
        bool literal = t > 0 || (t == 0 && allowzero);
        out.shape.push_back(literal ? Dim::fixed(t) : Dim::unknown());
      }
      return std::vector{out};
    }
    auto dims = reshapeDims(c.node, x.shape, *target, allowzero);
    if (!dims) return dims.status();
    out.shape = *dims;
    return std::vector{out};
  }
  // A computed shape: we know the rank when the shape tensor's length is static.
  const TensorType& st = c.inputTypes[1];
  if (st.rankKnown && st.rank() == 1 && st.shape[0].isStatic())
    out.shape.assign(st.shape[0].value, Dim::unknown());
  else
    out.rankKnown = false;
  return std::vector{out};
}

Outputs reshapeKernel(const Node& n, const std::vector<const TensorData*>& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 2, 2));
  auto target = targetOf(n, *in[1]);
  if (!target) return target.status();
  std::vector<Dim> inDims = in[0]->type().shape;
  auto dims = reshapeDims(n, inDims, *target, n.attrs.getInt("allowzero", 0) != 0);
  if (!dims) return dims.status();
  TensorData out = *in[0];
  out.shape.clear();
  for (const Dim& d : *dims) out.shape.push_back(d.value);
  return std::vector{std::move(out)};
}

Expected<std::vector<int64_t>> permOf(const Node& n, size_t rank) {
  std::vector<int64_t> perm;
  if (auto p = n.attrs.getInts("perm")) {
    perm = *p;
  } else {
    for (size_t i = rank; i-- > 0;) perm.push_back(int64_t(i));
  }
  std::vector<bool> seen(rank, false);
  bool ok = perm.size() == rank;
  for (int64_t p : perm) {
    ok = ok && p >= 0 && p < int64_t(rank) && !seen[p];
    if (ok) seen[p] = true;
  }
  if (!ok)
    return nodeError(
        n, "perm " + shapeStr(perm) + " is not a permutation of " + std::to_string(rank) + " axes");
  return perm;
}

Types inferTranspose(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 1, 1));
  const TensorType& x = c.inputTypes[0];
  if (!x.rankKnown) return std::vector{x};
  auto perm = permOf(c.node, x.rank());
  if (!perm) return perm.status();
  TensorType out = x;
  for (size_t i = 0; i < perm->size(); ++i) out.shape[i] = x.shape[(*perm)[i]];
  return std::vector{out};
}

// out[i0..in] = x[..] with output axis k reading input axis perm[k]; bytes only.
Outputs transposeKernel(const Node& n, const std::vector<const TensorData*>& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 1, 1));
  const TensorData& x = *in[0];
  auto perm = permOf(n, x.rank());
  if (!perm) return perm.status();
  std::vector<int64_t> shape;
  for (int64_t p : *perm) shape.push_back(x.shape[p]);
  TensorData out(x.dtype, shape);
  std::vector<int64_t> inStrides = rowMajorStrides(x.shape);
  std::vector<int64_t> idx(shape.size(), 0);
  size_t es = dtypeSize(x.dtype);
  for (int64_t i = 0; i < out.numel(); ++i) {
    int64_t src = 0;
    for (size_t k = 0; k < shape.size(); ++k) src += idx[k] * inStrides[(*perm)[k]];
    std::memcpy(out.bytes.data() + i * es, x.bytes.data() + src * es, es);
    nextIndex(idx, shape);
  }
  return std::vector{std::move(out)};
}

}  // namespace

void registerShapeOps(OpRegistry& r) {
  r.add(OpInfo{"Reshape", "", PatternKind::Injective, inferReshape, reshapeKernel});
  r.add(OpInfo{"Transpose", "", PatternKind::Injective, inferTranspose, transposeKernel});
}

}  // namespace fuselens::ops
