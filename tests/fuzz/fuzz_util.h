// Shared by the fuzz targets: the libFuzzer entry point's signature, and a
// scratch file for parsers that only read from a path (.npy, session files).
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace fuselens::fuzz {

inline std::string asString(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// One file per process, rewritten for every input (libFuzzer runs inputs one
// at a time; -fork / -jobs workers are separate processes), removed at exit.
inline std::string writeScratch(const uint8_t* data, size_t size, const char* suffix) {
  struct Scratch {
    std::string path;
    ~Scratch() { std::remove(path.c_str()); }
  };
  static Scratch scratch{"/tmp/fuselens-fuzz-" + std::to_string(getpid()) + suffix};
  std::ofstream(scratch.path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), std::streamsize(size));
  return scratch.path;
}

}  // namespace fuselens::fuzz
