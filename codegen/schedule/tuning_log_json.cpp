// Reading a tuning log's JSON text, apart from tuner.cpp so that the fuzz
// target for it (tests/fuzz/fuzz_tuning_log.cpp) needs none of the tuner's
// measuring. The log comes from disk and may be hand-edited: a field of the
// wrong type is an error, never an exception out of the reader.
#include <nlohmann/json.hpp>

#include "codegen/schedule/tuner.h"

namespace fuselens {

Expected<TuningLog> TuningLog::parse(const std::string& json, const std::string& where) {
  auto j = nlohmann::json::parse(json, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("entries") || !j["entries"].is_array())
    return Status::error("not a FuseLens tuning log (a JSON object with \"entries\")", where);
  TuningLog log;
  for (const auto& e : j["entries"]) {
    if (!e.is_object() || !e.contains("schedule")) continue;
    auto s = scheduleFromJson(e["schedule"].dump());
    if (!s) return Status::error("bad schedule in the tuning log: " + s.message(), where);
    TuningEntry t;
    try {
      t.target = e.value("target", "");
      t.signature = e.value("signature", "");
      t.seconds = e.value("seconds", 0.0);
      t.defaultSeconds = e.value("default_seconds", 0.0);
    } catch (const nlohmann::json::exception& x) {
      return Status::error(
          std::string("a tuning log entry has a field of the wrong type (") + x.what() + ")",
          where);
    }
    t.schedule = *s;
    log.entries_.push_back(std::move(t));
  }
  return log;
}

}  // namespace fuselens
