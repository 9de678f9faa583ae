// Compute definitions of RNN, GRU (linear_before_reset both ways) and LSTM
// (peepholes, input_forget), with clip, the Sigmoid/Tanh/Relu activations,
// forward/reverse/bidirectional directions, sequence_lens and both layouts.
// A loop over time carries the state, so the whole nest is serial (pinned):
//
//   for dir k (unrolled), for batch b:
//     h = initial_h or 0; c = initial_c or 0            (kernel scratch)
//     for step s: t = reverse ? len-1-s : s  (steps past len: t = s, masked)
//       gates[g] = X[t] . W[g] + Wb[g] (+ h . R[g] + Rb[g], except GRU's h gate)
//       hn, cn = the cell's update of h, c from the gates
//       Y[t] = valid ? hn : 0; if valid: h = hn, c = cn
//     Y_h = h; Y_c = c
// Gate orders are ONNX's: LSTM i, o, f, c; GRU z, r, h.
//
// With constant weights (RNN, LSTM), W and R are packed transposed at compile
// time, [in][G*H] and [H][G*H], so the gates are vectors: a tile of P blocks
// of L gates takes one broadcast of x (or h) and P contiguous weight loads per
// P FMAs, instead of a scalar dot product per gate (silero's LSTM ran at 3
// GFLOP/s). The cell updates and the Y stores are elementwise over the hidden
// units, so they run as vector loops too.
#include "codegen/lower/compute_rnn.h"

#include <algorithm>

#include "codegen/target.h"

namespace fuselens {
namespace {

enum class Cell { Rnn, Gru, Lstm };

StmtRef serial(const Var& v, int64_t extent, std::vector<StmtRef> body) {
  StmtRef s = forLoop(v, extent, std::move(body));
  s->pinned = true;  // state flows between iterations
  return s;
}

ValueId input(const Node& n, size_t i) { return i < n.inputs.size() ? n.inputs[i] : ValueId(); }

using Act = std::function<ExprRef(ExprRef)>;

std::optional<Act> activation(const std::string& name) {
  if (name == "Sigmoid") return Act([](ExprRef x) { return unary(UnOp::Sigmoid, x); });
  if (name == "Tanh") return Act([](ExprRef x) { return unary(UnOp::Tanh, x); });
  if (name == "Relu") return Act([](ExprRef x) { return binary(BinOp::Max, x, floatConst(0)); });
  return std::nullopt;
}

class RnnLowering {
 public:
  RnnLowering(KernelBuilder& kb, const Node& n, const KernelBuilder::Sink& sink)
      : kb_(kb), n_(n), sink_(sink) {
    cell_ = n.op == "RNN" ? Cell::Rnn : n.op == "GRU" ? Cell::Gru : Cell::Lstm;
    G_ = cell_ == Cell::Rnn ? 1 : cell_ == Cell::Gru ? 3 : 4;
  }

  std::vector<StmtRef> build() {
    if (!setup()) return {};
    std::vector<StmtRef> all;
    for (int64_t k = 0; k < dirs_; ++k)
      for (StmtRef& s : direction(k)) all.push_back(std::move(s));
    LoopFunc& fn = kb_.func();
    StmtRef root = seq(std::move(all));
    for (BufferId b : {h_, c_, gates_, hn_, cn_}) root = allocate(fn.buffer(b), {root});
    return {root};
  }

