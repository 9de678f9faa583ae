// Fuzz target: ONNX model bytes through the importer (protobuf parse, op
// canonicalization, shape inference), then the verifier and the printer.
#include "core/ir/printer.h"
#include "core/ir/verifier.h"
#include "core/onnx/import.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // No base folder: external data is refused instead of read from disk.
  auto model = fuselens::importOnnxBytes(fuselens::fuzz::asString(data, size), "fuzz.onnx", "");
  if (!model) return 0;
  (void)fuselens::verifyGraph(model->graph);
  (void)fuselens::printGraph(model->graph);
  return 0;
}
