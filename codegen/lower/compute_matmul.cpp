// Compute definitions of MatMul (numpy semantics: batched with broadcast batch
// dims, 1-D operands promoted and their dim dropped from the result) and Gemm
// (alpha, beta, transA, transB, optional C broadcast to [M,N]).
//
// The algorithm is C(i,j) = sum_k A(i,k) B(k,j), with A and B read through
// `valueAt` (so a transpose or an elementwise prologue inlines) and every
// result element handed to the Sink, where a fused epilogue (bias, activation,
// residual) is applied before the store. Two schedules build its loop nest:
// the plain one (a scalar accumulator per element) for small products, and the
// tiled template of schedule.h for the rest: B repacked into nr-wide panels
// (at compile time when B is a constant, else by a packing nest per call), an
// mr x nr register tile of accumulators per step, and the epilogue applied to
// the tile's vectors before they are stored.
#include <algorithm>
#include <numeric>

#include "codegen/lower/compute.h"

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
  kb.fail(Status::error("output shape " + formatShape(declared) + " differs from the computed " +
                            formatShape(expected),
                        nodePlace(n)));
  return false;
}

// The tiled template. Operand access is abstracted so MatMul and Gemm share it.
struct MatMulProblem {
  std::vector<int64_t> batch;   // result batch shape (may be empty)
  std::vector<int64_t> bBatch;  // B's own batch shape (broadcast to `batch`)
  int64_t m = 0, n = 0, k = 0;
  ValueId bValue;
  // A(i,k) and B(k,j) at result batch position `bd`.
  std::function<ExprRef(const std::vector<ExprRef>& bd, ExprRef i, ExprRef k)> a;
  std::function<ExprRef(const std::vector<ExprRef>& bd, ExprRef k, ExprRef j)> b;
  // The result position and the value the accumulator stands for (Gemm: alpha, beta*C).
  std::function<Index(const std::vector<ExprRef>& bd, ExprRef i, ExprRef j)> out;
  std::function<ExprRef(const Index& at, ExprRef acc)> finish;
  // B(k, j) of a constant B read straight from its data, for compile-time packing.
  std::function<float(int64_t bb, int64_t k, int64_t j)> bConst;
};

int64_t product(const std::vector<int64_t>& s) {
  return std::accumulate(s.begin(), s.end(), int64_t(1), std::multiplies<>());
}

class TiledMatMul {
 public:
  TiledMatMul(KernelBuilder& kb, const MatMulProblem& p, const KernelBuilder::Sink& sink)
      : kb_(kb), p_(p), sink_(sink), t_(kb.schedule().matmul) {
    // A single row (GEMV: a classifier head, a decoder step) streams B once; a
    // 1 x nr tile would keep only nr/lanes FMA chains in flight, so its tile is
    // twice as wide.
    nr_ = std::min(p.m == 1 ? 2 * t_.nr : t_.nr, p.n);
    mr_ = std::min(t_.mr, p.m);
    panels_ = p.n / nr_;
    nt_ = p.n - panels_ * nr_;
    mb_ = p.m / mr_;
    mt_ = p.m - mb_ * mr_;
    // Panels per cache block: B's block (K x nc floats) near 512 KiB, a divisor
    // of the panel count, and at least 2 blocks per thread when there are enough.
    int64_t want =
        t_.ncPanels > 0 ? t_.ncPanels : std::max<int64_t>(1, (512 << 10) / (4 * p.k * nr_));
    want = std::min(want, std::max<int64_t>(1, panels_ / 4));
    nc_ = 1;
    for (int64_t d = 1; d <= std::min(want, panels_); ++d)
      if (panels_ % d == 0) nc_ = d;
  }

  std::vector<StmtRef> build() {
    std::vector<StmtRef> out;
    BufferId bp = packB(out);
    packed_ = bp;
    int64_t nbatch = product(p_.batch);
    Var bv = kb_.newLoopVar();
    std::vector<ExprRef> bd = Index::ofFlat(p_.batch, varRef(bv)).dimExprs();
    ExprRef bOff = mul(bIndexOf(bd), intConst(p_.k * p_.n));
    if (nbatch == 1) {  // every batch dim is 1: the indices above are constants
      for (StmtRef& s : blocks(bd, bOff, true)) out.push_back(std::move(s));
      return out;
    }
    out.push_back(pinnedLoop(bv, nbatch, par(), blocks(bd, bOff, false)));
    return out;
  }

