// MatMul (numpy semantics: 1-D operands are promoted and the promoted dim
// removed again, batch dims broadcast) and Gemm (alpha*A'*B' + beta*C with
// transA/transB and an optional C broadcast to [M,N]). Both are
// OutEWiseFusable. The kernels are triple loops that sum in double: the
// reference should be the most accurate answer, not the fastest (in f32 only
// under Accumulation::Storage, accumulation.h).
#include <algorithm>
#include <cctype>
#include <map>
#include <type_traits>

#include "core/ops/accumulation.h"
#include "core/ops/op_util.h"

namespace fuselens::ops {
namespace {

using Outputs = Expected<std::vector<TensorData>>;
using Types = Expected<std::vector<TensorType>>;

std::string dimsMismatch(const Dim& a, const Dim& b) {
  return "inner dimensions " + a.str() + " and " + b.str() + " do not match";
}

// Dims are compatible unless both are static and differ.
bool mayEqual(const Dim& a, const Dim& b) { return !a.isStatic() || !b.isStatic() || a == b; }

Types inferMatMul(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 2, 2));
  const TensorType& a = c.inputTypes[0];
  const TensorType& b = c.inputTypes[1];
  if (a.dtype != b.dtype)
    return nodeError(c.node, "inputs have different element types " +
                                 std::string(dtypeName(a.dtype)) + " and " +
                                 std::string(dtypeName(b.dtype)));
  TensorType out;
  out.dtype = a.dtype;
  if (!a.rankKnown || !b.rankKnown) {
    out.rankKnown = false;
    return std::vector{out};
  }
  if (a.rank() == 0 || b.rank() == 0) return nodeError(c.node, "operands must not be scalars");
  // Promote 1-D operands: [K] x .. -> [1,K], .. x [K] -> [K,1].
  std::vector<Dim> sa = a.shape, sb = b.shape;
  if (sa.size() == 1) sa.insert(sa.begin(), Dim::fixed(1));
  if (sb.size() == 1) sb.push_back(Dim::fixed(1));
  const Dim& ka = sa.back();
  const Dim& kb = sb[sb.size() - 2];
  if (!mayEqual(ka, kb)) return nodeError(c.node, dimsMismatch(ka, kb));
  auto batch = broadcastDims(c.node, std::vector<Dim>(sa.begin(), sa.end() - 2),
                             std::vector<Dim>(sb.begin(), sb.end() - 2));
  if (!batch) return batch.status();
  out.shape = *batch;
  if (a.rank() > 1) out.shape.push_back(sa[sa.size() - 2]);
  if (b.rank() > 1) out.shape.push_back(sb.back());
  return std::vector{out};
}

// C[m,n] = sum_k A[m,k] * B[k,n] for one matrix of a batch.
template <class T, class Acc>
void matmulLoop(const T* a, const T* b, T* c, int64_t M, int64_t K, int64_t N) {
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      Acc sum = 0;
      for (int64_t k = 0; k < K; ++k) sum += Acc(a[m * K + k]) * Acc(b[k * N + n]);
      c[m * N + n] = static_cast<T>(sum);
    }
}

template <class T>
using AccOf = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;

template <class T, class Acc = AccOf<T>>
Outputs matmulTyped(const Node& n, const TensorData& a, const TensorData& b) {
  std::vector<int64_t> sa = a.shape, sb = b.shape;
  if (sa.size() == 1) sa.insert(sa.begin(), 1);
  if (sb.size() == 1) sb.push_back(1);
  int64_t M = sa[sa.size() - 2], K = sa.back(), N = sb.back();
  if (K != sb[sb.size() - 2])
    return nodeError(n, dimsMismatch(Dim::fixed(K), Dim::fixed(sb[sb.size() - 2])));
  std::vector<int64_t> ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
  auto batch = broadcastShapes(n, ba, bb);
  if (!batch) return batch.status();
  std::vector<int64_t> outShape = *batch;
  if (a.rank() > 1) outShape.push_back(M);
  if (b.rank() > 1) outShape.push_back(N);
  TensorData out(a.dtype, outShape);
  // Batch strides counted in whole matrices, 0 where that side broadcasts.
  std::vector<int64_t> stA = broadcastStrides(ba, *batch), stB = broadcastStrides(bb, *batch);
  std::vector<int64_t> idx(batch->size(), 0);
  int64_t batches = 1;
  for (int64_t d : *batch) batches *= d;
  for (int64_t i = 0; i < batches; ++i) {
    int64_t ia = 0, ib = 0;
    for (size_t d = 0; d < idx.size(); ++d) {
      ia += idx[d] * stA[d];
      ib += idx[d] * stB[d];
    }
    matmulLoop<T, Acc>(a.data<T>() + ia * M * K, b.data<T>() + ib * K * N,
                       out.data<T>() + i * M * N, M, K, N);
    nextIndex(idx, *batch);
  }
  return std::vector{std::move(out)};
}

