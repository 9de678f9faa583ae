// ONNX import: ModelProto -> Graph (marked as the original). Unknown ops import
// as Opaque nodes with a warning so the graph still renders; they fail only
// when run.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/support/status.h"

namespace fuselens {

struct ImportedModel {
  Graph graph;
  std::vector<Diagnostic> diagnostics;  // warnings and notes; errors fail the import
  int64_t irVersion = 0;
  std::map<std::string, int64_t> opsets;  // domain -> version ("" is the default domain)
  std::string producer;                   // "pytorch 2.1", ...
  // metadata_props, key -> value: hints such as "dim.seq" = "128" for the
  // dims dialog and the CLI's suggestions (session/dim_suggest.h).
  std::map<std::string, std::string> metadata;
};

Expected<ImportedModel> importOnnxFile(const std::string& path);
// `where` names the source in diagnostics; external data resolves against `baseDir`.
Expected<ImportedModel> importOnnxBytes(const std::string& bytes, const std::string& where,
                                        const std::string& baseDir);

}  // namespace fuselens
