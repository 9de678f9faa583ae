#include "session/session_file.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/support/atomic_file.h"

namespace fuselens {
namespace {

constexpr int kVersion = 1;
namespace fs = std::filesystem;

// Relative to the session's folder when the model lies below it, so a project
// folder can move as a whole; absolute otherwise.
std::string storedModelPath(const std::string& sessionPath, const std::string& model) {
  fs::path dir = fs::absolute(sessionPath).parent_path();
  fs::path abs = fs::absolute(model).lexically_normal();
  fs::path rel = abs.lexically_relative(dir);
  if (!rel.empty() && *rel.begin() != "..") return rel.string();
  return abs.string();
}

}  // namespace

Expected<std::string> hashFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Expected<std::string>::error("cannot read the file", path);
  uint64_t h = 1469598103934665603ull;  // FNV-1a 64
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof buf);
    for (std::streamsize i = 0; i < in.gcount(); ++i) {
      h ^= static_cast<unsigned char>(buf[i]);
      h *= 1099511628211ull;
    }
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return std::string("fnv1a64:") + hex;
}

Status saveSessionFile(const std::string& path, const SessionFile& s) {
  nlohmann::json j = {{"fuselens_session", kVersion},
                      {"model", storedModelPath(path, s.modelPath)},
                      {"model_hash", s.modelHash},
                      {"pipeline", s.pipeline},
                      {"check", s.compare.rounding() ? "rounding" : "fixed"},
                      {"check_stat", s.compare.stat.str()},
                      {"atol", s.compare.tolerance.atol},
                      {"rtol", s.compare.tolerance.rtol},
                      {"seed", s.seed},
                      {"bookmarks", s.bookmarks},
                      {"input_shapes", s.inputShapes}};
  return writeFileAtomically(path, j.dump(2) + "\n");
}

Expected<SessionFile> loadSessionFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Expected<SessionFile>::error("cannot read the session file", path);
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return Expected<SessionFile>::error("not a FuseLens session file (the JSON does not parse)",
                                        path);
  if (!j.contains("fuselens_session") || j["fuselens_session"] != kVersion)
    return Expected<SessionFile>::error(
        "not a FuseLens session file of version " + std::to_string(kVersion), path);
  SessionFile s;
  try {
    fs::path model = j.at("model").get<std::string>();
    s.modelPath = (model.is_absolute() ? model : fs::absolute(path).parent_path() / model)
                      .lexically_normal()
                      .string();
    s.modelHash = j.value("model_hash", "");
    s.pipeline = j.at("pipeline").get<std::string>();
    // Files from before rounding verdicts always wrote atol/rtol, chosen or not:
    // without a "check" they open with the default, rounding verdicts.
    const std::string check = j.value("check", std::string("rounding"));
    s.compare.mode =
        check == "fixed" ? CompareOptions::Mode::Fixed : CompareOptions::Mode::Rounding;
    s.compare.tolerance.atol = j.value("atol", s.compare.tolerance.atol);
    s.compare.tolerance.rtol = j.value("rtol", s.compare.tolerance.rtol);
    if (auto stat = ErrorStat::parse(j.value("check_stat", std::string("max"))))
      s.compare.stat = *stat;
    else
      return Expected<SessionFile>::error(stat.message(), path);
    s.seed = j.value("seed", uint64_t(0));
    s.bookmarks = j.value("bookmarks", std::vector<std::string>{});
    s.inputShapes = j.value("input_shapes", std::map<std::string, std::vector<int64_t>>{});
    for (const auto& [name, dims] : s.inputShapes)
      for (int64_t d : dims)
        if (d < 0)
          return Expected<SessionFile>::error("input_shapes: '" + name + "' has a negative dim",
                                              path);
  } catch (const nlohmann::json::exception& e) {
    return Expected<SessionFile>::error(
        std::string("a field is missing or has the wrong type (") + e.what() + ")", path);
  }
  return s;
}

}  // namespace fuselens
