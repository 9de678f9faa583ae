// Range as a driver kernel: the output length is
// max(ceil((limit - start) / delta), 0), known once the scalars are. The host
// takes that count from the scalars (the same rule and bound as the reference:
// delta 0, NaN or over 1e8 elements is an error), allocates the output and runs
// one fill kernel, compiled ahead of time, over it in blocks of kBlock:
//
//   fill(start, delta, base, out[kBlock]):
//     for i < kBlock: out[i] = start + (base + i) * delta   (f64 for floats, i64 else)
//
// A fixed block keeps the loop IR's static extents and compiles once per node;
// the alternatives were a run-time loop extent in the loop IR (a change to the
// IR, its emitters and printers) or one kernel per count (a JIT on every new
// count, and a cache to bound). The last partial block goes through a scratch
// block and is copied in.
#include <cmath>
#include <cstring>

#include "codegen/driver/driver_dyn_kernels.h"

namespace fuselens {
namespace {

constexpr int64_t kBlock = 1024;

LoopFunc rangeFill(const std::string& name, DType dt) {
  LoopFunc f;
  f.name = name + "_fill";
  BufferId sb = f.addBuffer("start", BufferKind::Input, dt, {1});
  BufferId db = f.addBuffer("delta", BufferKind::Input, dt, {1});
  BufferId bb = f.addBuffer("base", BufferKind::Input, DType::I64, {1});
  BufferId ob = f.addBuffer("out", BufferKind::Output, dt, {kBlock});
  f.params = {sb, db, bb, ob};
  f.numInputs = 3;
  bool isFloatType = computeType(dt) == DType::F32 || computeType(dt) == DType::F64;
  DType ct = isFloatType ? DType::F64 : DType::I64;  // the reference's double or int64 math
  Var s = f.addVar("s0", ct), d = f.addVar("d0", ct), b = f.addVar("b0", DType::I64);
  Var i = f.addVar("i0", DType::I64);
  auto scalar = [&](BufferId id) {
    return cast(cast(load(f.buffer(id), intConst(0)), computeType(dt)), ct);
  };
  ExprRef value = add(varRef(s), mul(cast(add(varRef(b), varRef(i)), ct), varRef(d)));
  f.body = seq({let(s, scalar(sb)), let(d, scalar(db)), let(b, load(f.buffer(bb), intConst(0))),
                forLoop(i, kBlock, {store(f.buffer(ob), varRef(i), cast(value, dt))})});
  return f;
}

// The scalar's value: exact for integers (TensorData::at goes through double).
int64_t intValue(const TensorData& t) {
  switch (t.dtype) {
    case DType::I8:
      return t.data<int8_t>()[0];
    case DType::U8:
      return t.data<uint8_t>()[0];
    case DType::I16:
      return t.data<int16_t>()[0];
    case DType::I32:
      return t.data<int32_t>()[0];
    default:
      return t.data<int64_t>()[0];
  }
}

// max(ceil((limit - start) / delta), 0), or why there is none.
Expected<int64_t> rangeCount(const TensorData& s, const TensorData& l, const TensorData& d,
                             bool isFloatType, const std::string& where) {
  double cnt = 0;
  if (isFloatType) {
    if (d.at(0) == 0) return Status::error("delta is 0", where);
    cnt = std::ceil((l.at(0) - s.at(0)) / d.at(0));
  } else {
    if (intValue(d) == 0) return Status::error("delta is 0", where);
    cnt = std::ceil((double(intValue(l)) - double(intValue(s))) / double(intValue(d)));
  }
  if (!(cnt < 1e8))
    return Status::error("the range is too long (more than 1e8 elements, or NaN bounds)", where);
  return std::max<int64_t>(0, int64_t(cnt));
}

}  // namespace

Expected<DriverKernel> lowerRangeDriver(const Graph& g, const Node& n, const std::string& name,
                                        const CompileOptions& opts) {
  std::string where = "node '" + n.name + "' (Range)";
  if (n.inputs.size() != 3 || n.outputs.size() != 1)
    return Status::error("Range needs start, limit and delta and one output", where);
  std::vector<TensorType> types;
  for (ValueId v : n.inputs) {
    if (!v.valid()) return Status::error("start, limit and delta are all required", where);
    types.push_back(g.value(v).type);
  }
  DType dt = types[0].dtype;
  for (const TensorType& t : types)
    if (t.dtype != dt || *t.numElements() != 1 || dt == DType::Bool)
      return Status::error("start, limit and delta must be numeric scalars of one type, not " +
                               types[0].str() + ", " + types[1].str() + ", " + types[2].str(),
                           where);
  if (g.value(n.outputs[0]).type.dtype != dt)
    return Status::error("the output type differs from the inputs' type", where);
  bool isFloatType = computeType(dt) == DType::F32 || computeType(dt) == DType::F64;
  auto jit = jitDriverKernels({rangeFill(name, dt)}, opts.optLevel);
  if (!jit) return Status::error(jit.diagnostic().message, where);
  DriverJit k = *jit;
  DriverKernel drv;
  drv.loopIr = k.loopIr;
  drv.summary =
      "Range: compiled fill in blocks of " + std::to_string(kBlock) + ", output sized at run time";
  drv.run = [k, types, dt, isFloatType,
             where](const std::vector<const TensorData*>& in) -> Expected<std::vector<TensorData>> {
    std::vector<const TensorData*> sld;
    for (size_t i = 0; i < 3; ++i) {
      auto t = checkedInput(in, i, types[i], where);
      if (!t) return t.status();
      sld.push_back(*t);
    }
    auto count = rangeCount(*sld[0], *sld[1], *sld[2], isFloatType, where);
    if (!count) return count.status();
    std::vector<TensorData> outs;
    outs.emplace_back(dt, std::vector<int64_t>{*count});
    size_t elem = dtypeSize(dt);
    void* start = const_cast<std::byte*>(sld[0]->bytes.data());
    void* delta = const_cast<std::byte*>(sld[2]->bytes.data());
    int64_t base = 0;
    for (; base + kBlock <= *count; base += kBlock) {
      void* args[] = {start, delta, &base, outs[0].bytes.data() + base * elem};
      k.fn(0)(args);
    }
    if (base < *count) {
      TensorData tail(dt, {kBlock});
      void* args[] = {start, delta, &base, tail.bytes.data()};
      k.fn(0)(args);
      std::memcpy(outs[0].bytes.data() + base * elem, tail.bytes.data(),
                  size_t(*count - base) * elem);
    }
    return outs;
  };
  return drv;
}

}  // namespace fuselens