 private:
  // Parallel loops of the template run on the pool unless the schedule says
  // serial or the product is too small to pay for waking the pool (the same
  // parallelMinWork counted in multiply-adds per 32-lane step).
  ForKind par() const {
    const Schedule& s = kb_.schedule();
    bool big = product(p_.batch) * p_.m * p_.n * p_.k >= 32 * s.parallelMinWork;
    return s.parallelOuter && big ? ForKind::Parallel : ForKind::Serial;
  }

  // The flat position in B's batch of result batch position bd.
  ExprRef bIndexOf(const std::vector<ExprRef>& bd) {
    if (p_.bBatch.empty()) return intConst(0);
    std::vector<ExprRef> dims;
    size_t lead = bd.size() - p_.bBatch.size();
    for (size_t k = 0; k < p_.bBatch.size(); ++k)
      dims.push_back(p_.bBatch[k] == 1 ? intConst(0) : bd[lead + k]);
    return Index::ofDims(p_.bBatch, dims).flatExpr();
  }

  // Packed B: per B batch, panels [P][K][nr] then the tail [K][nt].
  int64_t panelOffset(int64_t panel) const { return panel * p_.k * nr_; }

  BufferId packB(std::vector<StmtRef>& out) {
    int64_t nbb = product(p_.bBatch);
    std::vector<int64_t> shape = {nbb, p_.k, p_.n};
    LoopFunc& fn = kb_.func();
    if (p_.bConst) {
      auto data = std::make_shared<TensorData>(DType::F32, shape);
      float* d = data->data<float>();
      for (int64_t bb = 0; bb < nbb; ++bb) {
        float* base = d + bb * p_.k * p_.n;
        for (int64_t j = 0; j < p_.n; ++j) {
          int64_t panel = j / nr_, jj = j % nr_;
          int64_t w = panel < panels_ ? nr_ : nt_;
          for (int64_t k = 0; k < p_.k; ++k)
            base[panelOffset(panel) + k * w + jj] = p_.bConst(bb, k, j);
        }
      }
      return kb_.addPrepacked("packed_" + kb_.graph().value(p_.bValue).name.substr(0, 24) + "_" +
                                  std::to_string(fn.buffers.size()),
                              data);
    }
    // Packed at run time by a nest before the product.
    BufferId b = fn.addBuffer("packed" + std::to_string(fn.buffers.size()), BufferKind::Temp,
                              DType::F32, shape);
    temps_.push_back(b);
    Var bb = kb_.newLoopVar();
    // The B batch position as result batch dims: B's batch dims are trailing ones.
    std::vector<ExprRef> bbDims = Index::ofFlat(p_.bBatch, varRef(bb)).dimExprs();
    std::vector<ExprRef> bd(p_.batch.size(), intConst(0));
    for (size_t k = 0; k < bbDims.size(); ++k) bd[bd.size() - bbDims.size() + k] = bbDims[k];
    ExprRef base = nbb == 1 ? intConst(0) : mul(varRef(bb), intConst(p_.k * p_.n));
    std::vector<StmtRef> body;
    auto packPanel = [&](ExprRef col0, ExprRef off, int64_t w) {
      Var kv = kb_.newLoopVar(), jj = kb_.newLoopVar();
      ExprRef v = p_.b(bd, varRef(kv), add(col0, varRef(jj)));
      StmtRef st = store(fn.buffer(b), add(off, add(mul(varRef(kv), intConst(w)), varRef(jj))), v);
      return pinnedLoop(kv, p_.k, ForKind::Serial, {pinnedLoop(jj, w, ForKind::Vectorized, {st})});
    };
    if (panels_ > 0) {
      Var pv = kb_.newLoopVar();
      ExprRef off = add(base, mul(varRef(pv), intConst(p_.k * nr_)));
      body.push_back(pinnedLoop(pv, panels_, panels_ >= 4 ? par() : ForKind::Serial,
                                {packPanel(mul(varRef(pv), intConst(nr_)), off, nr_)}));
    }
    if (nt_ > 0)
      body.push_back(
          packPanel(intConst(panels_ * nr_), add(base, intConst(panelOffset(panels_))), nt_));
    if (nbb == 1)
      for (StmtRef& s : body) out.push_back(std::move(s));
    else
      out.push_back(pinnedLoop(bb, nbb, ForKind::Serial, body));
    return b;
  }

