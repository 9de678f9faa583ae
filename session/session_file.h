// Saving and reopening a session: a small JSON file naming the model (path
// relative to the session file when it lies below it, plus a content hash so
// a changed model is noticed), the pipeline, the tolerances, the input seed,
// the shapes given to dynamic inputs and the user's bookmarks. Written atomically; never holds
// tensors.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/compare/rounding.h"
#include "core/support/status.h"

namespace fuselens {

struct SessionFile {
  std::string modelPath;  // absolute after load
  std::string modelHash;  // "fnv1a64:<16 hex digits>"
  std::string pipeline;
  CompareOptions compare;  // rounding verdicts or fixed tolerances, and the check stat
  uint64_t seed = 0;
  std::vector<std::string> bookmarks;  // value or node names the user marked
  // Shapes given to inputs with dynamic dims (Session::bindInputShapes), reapplied on restore.
  std::map<std::string, std::vector<int64_t>> inputShapes;
};

// Hash of the file's bytes, for noticing that a model changed since a save.
Expected<std::string> hashFile(const std::string& path);

Status saveSessionFile(const std::string& path, const SessionFile& s);
// Malformed JSON, a wrong version or missing fields give one sentence naming the file.
Expected<SessionFile> loadSessionFile(const std::string& path);

}  // namespace fuselens
