// Running shell commands from the export tests (building and running a plain C
// program against an exported .so).
#pragma once

#include <cstdio>
#include <string>

namespace fuselens::testing {

// The command's stdout and stderr together; *rc is its exit status (-1: not run).
inline std::string runShell(const std::string& cmd, int* rc) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  char buf[512];
  while (p && std::fgets(buf, sizeof buf, p)) out += buf;
  *rc = p ? pclose(p) : -1;
  return out;
}

inline bool haveCc() {
  int rc = 0;
  runShell("cc --version", &rc);
  return rc == 0;
}

}  // namespace fuselens::testing
