// Internal to export (export.h): the fixed parts of the generated C. The
// header <name>.h (fl_tensor, the dtype codes, the contract of inputs and
// outputs), the runtime's thread pool, and its per-tensor dtype-and-shape
// check; plus the C spelling of dtypes and literals. export.cpp writes the
// parts that depend on the kernel plan.
#pragma once

#include <string>
#include <vector>

#include "core/ir/graph.h"

namespace fuselens {

// Dtype codes are ONNX TensorProto's numbers, so a caller holding ONNX tensors
// passes their data_type as is.
const char* cDTypeMacro(DType t);  // "FL_I64"
int cDTypeCode(DType t);           // 7

std::string cString(const std::string& s);            // a C string literal
std::string dimsText(const std::vector<int64_t>& s);  // "2, 3"

// <name>.h for graph g.
std::string exportHeader(const Graph& g, const std::string& name);
// The thread pool: fuselens_parallel_for for the kernels' parallel loops.
extern const char* const kExportPoolC;
// fl_dtype_name() and fl_check(): one input's or output's dtype and shape
// against the model's, the reason in fl_error.
std::string exportCheckC();

}  // namespace fuselens
