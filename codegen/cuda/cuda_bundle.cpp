// See cuda_bundle.h: the files of the bundle besides the launcher and runner
// text (cuda_launcher.cpp, cuda_bundle_runner.cpp), and manifest.json.
#include "codegen/cuda/cuda_bundle.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "codegen/cuda/cuda_cublaslt.h"
#include "codegen/export/export_c.h"
#include "core/io/npy.h"
#include "core/support/atomic_file.h"

namespace fuselens {
namespace {

std::string placeText(const CudaArg& a) {
  switch (a.kind) {
    case CudaArg::Kind::Input:
      return "input " + std::to_string(a.index);
    case CudaArg::Kind::Output:
      return "output " + std::to_string(a.index);
    case CudaArg::Kind::Arena:
      return "arena+" + std::to_string(a.index);
    case CudaArg::Kind::Weights:
      return "weights+" + std::to_string(a.index);
  }
  return "?";
}

TensorData asF64(const TensorData& t) {
  TensorData d;
  d.dtype = DType::F64;
  d.shape = t.shape;
  d.bytes.resize(size_t(t.numel()) * 8);
  auto* p = reinterpret_cast<double*>(d.bytes.data());
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = t.at(i);
  return d;
}

nlohmann::json tensorsJson(const std::vector<CudaTensorSpec>& ts, const char* dir) {
  nlohmann::json a = nlohmann::json::array();
  for (size_t i = 0; i < ts.size(); ++i)
    a.push_back({{"name", ts[i].name},
                 {"dtype", std::string(dtypeName(ts[i].dtype))},
                 {"dtype_code", cDTypeCode(ts[i].dtype)},
                 {"shape", ts[i].shape},
                 {"bytes", ts[i].bytes},
                 {"file", std::string(dir) + "/" + std::to_string(i) + ".npy"}});
  return a;
}

nlohmann::json stageJson(const CudaStage& s, const CudaBundleData& data) {
  nlohmann::json j = {
      {"function", s.name}, {"grid", s.grid}, {"block", s.block}, {"extent", s.extent}};
  if (s.gridY > 1 || s.gridZ > 1) j["grid_yz"] = {s.gridY, s.gridZ};  // a 3-D launch
  for (const auto& [sm, rep] : data.ptxas)
    if (auto it = rep.functions.find(s.name); it != rep.functions.end())
      j["ptxas"][sm] = {{"registers", it->second.registers},
                        {"spill_stores", it->second.spillStores},
                        {"spill_loads", it->second.spillLoads},
                        {"stack_bytes", it->second.stackBytes},
                        {"shared_bytes", it->second.sharedBytes}};
  return j;
}

std::string manifestJson(const Graph& g, const CudaLaunchPlan& plan, const CudaBundleData& data,
                         const std::string& name) {
  nlohmann::json groups = nlohmann::json::array();
  for (size_t k = 0; k < plan.module.kernels.size(); ++k) {
    const CudaKernel& kernel = plan.module.kernels[k];
    const Node& node = g.node(plan.module.infos[k].node);
    nlohmann::json stages = nlohmann::json::array(), params = nlohmann::json::array();
    for (const CudaStage& s : kernel.stages) stages.push_back(stageJson(s, data));
    const size_t numInputs = kernel.paramTypes.size() - plan.module.infos[k].outputs.size();
    for (size_t p = 0; p < kernel.paramTypes.size(); ++p)
      params.push_back({{"dtype", std::string(dtypeName(kernel.paramTypes[p]))},
                        {"elements", kernel.paramElements[p]},
                        {"role", p < numInputs ? "input" : "output"},
                        {"place", placeText(plan.args[k][p])}});
    nlohmann::json kernelJson = {{"name", kernel.name},
                                 {"params", params},
                                 {"scratch", placeText(plan.args[k].back())},
                                 {"scratch_bytes", kernel.scratchBytes},
                                 {"launches", stages}};
    if (plan.gemmShapes[k].size() == 3)
      kernelJson["gemm"] = {
          {"m", plan.gemmShapes[k][0]}, {"n", plan.gemmShapes[k][1]}, {"k", plan.gemmShapes[k][2]}};
    auto origins = data.origins.find(node.id.index);
    groups.push_back(
        {{"node", node.name},
         {"op", node.op},
         {"origins",
          origins == data.origins.end() ? std::vector<std::string>{node.name} : origins->second},
         {"kernels", nlohmann::json::array({kernelJson})}});
    if (nlohmann::json lib = cudaLibraryJson(plan, k); !lib.is_null())
      groups.back()["library"] = lib;
  }
  nlohmann::json m = {{"format", "fuselens-cuda-bundle-1"},
                      {"name", name},
                      {"graph", g.name},
                      {"header", name + "_launcher.h"},
                      {"library", "lib" + name + ".so"},
                      {"runner", name + "_runner"},
                      {"weights", {{"file", name + ".weights"}, {"bytes", plan.weights.size()}}},
                      {"memory",
                       {{"arena_bytes", plan.memory.arenaBytes},
                        {"scratch_bytes", plan.memory.scratchBytes},
                        {"device_bytes", plan.memory.blockBytes()},
                        {"tensor_bytes_without_reuse", plan.memory.buffers->unsharedBytes}}},
                      {"inputs", tensorsJson(plan.inputs, "inputs")},
                      {"outputs", tensorsJson(plan.outputs, "reference")},
                      {"groups", groups}};
  return m.dump(2) + "\n";
}

}  // namespace

std::string cudaBundleCMake(const std::string& name) {
  std::string s = R"(# Builds lib@N@.so and @N@_runner with the CUDA toolkit alone:
#   cmake -S . -B build && cmake --build build && build/@N@_runner verify .
# (or ./build.sh, nvcc without CMake)
cmake_minimum_required(VERSION 3.18)
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES 80 90)  # "native" would need a GPU at configure time
endif()
project(@N@_bundle LANGUAGES CXX CUDA)
set(CMAKE_CUDA_STANDARD 17)
if(NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE Release)
endif()
add_library(@N@ SHARED @N@_launcher.cu)
set_target_properties(@N@ PROPERTIES CUDA_RUNTIME_LIBRARY Static POSITION_INDEPENDENT_CODE ON)
add_executable(@N@_runner @N@_runner.cu)
target_link_libraries(@N@_runner PRIVATE @N@)
set_target_properties(@N@_runner PROPERTIES BUILD_RPATH "$ORIGIN")
)";
  for (size_t at; (at = s.find("@N@")) != std::string::npos;) s.replace(at, 3, name);
  return s;
}