 private:
  bool setup() {
    std::vector<int64_t> x = kb_.shapeOf(n_.inputs[0]), w = kb_.shapeOf(n_.inputs[1]);
    batchFirst_ = n_.attrs.getInt("layout", 0) != 0;
    seq_ = batchFirst_ ? x[1] : x[0];
    batch_ = batchFirst_ ? x[0] : x[1];
    in_ = x[2];
    H_ = n_.attrs.getInt("hidden_size", w[1] / G_);
    std::string dir = n_.attrs.getString("direction", "forward");
    dirs_ = dir == "bidirectional" ? 2 : 1;
    reverseOnly_ = dir == "reverse";
    size_t per = cell_ == Cell::Rnn ? 1 : cell_ == Cell::Gru ? 2 : 3;
    std::vector<std::string> names;
    if (const Attribute* a = n_.attrs.find("activations"))
      if (auto* v = std::get_if<std::vector<std::string>>(a)) names = *v;
    if (names.empty()) {
      std::vector<std::string> dflt = cell_ == Cell::Rnn ? std::vector<std::string>{"Tanh"}
                                      : cell_ == Cell::Gru
                                          ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                          : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
      for (int64_t k = 0; k < dirs_; ++k) names.insert(names.end(), dflt.begin(), dflt.end());
    }
    if (names.size() != per * size_t(dirs_) || dir == "" ||
        (dir != "forward" && dir != "reverse" && dir != "bidirectional") || w[1] != G_ * H_ ||
        w[2] != in_ || w[0] != dirs_)
      return bad("direction, hidden_size, activations or the weight shapes do not agree");
    for (const std::string& s : names) {
      auto f = activation(s);
      if (!f) return bad("activation '" + s + "' has no code generation (Sigmoid, Tanh, Relu do)");
      acts_.push_back(*f);
    }
    if (n_.attrs.find("clip")) clip_ = n_.attrs.getFloat("clip", 0);
    std::vector<int64_t> y = {seq_, dirs_, batch_, H_}, hs = {dirs_, batch_, H_};
    if (batchFirst_) y = {batch_, seq_, dirs_, H_}, hs = {batch_, dirs_, H_};
    for (size_t i = 0; i < n_.outputs.size(); ++i)
      if (kb_.shapeOf(n_.outputs[i]) != (i == 0 ? y : hs))
        return bad("output " + std::to_string(i) + " should have shape " +
                   formatShape(i == 0 ? y : hs));
    yShape_ = y;
    hShape_ = hs;
    LoopFunc& fn = kb_.func();
    auto temp = [&](const char* name, int64_t len) {
      return fn.addBuffer(name + std::to_string(fn.buffers.size()), BufferKind::Temp, DType::F32,
                          {len});
    };
    h_ = temp("h", H_), c_ = temp("c", H_), gates_ = temp("gates", G_ * H_);
    hn_ = temp("hn", H_), cn_ = temp("cn", H_);
    packWeights();
    return true;
  }

  // WT[k][i][g] = W[k][g][i] and RT[k][m][g] = R[k][g][m], when both are
  // constants and the gates fill whole vectors (GRU keeps the scalar gates:
  // its h gate reads R after the reset gate).
  void packWeights() {
    lanes_ = std::max(4, codegenTarget().vectorLanes());
    auto w = kb_.constantOf(n_.inputs[1]), r = kb_.constantOf(n_.inputs[2]);
    if (cell_ == Cell::Gru || !w || !r || (G_ * H_) % lanes_ != 0) return;
    auto transposed = [&](const TensorData& src, int64_t cols, const char* name) {
      const int64_t GH = G_ * H_;
      auto data = std::make_shared<TensorData>(DType::F32, std::vector<int64_t>{dirs_ * cols * GH});
      const float* d = src.data<float>();
      float* o = data->data<float>();
      for (int64_t k = 0; k < dirs_; ++k)
        for (int64_t g = 0; g < GH; ++g)
          for (int64_t i = 0; i < cols; ++i)
            o[(k * cols + i) * GH + g] = d[(k * GH + g) * cols + i];
      return kb_.addPrepacked(name + std::to_string(kb_.func().buffers.size()), data);
    };
    wt_ = transposed(*w, in_, "packed_wt");
    rt_ = transposed(*r, H_, "packed_rt");
    packed_ = true;
  }

  bool bad(const std::string& why) {
    kb_.fail(Status::error(why, nodePlace(n_)));
    return false;
  }