Outputs matmulKernel(const Node& n, const std::vector<const TensorData*>& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 2, 2));
  const TensorData& a = *in[0];
  const TensorData& b = *in[1];
  if (a.dtype != b.dtype) return nodeError(n, "inputs have different element types");
  if (a.rank() == 0 || b.rank() == 0) return nodeError(n, "operands must not be scalars");
  switch (a.dtype) {
    case DType::F32:
      if (eagerAccumulation() == Accumulation::Storage) return matmulTyped<float, float>(n, a, b);
      return matmulTyped<float>(n, a, b);
    case DType::F64:
      return matmulTyped<double>(n, a, b);
    case DType::I32:
      return matmulTyped<int32_t>(n, a, b);
    case DType::I64:
      return matmulTyped<int64_t>(n, a, b);
    default:
      return nodeError(n, "no eager kernel for element type " + std::string(dtypeName(a.dtype)));
  }
}

// ---- Gemm ----

Types inferGemm(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 2, 3));
  const TensorType& a = c.inputTypes[0];
  const TensorType& b = c.inputTypes[1];
  TensorType out;
  out.dtype = a.dtype;
  if (a.dtype != b.dtype) return nodeError(c.node, "A and B have different element types");
  if (!a.rankKnown || !b.rankKnown) {
    out.rankKnown = false;
    return std::vector{out};
  }
  if (a.rank() != 2 || b.rank() != 2)
    return nodeError(c.node, "A and B must be 2-D, got " + a.str() + " and " + b.str());
  bool ta = c.node.attrs.getInt("transA", 0) != 0, tb = c.node.attrs.getInt("transB", 0) != 0;
  Dim m = a.shape[ta ? 1 : 0], ka = a.shape[ta ? 0 : 1];
  Dim kb = b.shape[tb ? 1 : 0], n = b.shape[tb ? 0 : 1];
  if (!mayEqual(ka, kb)) return nodeError(c.node, dimsMismatch(ka, kb));
  out.shape = {m, n};
  if (c.inputTypes.size() > 2 && c.node.inputs[2].valid() && c.inputTypes[2].rankKnown) {
    // C broadcasts one way only: to [M,N], never the other way round.
    auto cb = broadcastDims(c.node, out.shape, c.inputTypes[2].shape);
    if (!cb) return cb.status();
    if (c.inputTypes[2].rank() > 2 || !mayEqual((*cb)[0], m) || !mayEqual((*cb)[1], n))
      return nodeError(c.node, "C of shape " + c.inputTypes[2].str() +
                                   " does not broadcast to the output " + dimsStr(out.shape));
  }
  return std::vector{out};
}

template <class T, class Acc = double>
Outputs gemmTyped(const Node& n, const TensorData& a, const TensorData& b, const TensorData* c) {
  bool ta = n.attrs.getInt("transA", 0) != 0, tb = n.attrs.getInt("transB", 0) != 0;
  double alpha = n.attrs.getFloat("alpha", 1.0), beta = n.attrs.getFloat("beta", 1.0);
  int64_t M = a.shape[ta ? 1 : 0], K = a.shape[ta ? 0 : 1];
  int64_t Kb = b.shape[tb ? 1 : 0], N = b.shape[tb ? 0 : 1];
  if (K != Kb) return nodeError(n, dimsMismatch(Dim::fixed(K), Dim::fixed(Kb)));
  std::vector<int64_t> cs;
  if (c) {
    auto bc = broadcastShapes(n, {M, N}, c->shape);
    if (!bc) return bc.status();
    if (c->rank() > 2 || *bc != std::vector<int64_t>{M, N})
      return nodeError(n, "C of shape " + shapeStr(c->shape) +
                              " does not broadcast to the output " + shapeStr({M, N}));
    cs = broadcastStrides(c->shape, {M, N});
  }
  TensorData out(a.dtype, {M, N});
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  for (int64_t m = 0; m < M; ++m)
    for (int64_t j = 0; j < N; ++j) {
      Acc sum = 0;
      for (int64_t k = 0; k < K; ++k) {
        Acc x = pa[ta ? k * M + m : m * K + k];
        Acc y = pb[tb ? j * K + k : k * N + j];
        sum += x * y;
      }
      double r = alpha * sum;
      if (c) r += beta * double(c->data<T>()[m * cs[0] + j * cs[1]]);
      out.data<T>()[m * N + j] = static_cast<T>(r);
    }
  return std::vector{std::move(out)};
}

