// generalizeKernel and instantiate: a lockstep walk over several lowerings of
// one kernel. The walk checks that they agree in everything but integers and
// floats, and lists those in a fixed order (an expression shared in the DAG is
// visited once per distinct tuple of pointers, the same way in every pass);
// a second walk rebuilds the kernel with each varying number replaced by its
// form over the `dims` param.
#include "codegen/symbolic/symbolic_kernel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

namespace fuselens {
namespace {

Status differs(const std::string& what) {
  return Status::error("its loop IR changes with the dim (" + what + ")");
}

class Walk {
 public:
  // rebuild: null to collect the numbers; else the kernel whose forms replace them.
  Walk(std::vector<const LoopFunc*> fs, const SymbolicKernel* rebuild, const Buffer* dims)
      : fs_(std::move(fs)), k_(rebuild), dims_(dims) {}

  std::vector<std::vector<int64_t>> ints;  // [slot][sample]
  std::vector<std::vector<double>> floats;

  Expected<StmtRef> stmt(const std::vector<StmtRef>& ss) {
    const Stmt& s0 = *ss[0];
    for (const StmtRef& s : ss)
      if (s->kind != s0.kind || s->var != s0.var || s->forKind != s0.forKind ||
          s->buffer != s0.buffer || s->body.size() != s0.body.size() ||
          bool(s->index) != bool(s0.index) || bool(s->value) != bool(s0.value) ||
          bool(s->runtimeExtent) || bool(s->runtimeExtent) != bool(s0.runtimeExtent))
        return differs("a statement");
    auto out = std::make_shared<Stmt>(s0);
    if (s0.kind == StmtKind::For) {
      std::vector<int64_t> extents;
      for (const StmtRef& s : ss) extents.push_back(s->extent);
      if (auto e = intSlot(extents); !e) {
        return e.status();
      } else if (*e) {
        if (s0.forKind == ForKind::Unrolled) return differs("an unrolled loop's extent");
        out->runtimeExtent = *e;
      }
    }
    for (auto [field, slot] :
         {std::pair{&Stmt::index, &out->index}, std::pair{&Stmt::value, &out->value}}) {
      if (!(s0.*field)) continue;
      std::vector<ExprRef> es;
      for (const StmtRef& s : ss) es.push_back((*s).*field);
      auto e = expr(es);
      if (!e) return e.status();
      *slot = *e;
    }
    for (size_t i = 0; i < s0.body.size(); ++i) {
      std::vector<StmtRef> cs;
      for (const StmtRef& s : ss) cs.push_back(s->body[i]);
      auto c = stmt(cs);
      if (!c) return c.status();
      out->body[i] = *c;
    }
    return StmtRef(out);
  }

 private:
  // Collect: records the values; rebuild: the form's expression when the
  // value varies (null when it does not).
  Expected<ExprRef> intSlot(const std::vector<int64_t>& values) {
    if (!k_) {
      ints.push_back(values);
      return ExprRef();
    }
    const auto& form = k_->intForms[intAt_++];
    if (!form) return ExprRef();
    return form->expr([&](int a) { return load(*dims_, intConst(a)); });
  }

