// .npy read/write (format versions 1.0-3.0, little-endian, C order) and seeded
// random inputs for a quick look at a model.
#pragma once

#include <cstdint>
#include <string>

#include "core/ir/tensor.h"
#include "core/support/status.h"

namespace fuselens {

Expected<TensorData> readNpy(const std::string& path);
// Written to a temporary file beside `path` and renamed, so a failure never
// leaves a half-written file.
Status writeNpy(const std::string& path, const TensorData& t);

// Uniform in [-1, 1) for floats, small non-negative integers for ints; the same
// seed gives the same tensor. Fails when the type has a dynamic dim.
Expected<TensorData> randomTensor(const TensorType& type, uint64_t seed);

}  // namespace fuselens
