// The CUDA toolkit's command-line tools (ptxas, nvcc), found and run as child
// processes: FuseLens links none of them, so a machine without the toolkit
// still builds and starts, and every call that needs one says which is missing.
#pragma once

#include <filesystem>
#include <string>

namespace fuselens {

// The path of toolkit program `name` ("ptxas", "nvcc"): $CUDA_HOME/bin,
// /usr/local/cuda/bin, then the PATH; empty when none is executable.
std::string findCudaTool(const std::string& name);

// Runs `command` through /bin/sh with stderr merged into `output`; returns the
// exit status (-1 when it could not start).
int runToolCommand(const std::string& command, std::string* output);

// `s` in single quotes for /bin/sh.
std::string shellQuoted(const std::string& s);

// The first line of a tool's output that says error or fatal, else its first
// line: the one sentence a failed tool run is reported with.
std::string firstErrorLine(const std::string& log);

// A private temporary folder for one tool run ("fuselens-<tag>-<pid>-<n>"),
// removed with the object: tools read and write files, and exports run
// several at once. ok() is false when it could not be created.
class ToolScratchDir {
 public:
  explicit ToolScratchDir(const std::string& tag);
  ~ToolScratchDir();
  ToolScratchDir(const ToolScratchDir&) = delete;
  ToolScratchDir& operator=(const ToolScratchDir&) = delete;
  bool ok() const { return !path_.empty(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace fuselens