  // The nests of one batch position: full panels in cache blocks, then the
  // column tail. Parallel over blocks (or rows) when there is no batch loop.
  std::vector<StmtRef> blocks(const std::vector<ExprRef>& bd, ExprRef bOff, bool parallel) {
    std::vector<StmtRef> out;
    if (panels_ > 0) {
      int64_t jcN = panels_ / nc_;
      Var jc = kb_.newLoopVar(), ib = kb_.newLoopVar(), jr = kb_.newLoopVar();
      ExprRef panel = add(mul(varRef(jc), intConst(nc_)), varRef(jr));
      auto tileRows = [&](ExprRef row, int64_t mr) {
        return pinnedLoop(jr, nc_, ForKind::Serial, {tile(bd, bOff, row, mr, panel, nr_)});
      };
      std::vector<StmtRef> rows;
      bool rowsOuter = t_.rowsOuter || (jcN < 2 && mb_ >= 2);
      if (mb_ > 0) {
        StmtRef inner = tileRows(mul(varRef(ib), intConst(mr_)), mr_);
        rows.push_back(rowsOuter ? inner : pinnedLoop(ib, mb_, ForKind::Serial, {inner}));
      }
      if (hasRowTail()) {
        Var jr2 = kb_.newLoopVar();
        ExprRef panel2 = add(mul(varRef(jc), intConst(nc_)), varRef(jr2));
        rows.push_back(pinnedLoop(jr2, nc_, ForKind::Serial, {rowTail(bd, bOff, panel2, nr_)}));
      }
      if (!rowsOuter) {
        out.push_back(pinnedLoop(jc, jcN, parallel && jcN >= 2 ? par() : ForKind::Serial, rows));
      } else {
        // ib outermost: the full-row tiles, then the row tail for every block.
        StmtRef full = pinnedLoop(jc, jcN, ForKind::Serial, {rows[0]});
        out.push_back(pinnedLoop(ib, mb_, parallel ? par() : ForKind::Serial, {full}));
        if (hasRowTail()) {
          Var jc2 = kb_.newLoopVar(), jr2 = kb_.newLoopVar();
          ExprRef panel2 = add(mul(varRef(jc2), intConst(nc_)), varRef(jr2));
          out.push_back(pinnedLoop(
              jc2, jcN, ForKind::Serial,
              {pinnedLoop(jr2, nc_, ForKind::Serial, {rowTail(bd, bOff, panel2, nr_)})}));
        }
      }
    }
    if (nt_ > 0) {
      ExprRef panel = intConst(panels_);
      if (mb_ > 0) {
        Var ib = kb_.newLoopVar();
        out.push_back(
            pinnedLoop(ib, mb_, ForKind::Serial,
                       {tile(bd, bOff, mul(varRef(ib), intConst(mr_)), mr_, panel, nt_)}));
      }
      if (hasRowTail()) out.push_back(rowTail(bd, bOff, panel, nt_));
    }
    return out;
  }

  bool hasRowTail() const { return mt_ > 0 || kb_.schedule().shapeStable; }
  // The rows [mb*mr, M): one tile of them, or with Schedule::shapeStable one one-row
  // tile per row (a loop of extent M % mr, possibly 0).
  StmtRef rowTail(const std::vector<ExprRef>& bd, ExprRef bOff, ExprRef panel, int64_t w) {
    if (!kb_.schedule().shapeStable) return tile(bd, bOff, intConst(mb_ * mr_), mt_, panel, w);
    Var r = kb_.newLoopVar();
    return pinnedLoop(r, mt_, ForKind::Serial,
                      {tile(bd, bOff, add(intConst(mb_ * mr_), varRef(r)), 1, panel, w)});
  }

