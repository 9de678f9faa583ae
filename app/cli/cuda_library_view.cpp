// See cuda_library_view.h: fixed columns, one line per group.
#include "app/cli/cuda_library_view.h"

#include <cstdio>

namespace fuselens::cli {
namespace {

// "  group  kernel  engine  " with fixed columns, for both tables.
std::string columns(const std::string& group, const std::string& kernel,
                    const std::string& engine) {
  char line[512];
  std::snprintf(line, sizeof line, "  %-24s %-32s %-9s ", group.c_str(), kernel.c_str(),
                engine.c_str());
  return line;
}

}  // namespace

nlohmann::json cudaLibraryRowsJson(const std::vector<CudaLibraryRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const CudaLibraryRow& r : rows)
    out.push_back({{"group", r.group}, {"kernel", r.kernel}, {"library", r.library}});
  return out;
}

void printCudaLibraryRows(std::ostream& os, const std::string& mode,
                          const std::vector<CudaLibraryRow>& rows, const std::string& none) {
  os << "CUDA library offload (--cuda-library " << mode << "):\n";
  if (rows.empty()) os << "  " << none << "\n";
  for (const CudaLibraryRow& r : rows) {
    const std::string engine = r.library.value("engine", "");
    os << columns(r.group, r.kernel, engine)
       << r.library.value(engine == "cublaslt" ? "epilogue" : "why", "") << "\n";
  }
}

void printCudaLibraryTune(std::ostream& os, const CudaLibraryTuneReport& report) {
  if (!report.note.empty()) os << "note: " << report.note << "\n";
  if (report.rows.empty()) {
    os << "no MatMul/Gemm group to choose an engine for\n";
    return;
  }
  os << columns("group", "kernel", "choice") << "why\n";
  for (const CudaLibraryTuneRow& r : report.rows)
    os << columns(r.group, r.kernel, r.library ? "cublaslt" : "generated") << r.why << "\n";
  os << "as flags:";
  for (const std::string& v : report.groupValues()) os << " --cuda-library-group " << v;
  os << "\n";
}

}  // namespace fuselens::cli
