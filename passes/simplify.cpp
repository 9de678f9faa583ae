// simplify: the rewrite table. Each row is {name, match, rewrite}:
//
//   match    reads the graph (const) at one node and returns a Match: either a
//            value the node's output is forwarded to, or a replacement node
//            (op, operands, attributes), plus the sentence the log shows;
//   rewrite  one of two appliers, forward() or replace(), which change the
//            graph only through the Rewriter.
//
// The driver tries the rows in table order at every node, in topological
// order, and sweeps again until a sweep applies nothing.
#include "passes/simplify.h"

#include <cmath>

#include "core/ops/registry.h"
#include "passes/rewriter.h"

namespace fuselens {
namespace {

// An input of a replacement node: an existing value or a new constant.
struct Operand {
  ValueId value;
  std::shared_ptr<const TensorData> data;  // set: a new constant named `name`
  std::string name;
};

struct Match {
  NodeId root;
  ValueId forwardTo;  // forwarding rows: the root's output becomes this value
  std::string op;     // replacing rows: the node that takes the root's place
  std::vector<Operand> operands;
  Attributes attrs;
  std::string nodeName;              // empty: the root's name
  std::vector<NodeId> alsoReplaces;  // other nodes the replacement stands for (origins)
  std::string sentence;
};

using MatchFn = std::optional<Match> (*)(const Graph&, const Node&);
using RewriteFn = void (*)(Rewriter&, const Match&);

struct Row {
  const char* name;
  MatchFn match;
  RewriteFn rewrite;
};

// ---------------------------------------------------------------- helpers

std::string label(const Node& n) { return n.op + " '" + n.name + "'"; }
bool isOp(const Node& n, const char* op) { return n.domain.empty() && n.op == op; }
const TensorType& typeOf(const Graph& g, ValueId v) { return g.value(v).type; }

const Node* producerOf(const Graph& g, ValueId v, const char* op) {
  if (!v.valid() || !g.value(v).producer.valid()) return nullptr;
  const Node& p = g.node(g.value(v).producer);
  return isOp(p, op) ? &p : nullptr;
}

bool isUsed(const Graph& g, ValueId v) { return !g.value(v).users.empty() || g.isGraphOutput(v); }

// Only output 0 is read: the node can be replaced by one single-output node.
bool onlyFirstOutputUsed(const Graph& g, const Node& n) {
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (isUsed(g, n.outputs[i])) return false;
  return !n.outputs.empty();
}

// Every dim is a number or a named symbol, so equal types mean equal shapes at run time.
bool fullyKnown(const TensorType& t) {
  if (!t.rankKnown) return false;
  for (const Dim& d : t.shape)
    if (!d.isStatic() && d.symbol.empty()) return false;
  return true;
}

bool isFloatConstant(const TensorData* t) {
  return t && (t->dtype == DType::F32 || t->dtype == DType::F64);
}

std::vector<double> valuesOf(const TensorData& t) {
  std::vector<double> v(size_t(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[size_t(i)] = t.at(i);
  return v;
}

std::shared_ptr<const TensorData> intTensor(const std::vector<int64_t>& v) {
  return std::make_shared<TensorData>(TensorData::fromVector(DType::I64, {int64_t(v.size())}, v));
}

std::optional<std::vector<int64_t>> constInts(const Graph& g, ValueId v) {
  const TensorData* t = constantOf(g, v);
  if (!t || (t->dtype != DType::I64 && t->dtype != DType::I32)) return {};
  std::vector<int64_t> out;
  for (int64_t i = 0; i < t->numel(); ++i) out.push_back(int64_t(t->at(i)));
  return out;
}

// Transpose's permutation: the attribute, or the reversed dims when it is absent.
std::optional<std::vector<int64_t>> permOf(const Graph& g, const Node& t) {
  if (auto p = t.attrs.getInts("perm")) return p;
  const TensorType& in = typeOf(g, t.inputs[0]);
  if (!in.rankKnown) return {};
  std::vector<int64_t> p;
  for (int64_t i = int64_t(in.rank()) - 1; i >= 0; --i) p.push_back(i);
  return p;
}

bool isIdentityPerm(const std::vector<int64_t>& p) {
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] != int64_t(i)) return false;
  return true;
}

std::string permStr(const std::vector<int64_t>& p) {
  std::string s = "[";
  for (size_t i = 0; i < p.size(); ++i) s += (i ? "," : "") + std::to_string(p[i]);
  return s + "]";
}

// A forwarding match: the node's output is replaced by `to`, which must have the
// same type, and the node's output must not be a graph output.
std::optional<Match> forwardTo(const Graph& g, const Node& n, ValueId to, std::string sentence) {
  if (!to.valid() || !onlyFirstOutputUsed(g, n) || !canForward(g, n.outputs[0])) return {};
  if (typeOf(g, to) != typeOf(g, n.outputs[0])) return {};
  Match m;
  m.root = n.id;
  m.forwardTo = to;
  m.sentence = std::move(sentence);
  return m;
}

std::optional<Match> replaceBy(const Graph& g, const Node& n, std::string op,
                               std::vector<Operand> operands, Attributes attrs,
                               std::string sentence) {
  if (!onlyFirstOutputUsed(g, n)) return {};
  Match m;
  m.root = n.id;
  m.op = std::move(op);
  m.operands = std::move(operands);
  m.attrs = std::move(attrs);
  m.sentence = std::move(sentence);
  return m;
}

// x (op) c -> x when every element of the constant c is `unit`; `commutes`
// also tries c (op) x.
std::optional<Match> neutral(const Graph& g, const Node& n, const char* op, double unit,
                             bool commutes, const char* verb) {
  if (!isOp(n, op) || n.inputs.size() != 2) return {};
  for (int side = 1; side >= (commutes ? 0 : 1); --side) {
    const TensorData* c = constantOf(g, n.inputs[size_t(side)]);
    if (!c || !allEqual(*c, unit)) continue;
    std::string what = std::string(verb) + " a constant " + (unit == 0 ? "0" : "1");
    if (auto m = forwardTo(g, n, n.inputs[size_t(1 - side)], label(n) + " " + what)) return m;
  }
  return {};
}

// ---------------------------------------------------------------- rows

// Identity(x) -> x
std::optional<Match> identity(const Graph& g, const Node& n) {
  if (!isOp(n, "Identity") || n.inputs.empty()) return {};
  return forwardTo(g, n, n.inputs[0], label(n) + " passes its input through");
}

// Dropout(x) -> x   (inference: training_mode absent or false, mask unused)
std::optional<Match> dropout(const Graph& g, const Node& n) {
  if (!isOp(n, "Dropout") || n.inputs.empty()) return {};
  if (n.inputs.size() > 2 && n.inputs[2].valid()) {
    const TensorData* training = constantOf(g, n.inputs[2]);
    if (!training || !allEqual(*training, 0)) return {};
  }
  return forwardTo(g, n, n.inputs[0], label(n) + " is the identity at inference");
}

// x*1 -> x, 1*x -> x
std::optional<Match> mulOne(const Graph& g, const Node& n) {
  return neutral(g, n, "Mul", 1, true, "multiplies by");
}
// x+0 -> x, 0+x -> x
std::optional<Match> addZero(const Graph& g, const Node& n) {
  return neutral(g, n, "Add", 0, true, "adds");
}
// x-0 -> x
std::optional<Match> subZero(const Graph& g, const Node& n) {
  return neutral(g, n, "Sub", 0, false, "subtracts");
}
// x/1 -> x
std::optional<Match> divOne(const Graph& g, const Node& n) {
  return neutral(g, n, "Div", 1, false, "divides by");
}

// Reshape(x) -> x when the shape does not change
std::optional<Match> reshapeNoop(const Graph& g, const Node& n) {
  if (!isOp(n, "Reshape") || n.inputs.empty() || !fullyKnown(typeOf(g, n.inputs[0]))) return {};
  return forwardTo(g, n, n.inputs[0],
                   label(n) + " keeps the shape " + typeOf(g, n.inputs[0]).str());
}

// Reshape(Reshape(x, a), b) -> Reshape(x, b)   (b made explicit when it copies dims with 0)
std::optional<Match> reshapeReshape(const Graph& g, const Node& n) {
  if (!isOp(n, "Reshape") || n.inputs.size() < 2) return {};
  const Node* inner = producerOf(g, n.inputs[0], "Reshape");
  if (!inner) return {};
  const TensorType& out = typeOf(g, n.outputs[0]);
  Operand shape{n.inputs[1], nullptr, {}};
  Attributes attrs = n.attrs;
  auto target = constInts(g, n.inputs[1]);
  bool copiesDims = !target || (n.attrs.getInt("allowzero", 0) == 0 &&
                                std::find(target->begin(), target->end(), 0) != target->end());
  if (copiesDims) {  // a 0 copied the inner shape's dim: spell the result out instead
    auto dims = out.staticShape();
    if (!dims || std::find(dims->begin(), dims->end(), 0) != dims->end()) return {};
    shape = Operand{{}, intTensor(*dims), g.value(n.outputs[0]).name + "_shape"};
    attrs.erase("allowzero");
  }
  auto m = replaceBy(g, n, "Reshape", {{inner->inputs[0], nullptr, {}}, shape}, attrs,
                     label(*inner) + " then " + label(n) + " is one reshape to " + out.str());
  if (m) m->alsoReplaces = {inner->id};
  return m;
}

// Transpose(x, perm=identity) -> x
std::optional<Match> transposeIdentity(const Graph& g, const Node& n) {
  if (!isOp(n, "Transpose") || n.inputs.empty()) return {};
  auto p = permOf(g, n);
  if (!p || !isIdentityPerm(*p)) return {};
  return forwardTo(g, n, n.inputs[0], label(n) + " has the identity permutation " + permStr(*p));
}

// Transpose(Transpose(x, p), q) -> Transpose(x, p[q[i]]), or x when that is the identity
std::optional<Match> transposeTranspose(const Graph& g, const Node& n) {
  if (!isOp(n, "Transpose") || n.inputs.empty()) return {};
  const Node* inner = producerOf(g, n.inputs[0], "Transpose");
  if (!inner) return {};
  auto p = permOf(g, *inner), q = permOf(g, n);
  if (!p || !q || p->size() != q->size()) return {};
  std::vector<int64_t> c;
  for (int64_t i : *q) {
    if (i < 0 || i >= int64_t(p->size())) return {};
    c.push_back((*p)[size_t(i)]);
  }
  std::string both = label(*inner) + " then " + label(n);
  if (isIdentityPerm(c)) return forwardTo(g, n, inner->inputs[0], both + " cancel out");
  Attributes attrs;
  attrs.set("perm", c);
  auto m = replaceBy(g, n, "Transpose", {{inner->inputs[0], nullptr, {}}}, attrs,
                     both + " compose to one transpose with perm " + permStr(c));
  if (m) m->alsoReplaces = {inner->id};
  return m;
}

// Unsqueeze(Squeeze(x)) -> x and Squeeze(Unsqueeze(x)) -> x when the shape comes back
std::optional<Match> squeezePair(const Graph& g, const Node& n) {
  bool unsq = isOp(n, "Unsqueeze");
  if ((!unsq && !isOp(n, "Squeeze")) || n.inputs.empty()) return {};
  const Node* inner = producerOf(g, n.inputs[0], unsq ? "Squeeze" : "Unsqueeze");
  if (!inner || inner->inputs.empty() || !fullyKnown(typeOf(g, inner->inputs[0]))) return {};
  return forwardTo(g, n, inner->inputs[0],
                   label(*inner) + " then " + label(n) + " give back the shape " +
                       typeOf(g, inner->inputs[0]).str());
}

// Cast(x, to=dtype(x)) -> x
std::optional<Match> castNoop(const Graph& g, const Node& n) {
  if (!isOp(n, "Cast") || n.inputs.empty()) return {};
  return forwardTo(g, n, n.inputs[0],
                   label(n) + " casts to " + std::string(dtypeName(typeOf(g, n.inputs[0]).dtype)) +
                       ", the type it already has");
}

// Slice(x) -> x when it keeps the shape and every step is positive: a
// forward slice that keeps d of d elements starts at 0 with step 1 (a negative
// step keeps the shape too, but reverses).
std::optional<Match> sliceNoop(const Graph& g, const Node& n) {
  if (!isOp(n, "Slice") || n.inputs.empty() || !fullyKnown(typeOf(g, n.inputs[0]))) return {};
  if (n.inputs.size() > 4 && n.inputs[4].valid()) {
    auto steps = constInts(g, n.inputs[4]);
    if (!steps) return {};
    for (int64_t s : *steps)
      if (s <= 0) return {};
  }
  return forwardTo(g, n, n.inputs[0], label(n) + " keeps all of " + typeOf(g, n.inputs[0]).str());
}

// x - c -> x + (-c)   (floats: negation is exact)
std::optional<Match> subConst(const Graph& g, const Node& n) {
  if (!isOp(n, "Sub") || n.inputs.size() != 2) return {};
  const TensorData* c = constantOf(g, n.inputs[1]);
  if (!isFloatConstant(c)) return {};
  std::vector<double> v = valuesOf(*c);
  for (double& x : v) x = -x;
  Operand neg{{}, floatTensor(c->dtype, c->shape, v), g.value(n.inputs[1]).name + "_neg"};
  return replaceBy(g, n, "Add", {{n.inputs[0], nullptr, {}}, neg}, {},
                   label(n) + " subtracts a constant: adding its negation is exact");
}

// x / 2^k -> x * 2^-k   (floats, every element a power of two with a normal reciprocal)
std::optional<Match> divPow2(const Graph& g, const Node& n) {
  if (!isOp(n, "Div") || n.inputs.size() != 2) return {};
  const TensorData* c = constantOf(g, n.inputs[1]);
  if (!isFloatConstant(c)) return {};
  int maxExp = c->dtype == DType::F32 ? 126 : 1022;
  std::vector<double> v = valuesOf(*c);
  for (double& x : v) {
    int e = 0;
    if (!std::isfinite(x) || std::fabs(std::frexp(x, &e)) != 0.5 || std::abs(e - 1) > maxExp)
      return {};
    x = 1.0 / x;
  }
  Operand rcp{{}, floatTensor(c->dtype, c->shape, v), g.value(n.inputs[1]).name + "_rcp"};
  return replaceBy(
      g, n, "Mul", {{n.inputs[0], nullptr, {}}, rcp}, {},
      label(n) + " divides by powers of two: multiplying by their reciprocals is exact");
}

// BatchNormalization at inference as y = x*s + t per channel, when its
// parameters are float constants of `channels` elements and of dtype `dt`.
struct BnAffine {
  std::vector<double> s, t;
};
std::optional<BnAffine> bnAffine(const Graph& g, const Node& bn, int64_t channels, DType dt) {
  if (bn.inputs.size() < 5 || bn.attrs.getInt("training_mode", 0) != 0) return {};
  std::vector<std::vector<double>> p;  // scale, bias, mean, var
  for (size_t i = 1; i < 5; ++i) {
    const TensorData* c = constantOf(g, bn.inputs[i]);
    if (!isFloatConstant(c) || c->dtype != dt || c->numel() != channels) return {};
    p.push_back(valuesOf(*c));
  }
  double eps = bn.attrs.getFloat("epsilon", 1e-5);
  BnAffine a;
  for (int64_t k = 0; k < channels; ++k) {
    double s = p[0][size_t(k)] / std::sqrt(p[3][size_t(k)] + eps);
    a.s.push_back(s);
    a.t.push_back(p[1][size_t(k)] - p[2][size_t(k)] * s);
  }
  return a;
}

// The producer of BN's input when it is `op`, read by the BN alone.
const Node* soleProducer(const Graph& g, const Node& bn, const char* op) {
  if (!isOp(bn, "BatchNormalization") || bn.inputs.size() < 5) return nullptr;
  const Node* p = producerOf(g, bn.inputs[0], op);
  if (!p || g.value(bn.inputs[0]).users.size() != 1 || g.isGraphOutput(bn.inputs[0]))
    return nullptr;
  return p;
}

// BatchNormalization(Conv(x, W, b)) -> Conv(x, W*s, b*s + t)
std::optional<Match> convBn(const Graph& g, const Node& n) {
  const Node* conv = soleProducer(g, n, "Conv");
  if (!conv || conv->inputs.size() < 2) return {};
  const TensorData* w = constantOf(g, conv->inputs[1]);
  if (!isFloatConstant(w) || w->rank() < 2) return {};
  const TensorData* b =
      conv->inputs.size() > 2 && conv->inputs[2].valid() ? constantOf(g, conv->inputs[2]) : nullptr;
  if (conv->inputs.size() > 2 && conv->inputs[2].valid() && (!b || b->dtype != w->dtype)) return {};
  int64_t m = w->shape[0], per = w->numel() / std::max<int64_t>(m, 1);
  auto bn = bnAffine(g, n, m, w->dtype);
  if (!bn) return {};
  std::vector<double> wv = valuesOf(*w), bv(size_t(m), 0.0);
  if (b) bv = valuesOf(*b);
  for (int64_t i = 0; i < w->numel(); ++i) wv[size_t(i)] *= bn->s[size_t(i / per)];
  for (int64_t k = 0; k < m; ++k)
    bv[size_t(k)] = bv[size_t(k)] * bn->s[size_t(k)] + bn->t[size_t(k)];
  auto r =
      replaceBy(g, n, "Conv",
                {{conv->inputs[0], nullptr, {}},
                 {{}, floatTensor(w->dtype, w->shape, wv), g.value(conv->inputs[1]).name + "_bn"},
                 {{}, floatTensor(w->dtype, {m}, bv), conv->name + "_bias_bn"}},
                conv->attrs, label(n) + " folds into the weights and bias of " + label(*conv));
  if (r) r->nodeName = conv->name, r->alsoReplaces = {conv->id};
  return r;
}

// BatchNormalization(Gemm(a, B, C)) -> Gemm(a, B*s, beta*C*s + t) with beta = 1
std::optional<Match> gemmBn(const Graph& g, const Node& n) {
  const Node* gemm = soleProducer(g, n, "Gemm");
  if (!gemm || gemm->inputs.size() < 2) return {};
  const TensorData* bw = constantOf(g, gemm->inputs[1]);
  if (!isFloatConstant(bw) || bw->rank() != 2) return {};
  bool transB = gemm->attrs.getInt("transB", 0) != 0;
  int64_t rows = bw->shape[0], cols = bw->shape[1], channels = transB ? rows : cols;
  const TensorData* c =
      gemm->inputs.size() > 2 && gemm->inputs[2].valid() ? constantOf(g, gemm->inputs[2]) : nullptr;
  if (gemm->inputs.size() > 2 && gemm->inputs[2].valid()) {
    if (!c || c->dtype != bw->dtype || (c->numel() != 1 && c->numel() != channels)) return {};
    if (c->rank() > 2 || (c->rank() == 2 && c->shape[0] != 1)) return {};
  }
  auto bn = bnAffine(g, n, channels, bw->dtype);
  if (!bn) return {};
  std::vector<double> wv = valuesOf(*bw), cv(size_t(channels), 0.0);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) wv[size_t(i * cols + j)] *= bn->s[size_t(transB ? i : j)];
  double beta = gemm->attrs.getFloat("beta", 1.0);
  for (int64_t k = 0; k < channels; ++k) {
    double ck = c ? c->at(c->numel() == 1 ? 0 : k) * beta : 0.0;
    cv[size_t(k)] = ck * bn->s[size_t(k)] + bn->t[size_t(k)];
  }
  Attributes attrs = gemm->attrs;
  attrs.set("beta", 1.0);
  auto r =
      replaceBy(g, n, "Gemm",
                {{gemm->inputs[0], nullptr, {}},
                 {{}, floatTensor(bw->dtype, bw->shape, wv), g.value(gemm->inputs[1]).name + "_bn"},
                 {{}, floatTensor(bw->dtype, {channels}, cv), gemm->name + "_bias_bn"}},
                attrs, label(n) + " folds into the weights and bias of " + label(*gemm));
  if (r) r->nodeName = gemm->name, r->alsoReplaces = {gemm->id};
  return r;
}

// ---------------------------------------------------------------- appliers

void forward(Rewriter& rw, const Match& m) {
  rw.replaceValue(rw.graph().node(m.root).outputs[0], m.forwardTo);
  rw.eraseIfDead(m.root);
}

// A replacing row may still forward when its result simplifies to a value
// (transposes that cancel), so replace() also takes forwarding matches.
void replace(Rewriter& rw, const Match& m) {
  if (m.forwardTo.valid()) return forward(rw, m);
  const Node root = rw.graph().node(m.root);
  std::vector<ValueId> ins;
  for (const Operand& o : m.operands)
    ins.push_back(o.data ? rw.addConstant(freshName(rw.graph(), o.name), o.data) : o.value);
  NodeId id = rw.addNodeFor(root, m.op, ins, m.attrs, {rw.graph().value(root.outputs[0]).type});
  for (NodeId other : m.alsoReplaces) rw.addOrigins(id, rw.graph().node(other).origins);
  if (!m.nodeName.empty()) rw.rename(id, m.nodeName);
  rw.replaceValue(root.outputs[0], rw.graph().node(id).outputs[0]);
  rw.eraseIfDead(m.root);
}

// The table. Order matters: the cheap forwarding rows come first, so x-0 is
// removed before it could become x+(-0).
const Row kRows[] = {
    {"identity", identity, forward},                     // Identity(x) -> x
    {"dropout", dropout, forward},                       // Dropout(x) -> x at inference
    {"mul-one", mulOne, forward},                        // x*1 -> x
    {"add-zero", addZero, forward},                      // x+0 -> x
    {"sub-zero", subZero, forward},                      // x-0 -> x
    {"div-one", divOne, forward},                        // x/1 -> x
    {"reshape-noop", reshapeNoop, forward},              // Reshape(x) -> x, same shape
    {"reshape-reshape", reshapeReshape, replace},        // Reshape(Reshape(x)) -> Reshape(x)
    {"transpose-identity", transposeIdentity, forward},  // Transpose(x, [0,1,..]) -> x
    {"transpose-transpose", transposeTranspose,
     replace},                                    // Transpose(Transpose(x,p),q) -> Transpose(x,p.q)
    {"slice-noop", sliceNoop, forward},           // Slice(x) -> x, all of it in order
    {"squeeze-unsqueeze", squeezePair, forward},  // Unsqueeze(Squeeze(x)) -> x, and back
    {"cast-noop", castNoop, forward},             // Cast(x: T, to=T) -> x
    {"sub-const-to-add", subConst, replace},      // x - c -> x + (-c)
    {"div-pow2-to-mul", divPow2, replace},        // x / 2^k -> x * 2^-k
    {"conv-bn-fold", convBn, replace},            // BN(Conv(x,W,b)) -> Conv(x,W',b')
    {"gemm-bn-fold", gemmBn, replace},            // BN(Gemm(a,B,C)) -> Gemm(a,B',C')
};

constexpr int kMaxSweeps = 16;

}  // namespace

std::vector<std::string> simplifyRuleNames() {
  std::vector<std::string> names;
  for (const Row& r : kRows) names.push_back(r.name);
  return names;
}

PassResult SimplifyPass::run(Graph& g, PassContext& ctx) {
  Rewriter rw(g);
  for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
    if (ctx.cancel.cancelled()) return PassResult::failed(Status::error("cancelled", "simplify"));
    auto order = g.topoOrder();
    if (!order) return PassResult::failed(Status::error("the graph has a cycle", "simplify"));
    int64_t before = rw.count();
    for (NodeId id : *order) {
      if (!g.hasNode(id)) continue;
      for (const Row& row : kRows) {
        auto m = row.match(g, g.node(id));
        if (!m) continue;
        const Node at = g.node(id);
        row.rewrite(rw, *m);
        rw.log(row.name, at, m->sentence);
        break;
      }
    }
    if (rw.count() == before) break;
  }
  PassResult r;
  rw.finish(r);
  return r;
}

}  // namespace fuselens
