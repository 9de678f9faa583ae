// Types for subgraph inputs that an exporter declared without one (see
// body_inputs.h): taken from what the owning Loop or Scan feeds them.
#include "core/onnx/body_inputs.h"

namespace fuselens::onnximport {
namespace {

// `t` without the given axes (sorted ascending): unchanged when its rank is unknown,
// nullopt when the rank is too short.
std::optional<TensorType> dropAxes(const TensorType& t, std::vector<int64_t> axes) {
  TensorType o = t;
  if (!t.rankKnown) return o;
  for (auto it = axes.rbegin(); it != axes.rend(); ++it) {
    int64_t a = *it < 0 ? *it + int64_t(o.rank()) : *it;
    if (a < 0 || a >= int64_t(o.rank())) return std::nullopt;
    o.shape.erase(o.shape.begin() + a);
  }
  return o;
}

}  // namespace

// What the owning node feeds a body's formal inputs (Loop: iteration number,
// condition, carried values; Scan: states, then one slice of each scan input),
// as types, so a body input declared without a type can take its type from
// there. Carried values keep their rank but not their dims: a body may grow them.
std::vector<std::optional<TensorType>> bodyInputHints(
    const onnx::NodeProto& n, const std::vector<std::optional<TensorType>>& inputs, int64_t opset) {
  auto typeOf = [&](size_t i) -> std::optional<TensorType> {
    return i < inputs.size() ? inputs[i] : std::nullopt;
  };
  std::vector<std::optional<TensorType>> hints;
  if (n.op_type() == "Loop") {
    hints.push_back(TensorType::of(DType::I64, {}));
    hints.push_back(TensorType::of(DType::Bool, {}));
    for (size_t i = 2; i < inputs.size(); ++i) {
      auto t = typeOf(i);
      if (t && t->rankKnown)
        for (Dim& d : t->shape) d = Dim::unknown();
      hints.push_back(t);
    }
  } else if (n.op_type() == "Scan") {
    int64_t M = 0;
    std::vector<int64_t> axes;
    for (const auto& a : n.attribute()) {
      if (a.name() == "num_scan_inputs") M = a.i();
      if (a.name() == "scan_input_axes") axes.assign(a.ints().begin(), a.ints().end());
    }
    bool batched = opset < 9;  // Scan-8: sequence_lens first, batch axis 0 everywhere
    size_t first = batched ? 1 : 0;
    if (M <= 0 || inputs.size() < first + size_t(M)) return hints;
    size_t N = inputs.size() - first - size_t(M);
    for (size_t i = 0; i < N; ++i) {
      auto t = typeOf(first + i);
      hints.push_back(t && batched ? dropAxes(*t, {0}) : t);
    }
    for (size_t j = 0; j < size_t(M); ++j) {
      auto t = typeOf(first + N + j);
      std::vector<int64_t> drop = batched ? std::vector<int64_t>{0, 1}
                                          : std::vector<int64_t>{j < axes.size() ? axes[j] : 0};
      hints.push_back(t ? dropAxes(*t, drop) : std::nullopt);
    }
  }
  return hints;
}

}  // namespace fuselens::onnximport
