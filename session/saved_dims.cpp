// Reads the beside session file quietly: a missing or malformed file only
// means the user is asked, so its error is not worth a sentence here.
#include "session/saved_dims.h"

#include <filesystem>
#include <system_error>

#include "session/session_file.h"

namespace fuselens {

namespace fs = std::filesystem;

std::string besideSessionPath(const std::string& modelPath) {
  const fs::path model(modelPath);
  return (model.parent_path() / (model.stem().string() + ".fuselens.json")).string();
}

std::map<std::string, int64_t> savedDims(const std::string& modelPath,
                                         const std::vector<DimSuggestion>& dims) {
  std::error_code ec;
  const std::string beside = besideSessionPath(modelPath);
  if (dims.empty() || !fs::is_regular_file(beside, ec)) return {};
  auto file = loadSessionFile(beside);
  if (!file || !fs::equivalent(file->modelPath, modelPath, ec) || ec) return {};
  std::map<std::string, int64_t> values = dimsFromShapes(dims, file->inputShapes);
  return values.size() == dims.size() ? values : std::map<std::string, int64_t>{};
}

}  // namespace fuselens