Outputs gemmKernel(const Node& n, const std::vector<const TensorData*>& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 2, 3));
  const TensorData& a = *in[0];
  const TensorData& b = *in[1];
  const TensorData* c = in.size() > 2 ? in[2] : nullptr;
  if (a.rank() != 2 || b.rank() != 2)
    return nodeError(n,
                     "A and B must be 2-D, got " + shapeStr(a.shape) + " and " + shapeStr(b.shape));
  if (a.dtype != b.dtype || (c && c->dtype != a.dtype))
    return nodeError(n, "inputs have different element types");
  switch (a.dtype) {
    case DType::F32:
      if (eagerAccumulation() == Accumulation::Storage) return gemmTyped<float, float>(n, a, b, c);
      return gemmTyped<float>(n, a, b, c);
    case DType::F64:
      return gemmTyped<double>(n, a, b, c);
    default:
      return nodeError(n, "no eager kernel for element type " + std::string(dtypeName(a.dtype)));
  }
}

// ---- Einsum ----

// A parsed equation: per operand its letters (ellipsis expanded to upper-case
// letters, right-aligned), and the output letters.
struct Equation {
  std::vector<std::string> inputs;
  std::string output;
};

Expected<Equation> parseEinsum(const Node& n, const std::vector<size_t>& ranks) {
  std::string eq;
  for (char ch : n.attrs.getString("equation", ""))
    if (ch != ' ') eq += ch;
  auto arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != ranks.size())
    return nodeError(n, "equation '" + eq + "' names " + std::to_string(terms.size()) +
                            " operands, the node has " + std::to_string(ranks.size()));
  // The ellipsis stands for the same leading dims in every operand, right-aligned:
  // they become the letters 1..E (control characters no equation can contain).
  size_t ellRank = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    size_t dots = terms[i].find("...");
    size_t letters = terms[i].size() - (dots == std::string::npos ? 0 : 3);
    if (dots == std::string::npos ? letters != ranks[i] : letters > ranks[i])
      return nodeError(n, "operand " + std::to_string(i) + " of '" + eq +
                              "' does not match its rank " + std::to_string(ranks[i]));
    for (char ch : terms[i])
      if (ch != '.' && !std::isalpha(static_cast<unsigned char>(ch)))
        return nodeError(n, "equation '" + eq + "' has an invalid character");
    if (dots != std::string::npos) ellRank = std::max(ellRank, ranks[i] - letters);
  }
  Equation e;
  for (size_t i = 0; i < terms.size(); ++i) {
    std::string t = terms[i];
    size_t dots = t.find("...");
    if (dots != std::string::npos) {
      size_t k = ranks[i] - (t.size() - 3);
      std::string ell;
      for (size_t j = 0; j < k; ++j) ell += char(1 + (ellRank - k) + j);
      t = t.substr(0, dots) + ell + t.substr(dots + 3);
    }
    e.inputs.push_back(t);
  }
  std::string ellOut;
  for (size_t j = 0; j < ellRank; ++j) ellOut += char(1 + j);
  if (arrow != std::string::npos) {
    std::string out = eq.substr(arrow + 2);
    size_t dots = out.find("...");
    e.output =
        dots == std::string::npos ? out : out.substr(0, dots) + ellOut + out.substr(dots + 3);
  } else {
    // Implicit output: the ellipsis, then letters used once, in alphabetical order.
    std::map<char, int> count;
    for (const auto& t : e.inputs)
      for (char ch : t) ++count[ch];
    e.output = ellOut;
    for (auto [ch, k] : count)
      if (k == 1 && ch > 31) e.output += ch;
  }
  return e;
}

