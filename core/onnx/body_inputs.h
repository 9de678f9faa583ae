// Some exporters declare If/Loop/Scan body inputs without a type. The
// importer then takes each from what the owning node feeds it: Loop gives an
// i64 iteration number, a bool condition and the carried values; Scan its
// states and one slice of each scan input (Scan-8: batch axis 0 dropped too).
#pragma once

#include <onnx/onnx_pb.h>

#include <optional>
#include <vector>

#include "core/ir/tensor_type.h"

namespace fuselens::onnximport {

// One entry per formal body input, in order; nullopt where nothing is known.
// `inputs`: the types of the node's ONNX inputs (nullopt for omitted ones);
// `opset`: the model's default-domain opset (Scan-8 has its own form).
std::vector<std::optional<TensorType>> bodyInputHints(
    const onnx::NodeProto& n, const std::vector<std::optional<TensorType>>& inputs, int64_t opset);

}  // namespace fuselens::onnximport
