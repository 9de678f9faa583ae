// Fuzz target: IR text through the parser, then the verifier and a print of
// what was read (printing visits every value and attribute the parser made).
#include "core/ir/printer.h"
#include "core/ir/verifier.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto graph = fuselens::parseGraph(fuselens::fuzz::asString(data, size));
  if (!graph) return 0;
  (void)fuselens::verifyGraph(*graph);
  (void)fuselens::printGraph(*graph, {.elideConstantsOver = -1});
  return 0;
}