  Expected<ExprRef> expr(const std::vector<ExprRef>& es) {
    std::vector<const Expr*> key;
    for (const ExprRef& e : es) key.push_back(e.get());
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    const Expr& e0 = *es[0];
    for (const ExprRef& e : es)
      if (e->kind != e0.kind || e->type != e0.type || e->var != e0.var || e->buffer != e0.buffer ||
          e->bin != e0.bin || e->un != e0.un || e->cmp != e0.cmp || e->ops.size() != e0.ops.size())
        return differs("an expression");
    ExprRef out = es[0];
    if (e0.kind == ExprKind::IntConst) {
      std::vector<int64_t> v;
      for (const ExprRef& e : es) v.push_back(e->i);
      auto r = intSlot(v);
      if (!r) return r.status();
      if (*r) {
        if (e0.type != DType::I64) return differs("a non-index integer");
        out = *r;
      }
    } else if (e0.kind == ExprKind::FloatConst) {
      if (!k_) {
        std::vector<double> v;
        for (const ExprRef& e : es) v.push_back(e->f);
        floats.push_back(v);
      } else if (const auto& form = k_->floatForms[floatAt_++]) {
        ExprRef n = form->expr([&](int a) { return load(*dims_, intConst(a)); });
        ExprRef r = div(floatConst(1.0, DType::F64), cast(n, DType::F64));
        out = e0.type == DType::F64 ? r : cast(r, e0.type);
      }
    } else if (!e0.ops.empty()) {
      Expr copy = e0;
      bool changed = false;
      for (size_t i = 0; i < e0.ops.size(); ++i) {
        std::vector<ExprRef> os;
        for (const ExprRef& e : es) os.push_back(e->ops[i]);
        auto o = expr(os);
        if (!o) return o.status();
        changed = changed || *o != e0.ops[i];
        copy.ops[i] = *o;
      }
      if (changed) out = std::make_shared<const Expr>(std::move(copy));
    }
    memo_[key] = out;
    return out;
  }

