// The GPU schedule for elementwise and injective stages: a parallel loop nest
// whose innermost body only computes and stores becomes a flat grid-stride
// loop in which each thread takes 16 bytes of consecutive elements (4 f32 or
// 8 f16/bf16), read and written with 128-bit accesses:
//
//   for v0 (parallel):                      n = fl_vn groups of L elements, L = 4 (f32)
//     for v1:                               for (g = thread; g < n; g += threads)
//       y[v0*C + v1] = x[v0*C + v1] + b[v1]   x[L] <- float4 at x + g*L   // contiguous
//                                   ->        for k < L (unrolled): v0, v1 from g*L + k
//                                               y[k] = x[k] + b[v1]      // b stays scalar
//                                             float4 at y + g*L <- y[L]
//                                           for (i = n*L + thread; i < N; ...) scalar tail
//
// An access is contiguous when its index is the nest's flat index plus a
// multiple of L (stride 1 along the flat counter); only those of 2- or 4-byte
// buffers become vectors, every other load (a broadcast scalar, a bias along a
// row, a transposed read) stays a scalar load in the lane loop. Every store
// must be contiguous, so the iterations are independent and the flattened nest
// may run in any order; a buffer the body both reads and writes keeps the
// plain stage (a lane's write would be held in registers past a later read).
#include <optional>
#include <tuple>

#include "codegen/cuda/cuda_emitter.h"

