// ONNX protobuf -> FuseLens values, for the importer only: element types,
// TypeProto -> TensorType (dim_param becomes a named Dim) and TensorProto ->
// TensorData (raw_data, the typed *_data fields, or external data resolved
// inside the model's folder). Every size in a proto is checked against the
// bytes that back it before anything is allocated.
#pragma once

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>

#include "core/ir/tensor.h"
#include "core/support/status.h"

namespace fuselens::onnximport {

std::optional<DType> dtypeOfOnnx(int32_t elemType);
std::string onnxTypeName(int32_t elemType);  // "FLOAT", "STRING", ...

// `what` names the tensor in errors ("initializer 'w'"); `baseDir` is the
// model's folder for external data ("" when the model came from memory).
Expected<TensorData> tensorFromProto(const onnx::TensorProto& t, const std::string& what,
                                     const std::string& baseDir);

// A tensor type; a TypeProto without a shape gives rankKnown=false.
Expected<TensorType> typeFromProto(const onnx::TypeProto& t, const std::string& what);

}  // namespace fuselens::onnximport
