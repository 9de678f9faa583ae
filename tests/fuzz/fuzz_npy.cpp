// Fuzz target: .npy file bytes through readNpy (which reads from a path).
#include "core/io/npy.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto t = fuselens::readNpy(fuselens::fuzz::writeScratch(data, size, ".npy"));
  // Reading every element checks that the shape really covers the bytes read.
  if (t && t->numel() > 0) (void)t->at(t->numel() - 1);
  return 0;
}
