// The CLI's views of cuBLASLt offload (session/cuda_library.h): the per-group
// table `compile --target cuda` prints (text and --json, in manifest.json's
// words) and the tuner's choice `tune --target cuda` prints.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "session/cuda_library.h"

namespace fuselens::cli {

// [{"group", "kernel", "library": manifest.json's entry}, ...]
nlohmann::json cudaLibraryRowsJson(const std::vector<CudaLibraryRow>& rows);
// One line per group: name, kernel, engine, then the epilogue or why generated;
// with no row, `none` (why no group is listed).
void printCudaLibraryRows(std::ostream& os, const std::string& mode,
                          const std::vector<CudaLibraryRow>& rows, const std::string& none);
// The tuner's table, then the choice as --cuda-library-group flags.
void printCudaLibraryTune(std::ostream& os, const CudaLibraryTuneReport& report);

}  // namespace fuselens::cli