  std::vector<const LoopFunc*> fs_;
  const SymbolicKernel* k_;
  const Buffer* dims_;
  size_t intAt_ = 0, floatAt_ = 0;
  std::map<std::vector<const Expr*>, ExprRef> memo_;
};

bool sameData(const std::shared_ptr<const TensorData>& a,
              const std::shared_ptr<const TensorData>& b) {
  if (a == b) return true;
  if (!a || !b) return false;
  return a->dtype == b->dtype && a->bytes == b->bytes;
}

// Everything but param shapes, temp and local sizes (listed in varyingTemps)
// and the statement tree must agree.
Status sameHeader(const std::vector<const LoopFunc*>& fs, std::set<size_t>& varyingTemps) {
  const LoopFunc& f0 = *fs[0];
  for (const LoopFunc* f : fs) {
    if (f->buffers.size() != f0.buffers.size()) return differs("the number of its buffers");
    if (f->vars.size() != f0.vars.size()) return differs("the number of its variables");
    if (f->params != f0.params || f->numInputs != f0.numInputs ||
        f->prepacked.size() != f0.prepacked.size())
      return differs("its params");
    for (size_t i = 0; i < f0.buffers.size(); ++i) {
      const Buffer &a = f0.buffers[i], &b = f->buffers[i];
      if (a.kind != b.kind || a.dtype != b.dtype || a.shape.size() != b.shape.size())
        return differs("buffer " + a.name);
      bool param = a.kind == BufferKind::Input || a.kind == BufferKind::Output;
      if ((a.kind == BufferKind::Temp || a.kind == BufferKind::Local) && a.shape != b.shape) {
        varyingTemps.insert(i);
        continue;
      }
      if (!param && a.shape != b.shape)
        return Status::error("the size of its " +
                             std::string(a.kind == BufferKind::Constant ? "constant " : "temp ") +
                             a.name + " depends on the dim");
      if (a.kind == BufferKind::Constant && !sameData(a.data, b.data))
        return Status::error("its constant " + a.name + " depends on the dim");
    }
    for (size_t i = 0; i < f0.vars.size(); ++i)
      if (f->vars[i].type != f0.vars[i].type) return differs("variable types");
    for (const auto& [id, data] : f0.prepacked) {
      auto it = f->prepacked.find(id);
      if (it == f->prepacked.end() || !sameData(data, it->second))
        return Status::error("its prepacked operand depends on the dim");
    }
  }
  return Status::ok();
}

// i64 expressions over `dims` (a symbolic kernel's extents), at given dims.
int64_t evalExtent(const ExprRef& e, const std::vector<int64_t>& dims) {
  switch (e->kind) {
    case ExprKind::IntConst:
      return e->i;
    case ExprKind::Load:
      return dims[size_t(e->ops[0]->i)];
    case ExprKind::Binary: {
      int64_t a = evalExtent(e->ops[0], dims), b = evalExtent(e->ops[1], dims);
      switch (e->bin) {
        case BinOp::Add:
          return a + b;
        case BinOp::Sub:
          return a - b;
        case BinOp::Mul:
          return a * b;
        case BinOp::Div:
          return b ? a / b : 0;
        case BinOp::Mod:
          return b ? a % b : 0;
        default:
          return 0;
      }
    }
    default:
      return 0;
  }
}

StmtRef withExtents(const StmtRef& s, const std::vector<int64_t>& dims) {
  auto out = std::make_shared<Stmt>(*s);
  if (s->runtimeExtent) out->extent = std::max<int64_t>(0, evalExtent(s->runtimeExtent, dims));
  for (StmtRef& c : out->body) c = withExtents(c, dims);
  return out;
}

// The forms of the temps and locals whose size varies with the dims.
Status fitSized(const std::vector<const LoopFunc*>& samples, const std::set<size_t>& varying,
                const std::vector<std::vector<int64_t>>& atomRows, SymbolicKernel& k) {
  for (size_t i : varying) {
    SymbolicKernel::SizedBuffer t;
    t.buffer = i;
    t.values = samples[0]->buffers[i].shape;
    for (size_t axis = 0; axis < t.values.size(); ++axis) {
      std::vector<int64_t> v;
      for (const LoopFunc* f : samples) v.push_back(f->buffers[i].shape[axis]);
      if (std::all_of(v.begin(), v.end(), [&](int64_t x) { return x == v[0]; })) {
        t.axes.emplace_back();
        continue;
      }
      auto form = fitForm(atomRows, v);
      if (!form)
        return Status::error(
            "the size of its " +
            std::string(samples[0]->buffers[i].kind == BufferKind::Local ? "local " : "temp ") +
            samples[0]->buffers[i].name + " follows no form of its dims");
      t.axes.push_back(std::move(form));
    }
    k.sized.push_back(std::move(t));
  }
  return Status::ok();
}

// The rebuilt tree with each sized buffer's Allocate reading its slot of
// `dims`: a local's element count (runtimeExtent), a temp's byte offset in
// scratch (index).
StmtRef withSizedAllocs(const StmtRef& s, const std::map<int32_t, ExprRef>& slotOf,
                        const LoopFunc& f) {
  std::shared_ptr<Stmt> out;
  for (size_t i = 0; i < s->body.size(); ++i) {
    StmtRef c = withSizedAllocs(s->body[i], slotOf, f);
    if (c == s->body[i]) continue;
    if (!out) out = std::make_shared<Stmt>(*s);
    out->body[i] = c;
  }
  if (s->kind == StmtKind::Allocate)
    if (auto it = slotOf.find(s->buffer.index); it != slotOf.end()) {
      if (!out) out = std::make_shared<Stmt>(*s);
      (f.buffer(s->buffer).kind == BufferKind::Local ? out->runtimeExtent : out->index) =
          it->second;
    }
  return out ? StmtRef(out) : s;
}

std::string shapeText(const std::vector<std::string>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + dims[i];
  return s + "]";
}

}  // namespace

Expected<SymbolicKernel> generalizeKernel(const std::vector<const LoopFunc*>& samples) {
  if (samples.size() < 3) return Status::error("fewer than 3 samples of it could be lowered");
  std::set<size_t> varyingTemps;
  FL_RETURN_IF_ERROR(sameHeader(samples, varyingTemps));
  SymbolicKernel k;
  const LoopFunc& f0 = *samples[0];
  k.sample = f0;
  // Atoms: the param dims that vary and are no affine form of earlier atoms.
  std::vector<std::vector<int64_t>> atomRows(samples.size());
  std::vector<std::vector<std::string>> shapeTexts(f0.params.size());
  for (size_t p = 0; p < f0.params.size(); ++p) {
    const size_t rank = f0.buffer(f0.params[p]).shape.size();
    for (size_t axis = 0; axis < rank; ++axis) {
      std::vector<int64_t> v;
      for (const LoopFunc* f : samples) v.push_back(f->buffer(f->params[p]).shape[axis]);
      auto form = fitForm(atomRows, v, /*affineOnly=*/true);
      if (!form) {
        k.atoms.push_back({p, axis});
        for (size_t s = 0; s < samples.size(); ++s) atomRows[s].push_back(v[s]);
        form = fitForm(atomRows, v, true);
      }
      shapeTexts[p].push_back(form ? form->str() : "?");
    }
  }
  if (k.atoms.empty()) return Status::error("none of its params depends on the dim");
  FL_RETURN_IF_ERROR(fitSized(samples, varyingTemps, atomRows, k));
  Walk collect(samples, nullptr, nullptr);
  std::vector<StmtRef> bodies;
  for (const LoopFunc* f : samples) bodies.push_back(f->body);
  if (!f0.body) return Status::error("it has no loop nest");
  auto body = collect.stmt(bodies);
  if (!body) return body.status();
  for (const auto& v : collect.ints) {
    k.intValues.push_back(v[0]);
    if (std::all_of(v.begin(), v.end(), [&](int64_t x) { return x == v[0]; })) {
      k.intForms.emplace_back();
      continue;
    }
    auto form = fitForm(atomRows, v);
    if (!form) return Status::error("an integer of its loop IR follows no form of its dims");
    k.intForms.push_back(std::move(form));
    ++k.varying;
  }
  for (const auto& v : collect.floats) {
    k.floatValues.push_back(v[0]);
    if (std::all_of(v.begin(), v.end(),
                    [&](double x) { return std::memcmp(&x, &v[0], sizeof x) == 0; })) {
      k.floatForms.emplace_back();
      continue;
    }
    // 1/n of an integer of the dims: a mean over the dim.
    std::vector<int64_t> n;
    for (double x : v) {
      double r = std::llround(1.0 / x);
      if (!(r >= 1) || float(1.0 / r) != float(x))
        return Status::error("a float constant of its loop IR depends on the dim");
      n.push_back(int64_t(r));
    }
    auto form = fitForm(atomRows, n);
    if (!form) return Status::error("a float constant of its loop IR depends on the dim");
    k.floatForms.push_back(std::move(form));
    ++k.varying;
  }
  // The rebuilt kernel: `dims` joins the inputs.
  k.func = f0;
  BufferId dims = k.func.addBuffer("dims", BufferKind::Input, DType::I64,
                                   {int64_t(k.atoms.size() + k.sized.size())});
  k.dimsParam = f0.numInputs;
  k.func.params.insert(k.func.params.begin() + std::ptrdiff_t(k.dimsParam), dims);
  k.func.numInputs += 1;
  for (size_t p = 0; p < f0.params.size(); ++p)
    k.func.buffers[f0.params[p].index].symbolicShape = shapeText(shapeTexts[p]);
  std::map<int32_t, ExprRef> slotOf;
  for (const auto& t : k.sized) {
    std::vector<std::string> axes;
    for (size_t a = 0; a < t.axes.size(); ++a)
      axes.push_back(t.axes[a] ? t.axes[a]->str() : std::to_string(t.values[a]));
    k.func.buffers[t.buffer].symbolicShape = shapeText(axes);
    slotOf[int32_t(t.buffer)] =
        load(k.func.buffer(dims), intConst(int64_t(k.atoms.size() + slotOf.size())));
  }
  Walk rebuild(samples, &k, &k.func.buffer(dims));
  auto rebuilt = rebuild.stmt(bodies);
  if (!rebuilt) return rebuilt.status();
  k.func.body = withSizedAllocs(*rebuilt, slotOf, k.func);
  return k;
}

namespace {

// The params the graph feeds (not prepacked by the compiler), in order: what
// an instance must agree on with the lowered kernel. A short length may keep a
// MatMul unpacked, which drops a prepacked param; the symbolic kernel brings
// its own packed operand.
std::vector<size_t> graphParams(const LoopFunc& f) {
  std::vector<size_t> out;
  for (size_t p = 0; p < f.params.size(); ++p)
    if (!f.prepacked.count(f.params[p].index)) out.push_back(p);
  return out;
}

}  // namespace

std::vector<int64_t> SymbolicKernel::SizedBuffer::eval(const std::vector<int64_t>& dims) const {
  std::vector<int64_t> shape = values;
  for (size_t a = 0; a < axes.size(); ++a)
    if (axes[a]) shape[a] = std::max<int64_t>(1, axes[a]->eval(dims));
  return shape;
}

Expected<SymbolicInstance> instantiate(const SymbolicKernel& k, const LoopFunc& lowered) {
  const LoopFunc& s = k.sample;
  const auto sp = graphParams(s), lp = graphParams(lowered);
  size_t sampleInputs = 0, loweredInputs = 0;
  for (size_t p : sp) sampleInputs += p < s.numInputs;
  for (size_t p : lp) loweredInputs += p < lowered.numInputs;
  if (sp.size() != lp.size() || sampleInputs != loweredInputs)
    return Status::error("its params differ from the symbolic kernel's");
  std::map<size_t, size_t> toLowered;  // sample param -> lowered param
  for (size_t i = 0; i < sp.size(); ++i) {
    const Buffer &a = s.buffer(s.params[sp[i]]), &b = lowered.buffer(lowered.params[lp[i]]);
    if (a.dtype != b.dtype || a.shape.size() != b.shape.size())
      return Status::error("its params differ from the symbolic kernel's");
    toLowered[sp[i]] = lp[i];
  }
  std::vector<int64_t> dims;
  for (const auto& a : k.atoms) {
    auto it = toLowered.find(a.param);
    if (it == toLowered.end()) return Status::error("a dim of the symbolic kernel has no param");
    dims.push_back(lowered.buffer(lowered.params[it->second]).shape[a.axis]);
  }

  SymbolicInstance out;
  Walk check({&s, &lowered}, nullptr, nullptr);
  std::set<size_t> varyingTemps;
  bool sameShape =
      sameHeader({&s, &lowered}, varyingTemps).isOk() && check.stmt({s.body, lowered.body}).isOk();
  if (sameShape && check.ints.size() == k.intForms.size() &&
      check.floats.size() == k.floatForms.size()) {
    out.verified = true;
    for (size_t i : varyingTemps)
      out.verified = out.verified && std::any_of(k.sized.begin(), k.sized.end(), [&](auto& t) {
                       return t.buffer == i && t.eval(dims) == lowered.buffers[i].shape;
                     });
    for (size_t i = 0; i < k.intForms.size() && out.verified; ++i)
      out.verified =
          check.ints[i][1] == (k.intForms[i] ? k.intForms[i]->eval(dims) : k.intValues[i]);
    for (size_t i = 0; i < k.floatForms.size() && out.verified; ++i)
      out.verified =
          float(check.floats[i][1]) ==
          float(k.floatForms[i] ? 1.0 / double(k.floatForms[i]->eval(dims)) : k.floatValues[i]);
  }
  out.func = k.func;
  out.func.name = lowered.name;
  for (const auto& [p, l] : toLowered) {
    size_t at = p < k.dimsParam ? p : p + 1;
    out.func.buffers[out.func.params[at].index].shape = lowered.buffer(lowered.params[l]).shape;
  }
  // The sized buffers' slots: a local's element count, a temp's byte offset.
  std::vector<int64_t> slots = dims;
  for (const auto& t : k.sized) out.func.buffers[t.buffer].shape = t.eval(dims);
  int64_t scratchBytes = 0;
  const auto scratchAt = scratchLayout(out.func, &scratchBytes);
  for (const auto& t : k.sized) {
    const Buffer& b = out.func.buffers[t.buffer];
    slots.push_back(b.kind == BufferKind::Local ? std::max<int64_t>(1, b.numel())
                                                : scratchAt.at(int32_t(t.buffer)));
  }
  auto data = std::make_shared<TensorData>(
      TensorData::fromVector(DType::I64, {int64_t(slots.size())}, slots));
  out.func.prepacked[out.func.params[k.dimsParam].index] = data;
  if (out.func.body) out.func.body = withExtents(out.func.body, slots);
  return out;
}

}  // namespace fuselens
