#include "codegen/cuda/ptxas.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "codegen/cuda/toolkit.h"

namespace fuselens {

std::string findPtxas(std::string* why) {
  std::string p = findCudaTool("ptxas");
  if (p.empty() && why) *why = "ptxas is not installed: set CUDA_HOME or install the CUDA toolkit";
  return p;
}

std::string virtualArchOf(const std::string& sm) {
  return sm.rfind("sm_", 0) == 0 ? "compute_" + sm.substr(3) : sm;
}

std::map<std::string, PtxasFigures> parsePtxasLog(const std::string& log) {
  // ptxas -v prints, per entry function:
  //   ptxas info    : Function properties for NAME
  //       S bytes stack frame, A bytes spill stores, B bytes spill loads
  //   ptxas info    : Used R registers, used N barriers, M bytes smem, ...
  static const std::regex props(R"(Function properties for (\S+))");
  static const std::regex frame(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used(R"(Used (\d+) registers)");
  static const std::regex smem(R"((\d+) bytes smem)");
  static const std::regex entry(R"(Compiling entry function '([^']+)')");
  std::map<std::string, PtxasFigures> out;
  std::string current;
  std::istringstream in(log);
  std::smatch m;
  for (std::string line; std::getline(in, line);) {
    if (std::regex_search(line, m, entry) || std::regex_search(line, m, props)) {
      current = m[1];
      out[current];
    } else if (!current.empty() && std::regex_search(line, m, frame)) {
      PtxasFigures& f = out[current];
      f.stackBytes = std::stoll(m[1]);
      f.spillStores = std::stoll(m[2]);
      f.spillLoads = std::stoll(m[3]);
    } else if (!current.empty() && std::regex_search(line, m, used)) {
      PtxasFigures& f = out[current];
      f.registers = std::stoi(m[1]);
      if (std::regex_search(line, m, smem)) f.sharedBytes = std::stoll(m[1]);
    }
  }
  return out;
}

Expected<PtxasReport> runPtxas(const std::string& ptx, const std::string& sm) {
  std::string why;
  const std::string ptxas = findPtxas(&why);
  if (ptxas.empty()) return Status::error(why);
  ToolScratchDir dir("ptxas");
  if (!dir.ok()) return Status::error("cannot create a temporary folder for ptxas");
  const std::filesystem::path in = dir.path() / "kernels.ptx";
  const std::filesystem::path out = dir.path() / "kernels.cubin";
  {
    std::ofstream f(in);
    f << ptx;
    if (!f) return Status::error("cannot write " + in.string() + " for ptxas");
  }
  const auto start = std::chrono::steady_clock::now();
  std::string log;
  const int rc = runToolCommand(shellQuoted(ptxas) + " -arch=" + shellQuoted(sm) + " -v " +
                                    shellQuoted(in.string()) + " -o " + shellQuoted(out.string()),
                                &log);
  if (rc != 0)
    return Status::error("ptxas rejected the PTX for " + sm + ": " + firstErrorLine(log));
  std::ifstream f(out, std::ios::binary);
  std::ostringstream cubin;
  cubin << f.rdbuf();
  PtxasReport r;
  r.arch = sm;
  r.functions = parsePtxasLog(log);
  r.cubin = cubin.str();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace fuselens