  ExprRef clipped(ExprRef v) const {
    if (!clip_) return v;
    return binary(BinOp::Min, binary(BinOp::Max, v, floatConst(-*clip_)), floatConst(*clip_));
  }
  ExprRef at(ValueId v, ExprRef flat) {
    return kb_.valueAt(v, Index::ofFlat(kb_.shapeOf(v), std::move(flat)));
  }
  ExprRef buf(BufferId b, ExprRef i) { return load(kb_.func().buffer(b), std::move(i)); }
  StmtRef put(BufferId b, ExprRef i, ExprRef v) {
    return store(kb_.func().buffer(b), std::move(i), std::move(v));
  }
  ExprRef c(int64_t v) { return intConst(v); }
  // A bias term of direction k (Wb: part 0, Rb: part 1), 0 without B.
  ExprRef bias(int64_t k, int part, ExprRef g) {
    ValueId b = input(n_, 3);
    if (!b.valid()) return floatConst(0);
    return at(b, add(c((k * 2 + part) * G_ * H_), g));
  }
  // sum over m of vec(m) * R[k, g, m]
  std::vector<StmtRef> hr(int64_t k, ExprRef g, Var acc,
                          const std::function<ExprRef(ExprRef)>& vec) {
    Var m = kb_.newLoopVar();
    ExprRef r = at(n_.inputs[2], add(mul(add(c(k * G_ * H_), g), c(H_)), varRef(m)));
    return {let(acc, floatConst(0)),
            serial(m, H_, {assign(acc, add(varRef(acc), mul(vec(varRef(m)), r)))})};
  }

  std::vector<StmtRef> direction(int64_t k) {
    bool reverse = reverseOnly_ || k == 1;
    const Act* f = &acts_[size_t(k) * (cell_ == Cell::Rnn ? 1 : cell_ == Cell::Gru ? 2 : 3)];
    Var b = kb_.newLoopVar(), s = kb_.newLoopVar(), j0 = kb_.newLoopVar();
    ExprRef bv = varRef(b), sv = varRef(s);
    Var len = kb_.newLocal("len", DType::I64);
    ValueId lens = input(n_, 4), h0 = input(n_, 5), c0 = input(n_, 6);
    auto hAt = [&](ExprRef j) {  // flat position in Y_h / initial_h
      return batchFirst_ ? add(mul(add(mul(bv, c(dirs_)), c(k)), c(H_)), j)
                         : add(mul(add(c(k * batch_), bv), c(H_)), j);
    };
    std::vector<StmtRef> body = {let(len, lens.valid() ? at(lens, bv) : c(seq_))};
    ExprRef j0v = varRef(j0);
    body.push_back(serial(j0, H_,
                          {put(h_, j0v, h0.valid() ? at(h0, hAt(j0v)) : floatConst(0)),
                           put(c_, j0v, c0.valid() ? at(c0, hAt(j0v)) : floatConst(0))}));
    Var valid = kb_.newLocal("valid", DType::Bool), t = kb_.newLocal("t", DType::I64);
    std::vector<StmtRef> step = {
        let(valid, compare(CmpOp::LT, sv, varRef(len))),
        let(t, reverse ? select(varRef(valid), sub(sub(varRef(len), c(1)), sv), sv) : sv)};
    for (StmtRef& st : gates(k, varRef(t), bv)) step.push_back(std::move(st));
    for (StmtRef& st : update(k, f)) step.push_back(std::move(st));
    // Y, and the state carried on, only where the step is inside the sequence.
    Units ju = units();
    ExprRef jv = ju.j;
    std::vector<ExprRef> yi = batchFirst_ ? std::vector<ExprRef>{bv, varRef(t), c(k), jv}
                                          : std::vector<ExprRef>{varRef(t), c(k), bv, jv};
    std::vector<StmtRef> tail = {put(h_, jv, select(varRef(valid), buf(hn_, jv), buf(h_, jv))),
                                 put(c_, jv, select(varRef(valid), buf(cn_, jv), buf(c_, jv)))};
    for (StmtRef& st :
         sink_(Index::ofDims(yShape_, yi), select(varRef(valid), buf(hn_, jv), floatConst(0))))
      tail.push_back(std::move(st));
    step.push_back(unitsLoop(ju, tail));
    body.push_back(serial(s, seq_, step));
    Var j2 = kb_.newLoopVar();
    ExprRef j2v = varRef(j2);
    std::vector<StmtRef> fin;
    Index hi = Index::ofFlat(hShape_, hAt(j2v));
    if (n_.outputs.size() > 1)
      for (StmtRef& st : kb_.storeOutput(n_.outputs[1], hi, buf(h_, j2v)))
        fin.push_back(std::move(st));
    if (n_.outputs.size() > 2)
      for (StmtRef& st : kb_.storeOutput(n_.outputs[2], hi, buf(c_, j2v)))
        fin.push_back(std::move(st));
    if (!fin.empty()) body.push_back(serial(j2, H_, fin));
    return {serial(b, batch_, body)};
  }

