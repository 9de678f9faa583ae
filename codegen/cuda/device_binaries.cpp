#include "codegen/cuda/device_binaries.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "codegen/cuda/toolkit.h"

namespace fuselens {
namespace {

namespace fs = std::filesystem;

bool writeBytes(const fs::path& p, const std::string& bytes) {
  std::ofstream f(p, std::ios::binary);
  f << bytes;
  return bool(f);
}

Expected<std::string> readBytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) return Status::error("cannot read " + p.string());
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

Expected<std::string> makeFatbin(const std::map<std::string, std::string>& cubins,
                                 const std::string& ptx, const std::string& ptxArch) {
  const std::string tool = findCudaTool("fatbinary");
  if (tool.empty())
    return Status::error(
        "fatbinary is not installed (looked in $CUDA_HOME/bin, /usr/local/cuda/bin and the PATH)");
  ToolScratchDir dir("fatbin");
  if (!dir.ok()) return Status::error("cannot create a temporary folder for fatbinary");
  std::string cmd =
      shellQuoted(tool) + " --64 --create=" + shellQuoted((dir.path() / "out.fatbin").string());
  for (const auto& [sm, bytes] : cubins) {
    const fs::path f = dir.path() / (sm + ".cubin");
    if (!writeBytes(f, bytes)) return Status::error("cannot write " + f.string());
    cmd += " --image3=kind=elf,sm=" + sm.substr(3) + ",file=" + shellQuoted(f.string());
  }
  if (!ptx.empty()) {
    const fs::path f = dir.path() / "kernels.ptx";
    if (!writeBytes(f, ptx)) return Status::error("cannot write " + f.string());
    const std::string vsm = ptxArch.rfind("compute_", 0) == 0 ? ptxArch.substr(8) : ptxArch;
    cmd += " --image3=kind=ptx,sm=" + vsm + ",file=" + shellQuoted(f.string());
  }
  std::string log;
  if (runToolCommand(cmd, &log) != 0)
    return Status::error("fatbinary failed: " + firstErrorLine(log));
  return readBytes(dir.path() / "out.fatbin");
}

Expected<std::string> disassembleCubin(const std::string& cubin) {
  std::string tool = findCudaTool("cuobjdump");
  std::string args = " -sass ";
  if (tool.empty()) {
    tool = findCudaTool("nvdisasm");
    args = " -c ";
  }
  if (tool.empty())
    return Status::error(
        "SASS needs cuobjdump or nvdisasm, and neither is installed (looked in $CUDA_HOME/bin, "
        "/usr/local/cuda/bin and the PATH); the cubin itself is written by `export --target "
        "cuda`");
  ToolScratchDir dir("sass");
  if (!dir.ok()) return Status::error("cannot create a temporary folder for SASS");
  const fs::path f = dir.path() / "kernels.cubin";
  if (!writeBytes(f, cubin)) return Status::error("cannot write " + f.string());
  std::string out;
  if (runToolCommand(shellQuoted(tool) + args + shellQuoted(f.string()), &out) != 0)
    return Status::error(fs::path(tool).filename().string() + " failed: " + firstErrorLine(out));
  return out;
}

}  // namespace fuselens