Outputs einsumKernel(const Node& n, const std::vector<const TensorData*>& in) {
  if (in.empty()) return nodeError(n, "expects at least one input");
  std::vector<size_t> ranks;
  for (const TensorData* t : in) {
    if (!t) return nodeError(n, "an input is missing");
    if (t->dtype != in[0]->dtype) return nodeError(n, "inputs have different element types");
    ranks.push_back(t->rank());
  }
  auto e = parseEinsum(n, ranks);
  if (!e) return e.status();
  // Each letter's size; ellipsis letters broadcast (1 against N).
  std::map<char, int64_t> size;
  for (size_t i = 0; i < in.size(); ++i)
    for (size_t k = 0; k < e->inputs[i].size(); ++k) {
      char ch = e->inputs[i][k];
      int64_t d = in[i]->shape[k];
      auto [it, fresh] = size.emplace(ch, d);
      if (!fresh && it->second != d) {
        if (ch < 32 && (it->second == 1 || d == 1))
          it->second = std::max(it->second, d);
        else
          return nodeError(n, "dimension sizes for '" + std::string(1, ch) + "' disagree");
      }
    }
  std::string all = e->output;
  for (auto [ch, d] : size)
    if (all.find(ch) == std::string::npos) all += ch;
  std::vector<int64_t> shape, full;
  for (char ch : e->output) {
    if (!size.count(ch))
      return nodeError(n, "output letter '" + std::string(1, ch) + "' is in no operand");
    shape.push_back(size[ch]);
  }
  for (char ch : all) full.push_back(size[ch]);
  TensorData out(in[0]->dtype, shape);
  std::vector<double> acc(size_t(out.numel()), 0.0);
  // Strides of each operand per letter of `all` (0 where it lacks the letter or broadcasts).
  std::vector<std::vector<int64_t>> st(in.size(), std::vector<int64_t>(all.size(), 0));
  for (size_t i = 0; i < in.size(); ++i) {
    auto rs = rowMajorStrides(in[i]->shape);
    for (size_t k = 0; k < e->inputs[i].size(); ++k)
      if (in[i]->shape[k] != 1 || size[e->inputs[i][k]] == 1)
        st[i][all.find(e->inputs[i][k])] += rs[k];
  }
  int64_t outN = out.numel(), total = 1;
  for (int64_t d : full) total *= d;
  std::vector<int64_t> idx(full.size(), 0);
  int64_t inner = outN ? total / outN : 0;
  for (int64_t i = 0; i < total; ++i) {
    double p = 1;
    for (size_t k = 0; k < in.size(); ++k) {
      int64_t off = 0;
      for (size_t d = 0; d < full.size(); ++d) off += idx[d] * st[k][d];
      p *= in[k]->at(off);
    }
    acc[size_t(i / std::max<int64_t>(inner, 1))] += p;
    nextIndex(idx, full);
  }
  for (int64_t i = 0; i < outN; ++i) storeF(out, i, acc[size_t(i)]);
  return std::vector{std::move(out)};
}

Types inferEinsum(const InferContext& c) {
  std::vector<size_t> ranks;
  for (const TensorType& t : c.inputTypes) {
    if (!t.rankKnown) return std::vector{unknownRank(c.inputTypes[0].dtype)};
    ranks.push_back(t.rank());
  }
  auto e = parseEinsum(c.node, ranks);
  if (!e) return e.status();
  std::map<char, Dim> size;
  for (size_t i = 0; i < ranks.size(); ++i)
    for (size_t k = 0; k < e->inputs[i].size(); ++k) {
      Dim d = c.inputTypes[i].shape[k];
      auto [it, fresh] = size.emplace(e->inputs[i][k], d);
      if (!fresh && it->second != d) {
        if (it->second.isStatic() && it->second.value == 1)
          it->second = d;
        else if (!(d.isStatic() && d.value == 1))
          it->second = Dim::unknown();
      }
    }
  TensorType o;
  o.dtype = c.inputTypes.empty() ? DType::F32 : c.inputTypes[0].dtype;
  for (char ch : e->output) {
    if (!size.count(ch)) return nodeError(c.node, "an output letter is in no operand");
    o.shape.push_back(size[ch]);
  }
  return std::vector{o};
}

}  // namespace

void registerMatMulOps(OpRegistry& r) {
  r.add(OpInfo{"Einsum", "", PatternKind::OutEWiseFusable, inferEinsum, einsumKernel});
  r.add(OpInfo{"MatMul", "", PatternKind::OutEWiseFusable, inferMatMul,
               computeHalfInF32(matmulKernel)});
  r.add(OpInfo{"Gemm", "", PatternKind::OutEWiseFusable, inferGemm, computeHalfInF32(gemmKernel)});
}

}  // namespace fuselens::ops