  // A loop over the H hidden units as vectors of L lanes (j = jo * L + l), or
  // one vector loop when H is not a multiple of L.
  struct Units {
    Var outer, lane;
    ExprRef j;
  };
  Units units() {
    Units u{kb_.newLoopVar(), kb_.newLoopVar(), nullptr};
    u.j = H_ % lanes_ == 0 ? add(mul(varRef(u.outer), c(lanes_)), varRef(u.lane)) : varRef(u.lane);
    return u;
  }
  StmtRef unitsLoop(const Units& u, std::vector<StmtRef> body) {
    if (H_ % lanes_ != 0) return pinnedLoop(u.lane, H_, ForKind::Vectorized, std::move(body));
    return serial(u.outer, H_ / lanes_,
                  {pinnedLoop(u.lane, lanes_, ForKind::Vectorized, std::move(body))});
  }

  // gates[g] = (X[t, b] . WT[k, :, g] + Wb[g]) + (h . RT[k, :, g] + Rb[g]), P blocks
  // of L gates at a time: per gate the scalar path's sums in its order (x's
  // terms, then h's, each sum apart), so vectors change no rounding.
  std::vector<StmtRef> packedGates(int64_t k, ExprRef xFlat0, Var i) {
    LoopFunc& fn = kb_.func();
    const int64_t GH = G_ * H_, blocks = GH / lanes_;
    int64_t P = codegenTarget().vectorBits >= 512 ? 8 : 4;
    while (blocks % P) --P;
    Var gb = kb_.newLoopVar(), m = kb_.newLoopVar();
    BufferId accId = fn.addBuffer("gacc" + std::to_string(fn.buffers.size()), BufferKind::Local,
                                  DType::F32, {2 * P * lanes_});
    // Copies, not references: adding buffers moves fn.buffers.
    const Buffer acc = fn.buffer(accId), wt = fn.buffer(wt_), rt = fn.buffer(rt_);
    const int64_t hPart = P * lanes_;  // acc: x's sums, then h's
    auto tile = [&](const std::function<std::vector<StmtRef>(ExprRef, ExprRef)>& body) {
      Var p = kb_.newLoopVar(), l = kb_.newLoopVar();
      ExprRef g = add(mul(add(mul(varRef(gb), c(P)), varRef(p)), c(lanes_)), varRef(l));
      ExprRef a = add(mul(varRef(p), c(lanes_)), varRef(l));
      return pinnedLoop(p, P, ForKind::Unrolled,
                        {pinnedLoop(l, lanes_, ForKind::Vectorized, body(g, a))});
    };
    std::vector<StmtRef> body;
    body.push_back(tile([&](ExprRef, ExprRef a) {
      return std::vector<StmtRef>{store(acc, a, floatConst(0)),
                                  store(acc, add(a, c(hPart)), floatConst(0))};
    }));
    ExprRef xv = at(n_.inputs[0], xFlat0);
    body.push_back(serial(i, in_, {tile([&](ExprRef g, ExprRef a) {
                            ExprRef wv = load(wt, add(mul(add(c(k * in_), varRef(i)), c(GH)), g));
                            return std::vector<StmtRef>{
                                store(acc, a, add(load(acc, a), mul(xv, wv)))};
                          })}));
    body.push_back(serial(m, H_, {tile([&](ExprRef g, ExprRef a) {
                            ExprRef rv = load(rt, add(mul(add(c(k * H_), varRef(m)), c(GH)), g));
                            ExprRef ah = add(a, c(hPart));
                            return std::vector<StmtRef>{
                                store(acc, ah, add(load(acc, ah), mul(buf(h_, varRef(m)), rv)))};
                          })}));
    body.push_back(tile([&](ExprRef g, ExprRef a) {
      ExprRef sx = add(load(acc, a), bias(k, 0, g));
      ExprRef sh = add(load(acc, add(a, c(hPart))), bias(k, 1, g));
      return std::vector<StmtRef>{put(gates_, g, add(sx, sh))};
    }));
    return {serial(gb, blocks / P, {allocate(acc, {seq(std::move(body))})})};
  }

