// Compute definitions of MatMul (numpy semantics: batched with broadcast batch
// dims, 1-D operands promoted and their dim dropped from the result) and Gemm
// (alpha, beta, transA, transB, optional C broadcast to [M,N]). Both are one
// loop nest over the result with a scalar accumulator over K; the result
// element goes to the Sink, where a fused elementwise epilogue is applied to
// the accumulator before the store.
#include "codegen/compute.h"

namespace fuselens {
namespace {

// Numpy broadcast of two batch shapes; nullopt when they are incompatible.
std::optional<std::vector<int64_t>> broadcastShapes(const std::vector<int64_t>& a,
                                                    const std::vector<int64_t>& b) {
  size_t r = std::max(a.size(), b.size());
  std::vector<int64_t> out(r);
  for (size_t k = 0; k < r; ++k) {
    int64_t da = k < r - a.size() ? 1 : a[k - (r - a.size())];
    int64_t db = k < r - b.size() ? 1 : b[k - (r - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[k] = da == 1 ? db : da;
  }
  return out;
}

// Batch indices of an operand whose batch shape broadcasts to the result's.
std::vector<ExprRef> batchDims(const std::vector<int64_t>& opBatch,
                               const std::vector<ExprRef>& outBatch) {
  std::vector<ExprRef> dims;
  size_t lead = outBatch.size() - opBatch.size();
  for (size_t k = 0; k < opBatch.size(); ++k)
    dims.push_back(opBatch[k] == 1 ? intConst(0) : outBatch[lead + k]);
  return dims;
}

bool checkOutput(KernelBuilder& kb, const Node& n, const std::vector<int64_t>& expected) {
  std::vector<int64_t> declared = kb.shapeOf(n.outputs[0]);
  if (declared == expected) return true;
  kb.fail(Status::error(
      "output shape " + formatShape(declared) + " differs from the computed " + formatShape(expected),
      nodePlace(n)));
  return false;
}

}  // namespace

std::vector<StmtRef> lowerMatMul(KernelBuilder& kb, const Node& n,
                                 const KernelBuilder::Sink& sink) {
  std::vector<int64_t> a = kb.shapeOf(n.inputs[0]), b = kb.shapeOf(n.inputs[1]);
  if (a.empty() || b.empty()) {
    kb.fail(Status::error("MatMul operands must have rank 1 or more", nodePlace(n)));
    return {};
  }
  bool aVec = a.size() == 1, bVec = b.size() == 1;
  std::vector<int64_t> a2 = aVec ? std::vector<int64_t>{1, a[0]} : a;
  std::vector<int64_t> b2 = bVec ? std::vector<int64_t>{b[0], 1} : b;
  int64_t m = a2[a2.size() - 2], k = a2.back(), n2 = b2.back();
  std::vector<int64_t> aBatch(a2.begin(), a2.end() - 2), bBatch(b2.begin(), b2.end() - 2);
  auto batch = broadcastShapes(aBatch, bBatch);
  if (b2[b2.size() - 2] != k || !batch) {
    kb.fail(
        Status::error("operand shapes " + formatShape(a) + " and " + formatShape(b) + " do not multiply",
                      nodePlace(n)));
    return {};
  }
  std::vector<int64_t> out = *batch;
  if (!aVec) out.push_back(m);
  if (!bVec) out.push_back(n2);
  if (!checkOutput(kb, n, out)) return {};

  size_t nb = batch->size();
  return kb.loopNest(out, [&](const Index& at) -> std::vector<StmtRef> {
    std::vector<ExprRef> d = at.dimExprs();
    std::vector<ExprRef> outBatch(d.begin(), d.begin() + nb);
    ExprRef row = aVec ? intConst(0) : d[nb];
    ExprRef col = bVec ? intConst(0) : d[nb + (aVec ? 0 : 1)];
    Var acc = kb.newLocal("acc");
    Var kv = kb.newLoopVar();
    ExprRef kk = varRef(kv);
    std::vector<ExprRef> ai = batchDims(aBatch, outBatch), bi = batchDims(bBatch, outBatch);
    if (!aVec) ai.push_back(row);
    ai.push_back(kk);
    bi.push_back(kk);
    if (!bVec) bi.push_back(col);
    ExprRef prod = mul(kb.valueAt(n.inputs[0], Index::ofDims(a, ai)),
                       kb.valueAt(n.inputs[1], Index::ofDims(b, bi)));
    std::vector<StmtRef> body = {let(acc, floatConst(0)),
                                 forLoop(kv, k, {assign(acc, add(varRef(acc), prod))})};
    for (StmtRef& s : sink(at, varRef(acc))) body.push_back(std::move(s));
    return body;
  });
}

std::vector<StmtRef> lowerGemm(KernelBuilder& kb, const Node& n, const KernelBuilder::Sink& sink) {
  std::vector<int64_t> a = kb.shapeOf(n.inputs[0]), b = kb.shapeOf(n.inputs[1]);
  if (a.size() != 2 || b.size() != 2) {
    kb.fail(Status::error("Gemm operands must be 2-D, got " + formatShape(a) + " and " + formatShape(b),
                          nodePlace(n)));
    return {};
  }
  bool ta = n.attrs.getInt("transA", 0) != 0, tb = n.attrs.getInt("transB", 0) != 0;
  double alpha = n.attrs.getFloat("alpha", 1.0), beta = n.attrs.getFloat("beta", 1.0);
  int64_t m = ta ? a[1] : a[0], k = ta ? a[0] : a[1];
  int64_t kb2 = tb ? b[1] : b[0], nn = tb ? b[0] : b[1];
  if (k != kb2) {
    kb.fail(Status::error("inner dimensions differ: A' has K=" + std::to_string(k) +
                              ", B' has K=" + std::to_string(kb2),
                          nodePlace(n)));
    return {};
  }
  bool hasC = n.inputs.size() > 2 && n.inputs[2].valid();
  std::vector<int64_t> c = hasC ? kb.shapeOf(n.inputs[2]) : std::vector<int64_t>{};
  if (hasC && !broadcastsTo(c, {m, nn})) {
    kb.fail(Status::error("C of shape " + formatShape(c) + " does not broadcast to [" +
                              std::to_string(m) + "," + std::to_string(nn) + "]",
                          nodePlace(n)));
    return {};
  }
  if (!checkOutput(kb, n, {m, nn})) return {};

  return kb.loopNest({m, nn}, [&](const Index& at) -> std::vector<StmtRef> {
    std::vector<ExprRef> d = at.dimExprs();
    Var acc = kb.newLocal("acc");
    Var kv = kb.newLoopVar();
    ExprRef kk = varRef(kv);
    Index ai =
        Index::ofDims(a, ta ? std::vector<ExprRef>{kk, d[0]} : std::vector<ExprRef>{d[0], kk});
    Index bi =
        Index::ofDims(b, tb ? std::vector<ExprRef>{d[1], kk} : std::vector<ExprRef>{kk, d[1]});
    ExprRef prod = mul(kb.valueAt(n.inputs[0], ai), kb.valueAt(n.inputs[1], bi));
    std::vector<StmtRef> body = {let(acc, floatConst(0)),
                                 forLoop(kv, k, {assign(acc, add(varRef(acc), prod))})};
    ExprRef y = mul(floatConst(alpha), varRef(acc));
    if (hasC) y = add(y, mul(floatConst(beta), kb.valueAt(n.inputs[2], broadcastIndex(at, c))));
    for (StmtRef& s : sink(at, y)) body.push_back(std::move(s));
    return body;
  });
}

}  // namespace fuselens
