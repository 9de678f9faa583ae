// Fuzz target: session JSON through loadSessionFile (which reads from a path).
#include "session/session_file.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)fuselens::loadSessionFile(fuselens::fuzz::writeScratch(data, size, ".json"));
  return 0;
}