  // gates[g] = X[t, b] . W[k, g] + Wb[g], plus h . R[k, g] + Rb[g] except for GRU's h gate.
  std::vector<StmtRef> gates(int64_t k, ExprRef t, ExprRef b) {
    if (packed_) {
      Var i = kb_.newLoopVar();
      ExprRef xFlat = batchFirst_ ? add(mul(add(mul(b, c(seq_)), t), c(in_)), varRef(i))
                                  : add(mul(add(mul(t, c(batch_)), b), c(in_)), varRef(i));
      return packedGates(k, xFlat, i);
    }
    Var g = kb_.newLoopVar(), i = kb_.newLoopVar();
    ExprRef gv = varRef(g);
    ExprRef xFlat = batchFirst_ ? add(mul(add(mul(b, c(seq_)), t), c(in_)), varRef(i))
                                : add(mul(add(mul(t, c(batch_)), b), c(in_)), varRef(i));
    ExprRef wv = at(n_.inputs[1], add(mul(add(c(k * G_ * H_), gv), c(in_)), varRef(i)));
    Var acc = kb_.newLocal("acc"), racc = kb_.newLocal("racc");
    std::vector<StmtRef> inner = {
        let(acc, floatConst(0)),
        serial(i, in_, {assign(acc, add(varRef(acc), mul(at(n_.inputs[0], xFlat), wv)))})};
    for (StmtRef& st : hr(k, gv, racc, [&](ExprRef m) { return buf(h_, m); })) inner.push_back(st);
    ExprRef rec = add(varRef(racc), bias(k, 1, gv));
    if (cell_ == Cell::Gru)  // the h gate adds its recurrence after the reset gate
      rec = select(compare(CmpOp::LT, gv, c(2 * H_)), rec, floatConst(0));
    inner.push_back(put(gates_, gv, add(add(varRef(acc), bias(k, 0, gv)), rec)));
    return {serial(g, G_ * H_, inner)};
  }

  std::vector<StmtRef> update(int64_t k, const Act* f) {
    Var j = kb_.newLoopVar();
    ExprRef jv = varRef(j);
    Units u1 = units(), u2 = units();
    auto gate = [&](int64_t which) { return buf(gates_, add(c(which * H_), jv)); };
    if (cell_ == Cell::Rnn) return {serial(j, H_, {put(hn_, jv, f[0](clipped(gate(0))))})};
    if (cell_ == Cell::Gru) {
      // z and r in place, then the h gate from r and the previous h.
      std::vector<StmtRef> out = {serial(j, H_,
                                         {put(gates_, jv, f[0](clipped(gate(0)))),
                                          put(gates_, add(c(H_), jv), f[0](clipped(gate(1))))})};
      Var j2 = kb_.newLoopVar(), racc = kb_.newLocal("racc");
      ExprRef j2v = varRef(j2), g2 = add(c(2 * H_), j2v);
      ExprRef z = buf(gates_, j2v), r = buf(gates_, add(c(H_), j2v));
      bool lbr = n_.attrs.getInt("linear_before_reset", 0) != 0;
      std::vector<StmtRef> body = lbr ? hr(k, g2, racc, [&](ExprRef m) { return buf(h_, m); })
                                      : hr(k, g2, racc, [&](ExprRef m) {
                                          return mul(buf(gates_, add(c(H_), m)), buf(h_, m));
                                        });
      ExprRef pre = lbr ? add(buf(gates_, g2), mul(r, add(varRef(racc), bias(k, 1, g2))))
                        : add(add(buf(gates_, g2), varRef(racc)), bias(k, 1, g2));
      ExprRef ht = f[1](clipped(pre));
      body.push_back(put(hn_, j2v, add(mul(sub(floatConst(1), z), ht), mul(z, buf(h_, j2v)))));
      out.push_back(serial(j2, H_, body));
      return out;
    }
    // LSTM: gates i, o, f, c; peepholes P[k] = (i, o, f).
    ValueId p = input(n_, 7);
    jv = u1.j;
    auto peep = [&](int64_t which, ExprRef jj) {
      return p.valid() ? at(p, add(c(k * 3 * H_ + which * H_), jj)) : floatConst(0);
    };
    ExprRef gi = f[0](clipped(add(gate(0), mul(peep(0, jv), buf(c_, jv)))));
    Var giv = kb_.newLocal("gi");
    ExprRef gf = n_.attrs.getInt("input_forget", 0) != 0
                     ? sub(floatConst(1), varRef(giv))
                     : f[0](clipped(add(gate(2), mul(peep(2, jv), buf(c_, jv)))));
    ExprRef gc = f[1](clipped(gate(3)));
    std::vector<StmtRef> out = {unitsLoop(
        u1, {let(giv, gi), put(cn_, jv, add(mul(gf, buf(c_, jv)), mul(varRef(giv), gc)))})};
    ExprRef j2v = u2.j;
    ExprRef go = f[0](clipped(add(buf(gates_, add(c(H_), j2v)), mul(peep(1, j2v), buf(cn_, j2v)))));
    out.push_back(unitsLoop(u2, {put(hn_, j2v, mul(go, f[2](buf(cn_, j2v))))}));
    return out;
  }

