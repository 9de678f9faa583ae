#include "codegen/cuda/toolkit.h"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace fuselens {

std::string findCudaTool(const std::string& name) {
  for (const char* root : {static_cast<const char*>(std::getenv("CUDA_HOME")), "/usr/local/cuda"})
    if (root) {
      std::string p = std::string(root) + "/bin/" + name;
      if (access(p.c_str(), X_OK) == 0) return p;
    }
  if (const char* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    for (std::string d; std::getline(dirs, d, ':');)
      if (!d.empty() && access((d + "/" + name).c_str(), X_OK) == 0) return d + "/" + name;
  }
  return {};
}

int runToolCommand(const std::string& command, std::string* output) {
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;)
    if (output) output->append(buf, n);
  const int rc = pclose(p);
  return rc == -1 ? -1 : (WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc));
}

std::string shellQuoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string firstErrorLine(const std::string& log) {
  std::istringstream s(log);
  std::string first, line;
  std::getline(s, first);
  for (std::istringstream all(log); std::getline(all, line);)
    if (line.find("error") != std::string::npos || line.find("fatal") != std::string::npos)
      return line;
  return first;
}

ToolScratchDir::ToolScratchDir(const std::string& tag) {
  namespace fs = std::filesystem;
  static std::atomic<int> runs{0};
  std::error_code ec;
  path_ = fs::temp_directory_path(ec) /
          ("fuselens-" + tag + "-" + std::to_string(getpid()) + "-" + std::to_string(++runs));
  fs::create_directories(path_, ec);
  if (ec) path_.clear();
}

ToolScratchDir::~ToolScratchDir() {
  std::error_code ec;
  if (!path_.empty()) std::filesystem::remove_all(path_, ec);
}

}  // namespace fuselens
