// The Scan step of a CUDA program (see cuda_program.h). A Scan's length is
// the scan inputs' extent along their axes, static once the inputs are bound,
// so everything is planned ahead of time:
//
//   states A = initial states
//   for t in 0..T:       (host)
//     slice_j = x_j[.., t or T-1-t, ..]   (a strided device-to-device copy)
//     B, out slices = body(A, slices)     (the body's kernels)
//     swap A, B; y_k[.., t or T-1-t, ..] = out slice k
//   outputs: A, y
#include "codegen/cuda/cuda_program_builder.h"
#include "codegen/driver/driver_cf.h"
#include "core/ops/registry.h"

namespace fuselens::cudaprog {
namespace {

int64_t attrAt(const std::optional<std::vector<int64_t>>& v, size_t i) {
  return v && i < v->size() ? (*v)[i] : 0;
}

}  // namespace

Status Builder::addScan(Scope& sc, const Node& n) {
  if (n.attrs.find("scan8_batch_axis"))
    return Status::error(
        "an opset-8 Scan (sequence_lens and a batch axis) has no CUDA host step; re-export the "
        "model at opset 9 or later, or compile it for the CPU",
        describeNode(n));
  const size_t formal = cfdriver::formalInputs(n);
  const int64_t m = n.attrs.getInt("num_scan_inputs", -1);
  if (m < 1 || size_t(m) > formal)
    return Status::error(
        "num_scan_inputs must be between 1 and the node's " + std::to_string(formal) + " inputs",
        describeNode(n));
  const size_t states = formal - size_t(m);
  const auto inAxes = n.attrs.getInts("scan_input_axes");
  const auto inDirs = n.attrs.getInts("scan_input_directions");
  const auto outAxes = n.attrs.getInts("scan_output_axes");
  const auto outDirs = n.attrs.getInts("scan_output_directions");
  CudaStep step;
  step.kind = CudaStep::Kind::Scan;
  step.node = describeNode(n);
  CudaStep::LoopSlots& L = step.loop;
  std::vector<TensorType> types;
  std::vector<int> formalSlots;
  int64_t length = -1;
  for (size_t i = 0; i < formal; ++i) {
    if (!n.inputs[i].valid())
      return Status::error("input " + std::to_string(i) + " is missing", describeNode(n));
    auto slot = slotFor(sc, n.inputs[i]);
    if (!slot) return slot.status();
    if (sc.p->slots[size_t(*slot)].runShape) return runShapeRead(sc, n.inputs[i], describeNode(n));
    step.in.push_back(*slot);
    const Value& v = sc.s.value(n.inputs[i]);
    if (i < states) {
      L.a.push_back(internalSlot(*sc.p, v.name + "/state", v.type));
      L.b.push_back(internalSlot(*sc.p, v.name + "/state_next", v.type));
      types.push_back(v.type);
      formalSlots.push_back(L.a.back());
      continue;
    }
    const size_t j = i - states;
    const int64_t rank = int64_t(v.type.rank());
    int64_t axis = attrAt(inAxes, j);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank)
      return Status::error(
          "scan input '" + v.name + "' has no axis " + std::to_string(attrAt(inAxes, j)),
          describeNode(n));
    const int64_t len = v.type.shape[size_t(axis)].value;
    if (length >= 0 && len != length)
      return Status::error("scan inputs have different lengths (" + std::to_string(length) +
                               " and " + std::to_string(len) + ")",
                           describeNode(n));
    length = len;
    const TensorType slice = cfdriver::sliceType(v.type, axis);
    L.sliceIn.push_back(internalSlot(*sc.p, v.name + "/slice", slice));
    L.inAxis.push_back(axis);
    L.inReverse.push_back(attrAt(inDirs, j) != 0);
    types.push_back(slice);
    formalSlots.push_back(L.sliceIn.back());
  }
  L.maxIterations = length;
  auto body = branch(sc, n, "body", formal, types, formalSlots, /*allowRefusal=*/false);
  if (!body) return body.status();
  const CudaProgram& bp = *body->program;
  if (bp.outputs.size() != n.outputs.size() || n.outputs.size() < states)
    return Status::error("the body returns " + std::to_string(bp.outputs.size()) +
                             " values; the node has " + std::to_string(n.outputs.size()) +
                             " outputs",
                         describeNode(n));
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    const CudaSlot& o = bp.slots[size_t(bp.outputs[i])];
    const std::string name = sc.s.value(n.outputs[i]).name;
    std::vector<int64_t> shape = o.shape;
    if (i < states) {
      const CudaSlot& in = sc.p->slots[size_t(L.a[i])];
      if (o.shape != in.shape || o.dtype != in.dtype)
        return Status::error("state '" + in.name + "' changes from " +
                                 TensorType::of(in.dtype, in.shape).str() + " to " +
                                 TensorType::of(o.dtype, o.shape).str() + " in a step",
                             describeNode(n));
    } else {
      const size_t k = i - states;
      int64_t axis = attrAt(outAxes, k);
      if (axis < 0) axis += int64_t(shape.size()) + 1;
      if (axis < 0 || axis > int64_t(shape.size()))
        return Status::error(
            "scan output '" + name + "' has no axis " + std::to_string(attrAt(outAxes, k)),
            describeNode(n));
      L.slices.push_back(internalSlot(*sc.p, name + "/slice", TensorType::of(o.dtype, o.shape)));
      L.outAxis.push_back(axis);
      L.outReverse.push_back(attrAt(outDirs, k) != 0);
      shape.insert(shape.begin() + axis, length);
    }
    const TensorType t = TensorType::of(o.dtype, shape);
    sc.s.mutableValue(n.outputs[i]).type = t;
    step.out.push_back(internalSlot(*sc.p, name, t));
    sc.slotOf[n.outputs[i].index] = step.out.back();
  }
  step.branches.push_back(std::move(*body));
  sc.p->steps.push_back(std::move(step));
  return Status::ok();
}

}  // namespace fuselens::cudaprog