  KernelBuilder& kb_;
  const Node& n_;
  const KernelBuilder::Sink& sink_;
  Cell cell_;
  int64_t G_ = 1, H_ = 0, seq_ = 0, batch_ = 0, in_ = 0, dirs_ = 1;
  bool batchFirst_ = false, reverseOnly_ = false;
  std::optional<double> clip_;
  std::vector<Act> acts_;
  std::vector<int64_t> yShape_, hShape_;
  BufferId h_, c_, gates_, hn_, cn_;
  int64_t lanes_ = 16;
  bool packed_ = false;  // W and R packed transposed (wt_, rt_)
  BufferId wt_, rt_;
};

}  // namespace

bool isRecurrentOp(const std::string& op) { return op == "RNN" || op == "GRU" || op == "LSTM"; }

Status checkRecurrentOp(const Graph& body, const Node& n) {
  size_t maxIn = n.op == "LSTM" ? 8 : 6, maxOut = n.op == "LSTM" ? 3 : 2;
  if (n.inputs.size() < 3 || n.inputs.size() > maxIn || n.outputs.empty() ||
      n.outputs.size() > maxOut)
    return Status::error(n.op + " has " + std::to_string(n.inputs.size()) + " inputs and " +
                             std::to_string(n.outputs.size()) + " outputs",
                         nodePlace(n));
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (!n.inputs[i].valid()) {
      if (i < 3) return Status::error("input " + std::to_string(i) + " is missing", nodePlace(n));
      continue;
    }
    const Value& v = body.value(n.inputs[i]);
    bool intOk = i == 4 && (v.type.dtype == DType::I32 || v.type.dtype == DType::I64);
    if (!v.type.rankKnown || !v.type.isStatic() || (v.type.dtype != DType::F32 && !intOk))
      return Status::error("input '" + v.name + "' is " + v.type.str() +
                               "; code generation needs static f32 tensors (i32/i64 lengths)",
                           nodePlace(n));
  }
  for (ValueId o : n.outputs) {
    if (!o.valid()) return Status::error("an omitted output has no code generation", nodePlace(n));
    const Value& v = body.value(o);
    if (!v.type.rankKnown || !v.type.isStatic() || v.type.dtype != DType::F32)
      return Status::error("output '" + v.name + "' must be a static f32 tensor", nodePlace(n));
  }
  if (body.value(n.inputs[0]).type.rank() != 3) return Status::error("X must be 3-D", nodePlace(n));
  return Status::ok();
}

std::vector<StmtRef> lowerRecurrent(KernelBuilder& kb, const Node& n,
                                    const KernelBuilder::Sink& sink) {
  return RnnLowering(kb, n, sink).build();
}

}  // namespace fuselens
