// NonZero as a driver kernel: its output [rank, count] is sized by the data.
// Two kernels compiled ahead of time for the input's static shape:
//
//   count:  acc = 0; for i < numel: acc += (x[i] != 0); count[0] = acc
//   fill:   j = 0; k = count[0]
//           for i0 < d0 ... for ir < dr:            (the input's coordinates)
//             p = min(j, k - 1)
//             out[a * k + p] = x[i] != 0 ? i_a : out[a * k + p]   (each axis a)
//             j += (x[i] != 0)
//
// The host allocates [rank, count] between them. The loop IR has no `if`, so a
// zero element rewrites the slot the next hit will fill (or the last hit's slot,
// with its own value, once all are found): the stores stay in bounds and the
// result is exact. "!= 0" is the loop IR's cast to bool (NaN counts, as in ONNX).
#include "codegen/driver/driver_dyn_kernels.h"

namespace fuselens {
namespace {

ExprRef isNonZero(const Buffer& x, ExprRef index) {
  return cast(cast(load(x, std::move(index)), computeType(x.dtype)), DType::Bool);
}

LoopFunc countKernel(const std::string& name, DType dt, const std::vector<int64_t>& shape,
                     int64_t numel) {
  LoopFunc f;
  f.name = name + "_count";
  BufferId xb = f.addBuffer("x", BufferKind::Input, dt, shape);
  BufferId cb = f.addBuffer("count", BufferKind::Output, DType::I64, {1});
  f.params = {xb, cb};
  f.numInputs = 1;
  Var acc = f.addVar("acc0", DType::I64), i = f.addVar("i0", DType::I64);
  ExprRef hit = select(isNonZero(f.buffer(xb), varRef(i)), intConst(1), intConst(0));
  f.body = seq({let(acc, intConst(0)), forLoop(i, numel, {assign(acc, add(varRef(acc), hit))}),
                store(f.buffer(cb), intConst(0), varRef(acc))});
  return f;
}

LoopFunc fillKernel(const std::string& name, DType dt, const std::vector<int64_t>& shape,
                    int64_t numel) {
  LoopFunc f;
  f.name = name + "_fill";
  int64_t rank = int64_t(shape.size());
  BufferId xb = f.addBuffer("x", BufferKind::Input, dt, shape);
  BufferId kb = f.addBuffer("count", BufferKind::Input, DType::I64, {1});
  BufferId ob = f.addBuffer("indices", BufferKind::Output, DType::I64, {rank * numel});
  f.params = {xb, kb, ob};
  f.numInputs = 2;
  Var j = f.addVar("j0", DType::I64), k = f.addVar("k0", DType::I64);
  Var p = f.addVar("p0", DType::I64), nz = f.addVar("nz0", DType::Bool);
  std::vector<Var> coords;
  for (int64_t a = 0; a < rank; ++a)
    coords.push_back(f.addVar("i" + std::to_string(a), DType::I64));
  const Buffer &x = f.buffer(xb), &out = f.buffer(ob);
  ExprRef flat = intConst(0);
  for (int64_t a = 0; a < rank; ++a) flat = add(mul(flat, intConst(shape[a])), varRef(coords[a]));
  std::vector<StmtRef> inner = {let(nz, isNonZero(x, flat)),
                                let(p, binary(BinOp::Min, varRef(j), sub(varRef(k), intConst(1))))};
  for (int64_t a = 0; a < rank; ++a) {
    ExprRef at = add(mul(intConst(a), varRef(k)), varRef(p));
    inner.push_back(store(out, at, select(varRef(nz), varRef(coords[a]), load(out, at))));
  }
  inner.push_back(assign(j, add(varRef(j), select(varRef(nz), intConst(1), intConst(0)))));
  std::vector<StmtRef> nest = inner;
  for (int64_t a = rank; a-- > 0;) nest = {forLoop(coords[a], shape[a], nest)};
  std::vector<StmtRef> body = {let(j, intConst(0)), let(k, load(f.buffer(kb), intConst(0)))};
  for (StmtRef& s : nest) body.push_back(std::move(s));
  f.body = seq(std::move(body));
  return f;
}

}  // namespace

Expected<DriverKernel> lowerNonZeroDriver(const Graph& g, const Node& n, const std::string& name,
                                          const CompileOptions& opts) {
  std::string where = "node '" + n.name + "' (NonZero)";
  if (n.inputs.size() != 1 || !n.inputs[0].valid() || n.outputs.size() != 1)
    return Status::error("NonZero needs one input and one output", where);
  TensorType xType = g.value(n.inputs[0]).type;
  const TensorType& oType = g.value(n.outputs[0]).type;
  if (oType.dtype != DType::I64 || (oType.rankKnown && oType.rank() != 2))
    return Status::error("the output must be i64 of rank 2, not " + oType.str(), where);
  std::vector<int64_t> shape = *xType.staticShape();
  int64_t numel = *xType.numElements(), rank = int64_t(shape.size());
  std::vector<LoopFunc> funcs = {countKernel(name, xType.dtype, shape, numel),
                                 fillKernel(name, xType.dtype, shape, numel)};
  auto jit = jitDriverKernels(funcs, opts.optLevel);
  if (!jit) return Status::error(jit.diagnostic().message, where);
  DriverJit k = *jit;
  DriverKernel d;
  d.loopIr = k.loopIr;
  d.summary = "NonZero: compiled count and fill, output sized at run time";
  d.run = [k, xType, rank, numel,
           where](const std::vector<const TensorData*>& in) -> Expected<std::vector<TensorData>> {
    auto x = checkedInput(in, 0, xType, where);
    if (!x) return x.status();
    void* data = const_cast<std::byte*>((*x)->bytes.data());
    int64_t count = 0;
    if (numel > 0) {
      void* args[] = {data, &count};
      k.fn(0)(args);
    }
    std::vector<TensorData> outs;
    try {
      outs.emplace_back(DType::I64, std::vector<int64_t>{rank, count});
    } catch (const std::bad_alloc&) {
      return Status::error("cannot allocate the [" + std::to_string(rank) + ", " +
                               std::to_string(count) + "] output",
                           where);
    }
    if (count > 0 && rank > 0) {
      void* args[] = {data, &count, outs[0].bytes.data()};
      k.fn(1)(args);
    }
    return outs;
  };
  return d;
}

}  // namespace fuselens
