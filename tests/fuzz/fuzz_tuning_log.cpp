// Fuzz target: tuning-log JSON through TuningLog::parse (schedules included).
#include "codegen/schedule/tuner.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)fuselens::TuningLog::parse(fuselens::fuzz::asString(data, size), "fuzz.json");
  return 0;
}