Expected<std::vector<std::string>> writeCudaBundle(const Graph& g, const CudaLaunchPlan& plan,
                                                   const CudaBundleData& data,
                                                   const std::string& dir, const std::string& name,
                                                   const std::string& launcherSource,
                                                   const std::string& manifest,
                                                   const std::string& launcherHeader) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  auto write = [&](const std::string& rel, const std::string& text) -> Status {
    const std::string path = (fs::path(dir) / rel).string();
    FL_RETURN_IF_ERROR(writeFileAtomically(path, text));
    files.push_back(path);
    return Status::ok();
  };
  FL_RETURN_IF_ERROR(write(name + "_launcher.h", launcherHeader.empty()
                                                     ? cudaLauncherHeader(plan, name)
                                                     : launcherHeader));
  FL_RETURN_IF_ERROR(write(name + "_launcher.cu", launcherSource.empty()
                                                      ? cudaLauncherSource(plan, name)
                                                      : launcherSource));
  FL_RETURN_IF_ERROR(write(name + "_runner.cu", cudaBundleRunnerSource(name)));
  const bool lt = cudaLibraryUsed(plan);
  FL_RETURN_IF_ERROR(write("CMakeLists.txt", cudaBundleCMake(name) + cudaLibraryCMake(lt, name)));
  FL_RETURN_IF_ERROR(
      write("build.sh",
            "#!/bin/sh\n# Builds lib" + name + ".so and " + name +
                "_runner with nvcc alone (no CMake).\nset -e\ncd \"$(dirname \"$0\")\"\n"
                "NVCC=${NVCC:-nvcc}\nARCH=${ARCH:-\"-gencode arch=compute_80,code=sm_80 -gencode "
                "arch=compute_90,code=sm_90\"}\n"
                "$NVCC -O3 -std=c++17 $ARCH -shared -Xcompiler -fPIC -cudart static -o lib" +
                name + ".so " + name + "_launcher.cu" + (lt ? " -lcublasLt" : "") +
                "\n$NVCC -O3 -std=c++17 -o " + name + "_runner " + name + "_runner.cu -L. -l" +
                name + " -Xlinker -rpath,'$ORIGIN'\n"));
  std::error_code ec;
  fs::permissions(fs::path(dir) / "build.sh", fs::perms::owner_exec | fs::perms::group_exec,
                  fs::perm_options::add, ec);
  FL_RETURN_IF_ERROR(
      write(name + ".weights", std::string(plan.weights.begin(), plan.weights.end())));
  if (!data.inputs.empty() || !data.exact.empty()) {
    fs::create_directories(fs::path(dir) / "inputs", ec);
    fs::create_directories(fs::path(dir) / "reference", ec);
    if (ec) return Status::error("cannot create the bundle's data folders: " + ec.message(), dir);
  }
  auto npy = [&](const std::string& rel, const TensorData& t) -> Status {
    const std::string path = (fs::path(dir) / rel).string();
    FL_RETURN_IF_ERROR(writeNpy(path, t));
    files.push_back(path);
    return Status::ok();
  };
  for (size_t i = 0; i < data.inputs.size(); ++i)
    FL_RETURN_IF_ERROR(npy("inputs/" + std::to_string(i) + ".npy", data.inputs[i]));
  for (size_t i = 0; i < data.exact.size() && i < data.sample.size(); ++i) {
    const std::string base = "reference/" + std::to_string(i);
    FL_RETURN_IF_ERROR(npy(base + ".exact.npy", asF64(data.exact[i])));
    FL_RETURN_IF_ERROR(npy(base + ".sample.npy", asF64(data.sample[i])));
  }
  if (data.storage != DType::F32 && !data.exact.empty())
    FL_RETURN_IF_ERROR(
        write("reference/storage.txt", std::to_string(cDTypeCode(data.storage)) + "\n"));
  if (!plan.library.empty()) FL_RETURN_IF_ERROR(write("library.tsv", cudaLibraryTable(plan)));
  FL_RETURN_IF_ERROR(
      write("manifest.json", manifest.empty() ? manifestJson(g, plan, data, name) : manifest));
  return files;
}

}  // namespace fuselens