  // One mr x w register tile at rows [row, row+mr) of packed panel `panel`.
  StmtRef tile(const std::vector<ExprRef>& bd, ExprRef bOff, ExprRef row, int64_t mr, ExprRef panel,
               int64_t w) {
    LoopFunc& fn = kb_.func();
    BufferId accId = fn.addBuffer("acc" + std::to_string(fn.buffers.size()), BufferKind::Local,
                                  DType::F32, {mr, w});
    const Buffer& acc = fn.buffer(accId);
    const Buffer& bp = fn.buffer(packed_);
    ExprRef col0 = mul(panel, intConst(nr_));
    ExprRef pOff = add(bOff, mul(panel, intConst(p_.k * nr_)));
    auto regLoops = [&](const std::function<std::vector<StmtRef>(ExprRef r, ExprRef jj)>& body) {
      Var r = kb_.newLoopVar(), jj = kb_.newLoopVar();
      return pinnedLoop(r, mr, ForKind::Unrolled,
                        {pinnedLoop(jj, w, ForKind::Vectorized, body(varRef(r), varRef(jj)))});
    };
    auto accAt = [&](ExprRef r, ExprRef jj) { return add(mul(r, intConst(w)), jj); };
    StmtRef zero = regLoops([&](ExprRef r, ExprRef jj) -> std::vector<StmtRef> {
      return {store(acc, accAt(r, jj), floatConst(0))};
    });
    Var kv = kb_.newLoopVar();
    ExprRef k = varRef(kv);
    StmtRef update = regLoops([&](ExprRef r, ExprRef jj) -> std::vector<StmtRef> {
      ExprRef av = p_.a(bd, add(row, r), k);
      ExprRef bv = load(bp, add(pOff, add(mul(k, intConst(w)), jj)));
      return {store(acc, accAt(r, jj), fma(av, bv, load(acc, accAt(r, jj))))};
    });
    StmtRef kLoop = pinnedLoop(kv, p_.k, ForKind::Serial, {update});
    StmtRef epilogue = regLoops([&](ExprRef r, ExprRef jj) {
      Index at = p_.out(bd, add(row, r), add(col0, jj));
      return sink_(at, p_.finish(at, load(acc, accAt(r, jj))));
    });
    return allocate(acc, {zero, kLoop, epilogue});
  }

 public:
  std::vector<BufferId> temps_;

 private:
  KernelBuilder& kb_;
  const MatMulProblem& p_;
  const KernelBuilder::Sink& sink_;
  const MatMulTiling& t_;
  BufferId packed_;
  int64_t nr_, mr_, panels_, nt_, mb_, mt_, nc_;
};

// M = 1 takes the template only with a constant B, packed once at compile
// time: packing a run-time B would cost as much as the product itself.
bool useTiling(const KernelBuilder& kb, int64_t m, int64_t n, int64_t k, bool bConst) {
  const MatMulTiling& t = kb.schedule().matmul;
  return t.enabled && m * n * k >= t.minWork && n >= 4 && (m >= 2 || (m == 1 && bConst));
}

bool isF32Constant(const KernelBuilder& kb, ValueId v) {
  auto c = kb.constantOf(v);
  return c && c->dtype == DType::F32;
}