namespace fuselens::cudaemit {
namespace {

// index = sum coef[var] * var + c.
struct Affine {
  std::map<int32_t, int64_t> coef;
  int64_t c = 0;
  bool ok = true;
};

Affine affine(const ExprRef& e) {
  Affine a;
  if (e->kind == ExprKind::IntConst && e->type != DType::Bool) {
    a.c = e->i;
  } else if (e->kind == ExprKind::VarRef) {
    a.coef[e->var.index] = 1;
  } else if (e->kind == ExprKind::Binary &&
             (e->bin == BinOp::Add || e->bin == BinOp::Sub || e->bin == BinOp::Mul)) {
    Affine x = affine(e->ops[0]), y = affine(e->ops[1]);
    if (!x.ok || !y.ok) return {{}, 0, false};
    if (e->bin == BinOp::Mul) {
      if (!x.coef.empty() && !y.coef.empty()) return {{}, 0, false};
      if (x.coef.empty()) std::swap(x, y);  // y is the constant factor
      for (auto& [v, k] : x.coef) k *= y.c;
      x.c *= y.c;
      return x;
    }
    const int64_t sign = e->bin == BinOp::Sub ? -1 : 1;
    for (const auto& [v, k] : y.coef) x.coef[v] += sign * k;
    x.c += sign * y.c;
    return x;
  } else {
    a.ok = false;
  }
  return a;
}

// The loop nest: the parallel loop and the serial loops that are each the only
// statement of the one above; flat strides per counter.
struct Nest {
  std::vector<StmtRef> loops;
  std::map<int32_t, int64_t> stride;  // counter -> flat stride
  int64_t numel = 1;
};

Nest nestOf(const StmtRef& top) {
  Nest n;
  n.loops = {top};
  while (n.loops.back()->body.size() == 1) {
    const StmtRef& inner = n.loops.back()->body[0];
    if (inner->kind != StmtKind::For || inner->forKind == ForKind::Parallel) break;
    n.loops.push_back(inner);
  }
  for (auto l = n.loops.rbegin(); l != n.loops.rend(); ++l) {
    n.stride[(*l)->var.index] = n.numel;
    n.numel *= (*l)->extent;
  }
  return n;
}

// The offset from the flat index when `index` is the flat index plus a
// constant, else nothing.
std::optional<int64_t> flatOffset(const ExprRef& index, const Nest& n) {
  Affine a = affine(index);
  if (!a.ok) return std::nullopt;
  for (const auto& [v, k] : a.coef)
    if (k != 0 && (!n.stride.count(v) || n.stride.at(v) != k)) return std::nullopt;
  for (const auto& [v, s] : n.stride)
    if (!a.coef.count(v) || a.coef.at(v) != s) return std::nullopt;
  return a.c;
}

void loadsIn(const ExprRef& e, std::vector<const Expr*>& out) {
  if (e->kind == ExprKind::Load) out.push_back(e.get());
  for (const ExprRef& o : e->ops) loadsIn(o, out);
}

// One 128-bit operand: a buffer at the flat index plus `offset`.
struct Operand {
  int32_t buffer;
  int64_t offset;
  bool operator<(const Operand& o) const {
    return std::tie(buffer, offset) < std::tie(o.buffer, o.offset);
  }
};

struct Plan {
  int64_t lanes = 0;                      // L: elements a thread per step
  std::map<const Expr*, Operand> loads;   // contiguous loads that become vectors
  std::map<const Stmt*, Operand> stores;  // contiguous stores that become vectors
  std::set<int32_t> scalarLoads;          // buffers loaded lane by lane
};

bool vectorType(const Buffer& b) {
  const size_t size = dtypeSize(b.dtype);
  const bool kind = b.kind == BufferKind::Input || b.kind == BufferKind::Output ||
                    b.kind == BufferKind::Temp;  // embedded constants have no 16-byte alignment
  return kind && (size == 2 || size == 4) && b.dtype != DType::Bool;
}

// What becomes a vector, or lanes == 0 when the body does not have the shape.
Plan planVectors(const LoopFunc& f, const Nest& n) {
  Plan p;
  std::set<int32_t> stored, loaded;
  std::vector<std::pair<const Expr*, std::optional<int64_t>>> loads;
  std::vector<std::pair<const Stmt*, std::optional<int64_t>>> stores;
  for (const StmtRef& s : n.loops.back()->body) {
    if (s->kind != StmtKind::Let && s->kind != StmtKind::Assign && s->kind != StmtKind::Store)
      return {};
    std::vector<const Expr*> ls;
    loadsIn(s->value, ls);
    if (s->kind == StmtKind::Store) {
      loadsIn(s->index, ls);
      stores.push_back({s.get(), flatOffset(s->index, n)});
      if (!stores.back().second) return {};  // a scattered store may collide: keep the order
      stored.insert(s->buffer.index);
    }
    for (const Expr* l : ls) {
      loads.push_back({l, flatOffset(l->ops[0], n)});
      loaded.insert(l->buffer.index);
    }
  }
  for (int32_t b : stored)
    if (loaded.count(b)) return {};
  // L: 16 bytes of the narrowest vector operand; wider ones take several vectors.
  size_t narrowest = 0;
  auto consider = [&](int32_t b, const std::optional<int64_t>& at) {
    if (at && vectorType(f.buffers[size_t(b)])) {
      const size_t size = dtypeSize(f.buffers[size_t(b)].dtype);
      narrowest = narrowest ? std::min(narrowest, size) : size;
    }
  };
  for (const auto& [l, at] : loads) consider(l->buffer.index, at);
  for (const auto& [s, at] : stores) consider(s->buffer.index, at);
  if (!narrowest) return {};
  p.lanes = int64_t(16 / narrowest);
  auto vector = [&](int32_t b, const std::optional<int64_t>& at) {
    return at && vectorType(f.buffers[size_t(b)]) && *at % p.lanes == 0;
  };
  for (const auto& [l, at] : loads) {
    if (vector(l->buffer.index, at))
      p.loads[l] = {l->buffer.index, *at};
    else
      p.scalarLoads.insert(l->buffer.index);
  }
  for (const auto& [s, at] : stores)
    if (vector(s->buffer.index, at)) p.stores[s] = {s->buffer.index, *at};
  if (p.loads.empty() && p.stores.empty()) p.lanes = 0;
  return p;
}

std::string laneArray(const Operand& op) {
  return "fl_v" + std::to_string(op.buffer) + (op.offset ? "_" + std::to_string(op.offset) : "");
}

// The nest's counters recovered from the flat index `i`.
void counters(const Nest& n, Emitter& em, const std::string& i, const std::string& pad,
              std::ostringstream& o) {
  for (const StmtRef& l : n.loops)
    o << pad << "const fl_i64 " << em.var(l->var) << " = " << i << " / "
      << ll(n.stride.at(l->var.index)) << " % " << ll(l->extent) << ";\n";
}

// fl_vload (or fl_vstore when `store`) of each 16-byte part of an operand's lanes.
void vectorCalls(const LoopFunc& f, Emitter& em, const Operand& op, int64_t lanes, bool store,
                 std::ostringstream& o) {
  const int64_t per = int64_t(16 / dtypeSize(f.buffers[size_t(op.buffer)].dtype));
  const std::string ptr = em.buf(f.buffers[size_t(op.buffer)].id);
  for (int64_t j = 0; j < lanes; j += per) {
    const std::string mem = ptr + " + fl_g * " + ll(lanes) + " + " + ll(op.offset + j);
    const std::string regs = laneArray(op) + " + " + std::to_string(j);
    if (store)
      o << "    fl_vstore(" << mem << ", " << regs << ");\n";
    else
      o << "    fl_vload(" << regs << ", " << mem << ");\n";
  }
}

}  // namespace

bool emitVectorized(const LoopFunc& f, Emitter& em, const StmtRef& top, std::ostringstream& o,
                    CudaStage& st) {
  for (const Buffer& b : f.buffers)
    if (b.kind == BufferKind::Local) return false;  // per-thread arrays: not elementwise
  const Nest n = nestOf(top);
  Plan p = planVectors(f, n);
  if (p.lanes == 0 || n.numel < p.lanes) return false;
  const int64_t L = p.lanes, groups = n.numel / L;
  std::set<Operand> ins, outs;
  for (const auto& [e, op] : p.loads) ins.insert(op);
  for (const auto& [s, op] : p.stores) outs.insert(op);
  std::set<int32_t> vectorBuffers;
  for (const Operand& op : ins) vectorBuffers.insert(op.buffer);
  for (const Operand& op : outs) vectorBuffers.insert(op.buffer);

  st.extent = groups;
  st.block = std::min<int64_t>(256, groups);
  st.grid = std::min<int64_t>((groups + st.block - 1) / st.block, 65535);
  const std::string thread = "(fl_i64)blockIdx.x * blockDim.x + threadIdx.x";
  const std::string threads = "(fl_i64)gridDim.x * blockDim.x";
  o << "  // 128-bit vectors: " << n.numel << " elements, " << L << " a thread, tail "
    << n.numel % L << ", " << ins.size() << " vector loads, " << outs.size() << " vector stores, "
    << p.scalarLoads.size() << " scalar operands\n";
  // Alignment is checked here, not assumed: a memory plan the pass gives may be
  // packed to 8 bytes, and callers of the bundle pass their own pointers. A
  // misaligned operand sends the whole stage down the scalar loop.
  std::string mask;
  for (int32_t b : vectorBuffers)
    mask += (mask.empty() ? "" : " | ") + std::string("(unsigned long long)") +
            em.buf(f.buffers[size_t(b)].id);
  o << "  const fl_i64 fl_vn = ((" << mask << ") & 15ULL) == 0 ? " << ll(groups) << " : 0LL;\n";
  o << "  for (fl_i64 fl_g = " << thread << "; fl_g < fl_vn; fl_g += " << threads << ") {\n";
  for (const Operand& op : ins) {
    o << "    " << cudaTypeName(f.buffers[size_t(op.buffer)].dtype) << " " << laneArray(op) << "["
      << L << "];\n";
    vectorCalls(f, em, op, L, false, o);
  }
  for (const Operand& op : outs)
    o << "    " << cudaTypeName(f.buffers[size_t(op.buffer)].dtype) << " " << laneArray(op) << "["
      << L << "];\n";
  o << "#pragma unroll\n    for (int fl_k = 0; fl_k < " << L << "; ++fl_k) {\n"
    << "      const fl_i64 fl_i = fl_g * " << ll(L) << " + fl_k;\n";
  counters(n, em, "fl_i", "      ", o);
  for (const auto& [e, op] : p.loads) em.laneLoads_[e] = laneArray(op);
  for (const auto& [s, op] : p.stores) em.laneStores_[s] = laneArray(op);
  for (const StmtRef& s : n.loops.back()->body) em.stmt(s, 3, o);
  em.laneLoads_.clear();
  em.laneStores_.clear();
  o << "    }\n";
  for (const Operand& op : outs) vectorCalls(f, em, op, L, true, o);
  o << "  }\n";
  o << "  for (fl_i64 fl_i = fl_vn * " << ll(L) << " + " << thread << "; fl_i < " << ll(n.numel)
    << "; fl_i += " << threads << ") {\n";
  counters(n, em, "fl_i", "    ", o);
  for (const StmtRef& s : n.loops.back()->body) em.stmt(s, 2, o);
  o << "  }\n";
  return !em.failed();
}

}  // namespace fuselens::cudaemit
