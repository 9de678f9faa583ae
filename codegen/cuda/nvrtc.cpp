#include "codegen/cuda/nvrtc.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <type_traits>
#include <vector>

namespace fuselens {
namespace {

// The handful of NVRTC entry points used, declared here so no CUDA header is
// needed to build (nvrtcResult is an int-sized enum; 0 is success).
using Program = void*;
struct Nvrtc {
  int (*create)(Program*, const char*, const char*, int, const char* const*,
                const char* const*) = nullptr;
  int (*compile)(Program, int, const char* const*) = nullptr;
  int (*logSize)(Program, size_t*) = nullptr;
  int (*log)(Program, char*) = nullptr;
  int (*ptxSize)(Program, size_t*) = nullptr;
  int (*ptx)(Program, char*) = nullptr;
  int (*destroy)(Program*) = nullptr;
  const char* (*errorString)(int) = nullptr;
  std::string error;
};

const Nvrtc& nvrtc() {
  static Nvrtc n;
  static std::once_flag once;
  std::call_once(once, [] {
    std::vector<std::string> names = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
    for (const char* root : {static_cast<const char*>(std::getenv("CUDA_HOME")), "/usr/local/cuda"})
      if (root) names.push_back(std::string(root) + "/lib64/libnvrtc.so");
    void* lib = nullptr;
    for (const std::string& name : names)
      if ((lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
    if (!lib) {
      n.error = "NVRTC (libnvrtc.so) is not installed: set CUDA_HOME or install the CUDA toolkit";
      return;
    }
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      if (!fn && n.error.empty()) n.error = std::string("libnvrtc lacks ") + name;
    };
    sym(n.create, "nvrtcCreateProgram");
    sym(n.compile, "nvrtcCompileProgram");
    sym(n.logSize, "nvrtcGetProgramLogSize");
    sym(n.log, "nvrtcGetProgramLog");
    sym(n.ptxSize, "nvrtcGetPTXSize");
    sym(n.ptx, "nvrtcGetPTX");
    sym(n.destroy, "nvrtcDestroyProgram");
    sym(n.errorString, "nvrtcGetErrorString");
  });
  return n;
}

}  // namespace

bool nvrtcAvailable(std::string* why) {
  const Nvrtc& n = nvrtc();
  if (why) *why = n.error;
  return n.error.empty();
}

namespace {

// NVRTC's first error line, "k.cu(42): error: ...", with generated line 42
// itself after it: the user reads the error against the code FuseLens wrote.
std::string withSourceLine(const std::string& first, const std::string& source) {
  size_t open = first.find('('), close = first.find("):");
  if (open == std::string::npos || close == std::string::npos || close <= open + 1) return first;
  const std::string digits = first.substr(open + 1, close - open - 1);
  if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9)
    return first;
  long line = std::stol(digits);
  size_t at = 0;
  for (long k = 1; k < line && at != std::string::npos; ++k) {
    at = source.find('\n', at);
    if (at != std::string::npos) ++at;
  }
  if (at == std::string::npos || at >= source.size()) return first;
  std::string text = source.substr(at, source.find('\n', at) - at);
  size_t lead = text.find_first_not_of(" \t");
  text = lead == std::string::npos ? "" : text.substr(lead);
  if (text.size() > 160) text = text.substr(0, 157) + "...";
  return first + " (line " + digits + ": " + text + ")";
}

}  // namespace

Expected<std::string> compileToPtx(const std::string& source, const std::string& arch,
                                   const std::string& name) {
  const Nvrtc& n = nvrtc();
  if (!n.error.empty()) return Status::error(n.error);
  Program prog = nullptr;
  if (int r = n.create(&prog, source.c_str(), name.c_str(), 0, nullptr, nullptr); r != 0)
    return Status::error(std::string("NVRTC could not create a program: ") + n.errorString(r),
                         name);
  const std::string archOpt = "--gpu-architecture=" + arch;
  const char* opts[] = {archOpt.c_str(), "--std=c++17", "-default-device"};
  int r = n.compile(prog, 3, opts);
  std::string log;
  size_t size = 0;
  if (n.logSize(prog, &size) == 0 && size > 1) {
    log.resize(size);
    n.log(prog, log.data());
    log.resize(size - 1);
  }
  std::string ptx;
  if (r == 0 && n.ptxSize(prog, &size) == 0) {
    ptx.resize(size);
    n.ptx(prog, ptx.data());
    if (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
  }
  n.destroy(&prog);
  if (r != 0) {
    size_t cut = log.find('\n');
    return Status::error(
        "NVRTC rejected the CUDA C: " + (log.empty() ? std::string(n.errorString(r))
                                                     : withSourceLine(log.substr(0, cut), source)),
        name);
  }
  return ptx;
}

}  // namespace fuselens