std::vector<StmtRef> wrapTemps(KernelBuilder& kb, TiledMatMul& t, std::vector<StmtRef> body) {
  for (size_t i = t.temps_.size(); i-- > 0;)
    body = {allocate(kb.func().buffer(t.temps_[i]), std::move(body))};
  return body;
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
    kb.fail(Status::error(
        "operand shapes " + formatShape(a) + " and " + formatShape(b) + " do not multiply",
        nodePlace(n)));
    return {};
  }
  std::vector<int64_t> out = *batch;
  if (!aVec) out.push_back(m);
  if (!bVec) out.push_back(n2);
  if (!checkOutput(kb, n, out)) return {};

  size_t nb = batch->size();
  // Integer MatMul (i64 accumulator, wrapping like eager) takes the plain nest.
  bool integer = computeType(kb.graph().value(n.inputs[0]).type.dtype) == DType::I64;
  if (!aVec && !bVec && !integer && useTiling(kb, m, n2, k, isF32Constant(kb, n.inputs[1]))) {
    MatMulProblem p;
    p.batch = *batch;
    p.bBatch = bBatch;
    p.m = m, p.n = n2, p.k = k;
    p.bValue = n.inputs[1];
    p.a = [&](const std::vector<ExprRef>& bd, ExprRef i, ExprRef kk) {
      std::vector<ExprRef> ai = batchDims(aBatch, bd);
      ai.push_back(i);
      ai.push_back(kk);
      return kb.valueAt(n.inputs[0], Index::ofDims(a, ai));
    };
    p.b = [&](const std::vector<ExprRef>& bd, ExprRef kk, ExprRef j) {
      std::vector<ExprRef> bi = batchDims(bBatch, bd);
      bi.push_back(kk);
      bi.push_back(j);
      return kb.valueAt(n.inputs[1], Index::ofDims(b, bi));
    };
    p.out = [&](const std::vector<ExprRef>& bd, ExprRef i, ExprRef j) {
      std::vector<ExprRef> d = bd;
      d.push_back(i);
      d.push_back(j);
      return Index::ofDims(out, d);
    };
    p.finish = [](const Index&, ExprRef acc) { return acc; };
    if (auto c = kb.constantOf(n.inputs[1]); c && c->dtype == DType::F32) {
      const float* d = c->data<float>();
      p.bConst = [d, k, n2](int64_t bb, int64_t kk, int64_t j) {
        return d[(bb * k + kk) * n2 + j];
      };
    }
    TiledMatMul t(kb, p, sink);
    std::vector<StmtRef> body = t.build();
    return wrapTemps(kb, t, std::move(body));
  }
  return kb.loopNest(out, [&](const Index& at) -> std::vector<StmtRef> {
    std::vector<ExprRef> d = at.dimExprs();
    std::vector<ExprRef> outBatch(d.begin(), d.begin() + nb);
    ExprRef row = aVec ? intConst(0) : d[nb];
    ExprRef col = bVec ? intConst(0) : d[nb + (aVec ? 0 : 1)];
    Var acc = kb.newLocal("acc", integer ? DType::I64 : DType::F32);
    Var kv = kb.newLoopVar();
    ExprRef kk = varRef(kv);
    std::vector<ExprRef> ai = batchDims(aBatch, outBatch), bi = batchDims(bBatch, outBatch);
    if (!aVec) ai.push_back(row);
    ai.push_back(kk);
    bi.push_back(kk);
    if (!bVec) bi.push_back(col);
    ExprRef prod = mul(kb.valueAt(n.inputs[0], Index::ofDims(a, ai)),
                       kb.valueAt(n.inputs[1], Index::ofDims(b, bi)));
    std::vector<StmtRef> body = {let(acc, integer ? intConst(0) : floatConst(0)),
                                 forLoop(kv, k, {assign(acc, add(varRef(acc), prod))})};
    for (StmtRef& s : sink(at, varRef(acc))) body.push_back(std::move(s));
    return body;
  });
}

std::vector<StmtRef> lowerGemm(KernelBuilder& kb, const Node& n, const KernelBuilder::Sink& sink) {
  std::vector<int64_t> a = kb.shapeOf(n.inputs[0]), b = kb.shapeOf(n.inputs[1]);
  if (a.size() != 2 || b.size() != 2) {
    kb.fail(
        Status::error("Gemm operands must be 2-D, got " + formatShape(a) + " and " + formatShape(b),
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

  if (useTiling(kb, m, nn, k, isF32Constant(kb, n.inputs[1]))) {
    MatMulProblem p;
    p.m = m, p.n = nn, p.k = k;
    p.bValue = n.inputs[1];
    p.a = [&, ta](const std::vector<ExprRef>&, ExprRef i, ExprRef kk) {
      return kb.valueAt(n.inputs[0], Index::ofDims(a, ta ? std::vector<ExprRef>{kk, i}
                                                         : std::vector<ExprRef>{i, kk}));
    };
    p.b = [&, tb](const std::vector<ExprRef>&, ExprRef kk, ExprRef j) {
      return kb.valueAt(n.inputs[1], Index::ofDims(b, tb ? std::vector<ExprRef>{j, kk}
                                                         : std::vector<ExprRef>{kk, j}));
    };
    std::vector<int64_t> outShape = {m, nn};
    p.out = [outShape](const std::vector<ExprRef>&, ExprRef i, ExprRef j) {
      return Index::ofDims(outShape, {i, j});
    };
    p.finish = [&, alpha, beta, hasC, c](const Index& at, ExprRef acc) {
      ExprRef y = mul(floatConst(alpha), acc);
      if (hasC) y = add(y, mul(floatConst(beta), kb.valueAt(n.inputs[2], broadcastIndex(at, c))));
      return y;
    };
    if (auto cd = kb.constantOf(n.inputs[1]); cd && cd->dtype == DType::F32) {
      const float* d = cd->data<float>();
      p.bConst = [d, tb, k, nn](int64_t, int64_t kk, int64_t j) {
        return tb ? d[j * k + kk] : d[kk * nn + j];
      };
    }
    TiledMatMul t(kb, p, sink);
    std::vector<StmtRef> body = t.build();
    return wrapTemps(kb, t, std::move(body));
  }

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
