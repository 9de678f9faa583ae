// What a face asks of Session, as plain data: the CLI fills these from its
// flags, the GUI from its dialogs, and Session does the work, so the two faces
// never repeat a sequence (open -> bind dims -> optimize) or reach below it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "session/input_shapes.h"

namespace fuselens {

// open: the model, its symbolic dims bound (--dim), its dynamic inputs fixed
// (--shape), and the pipeline run.
struct OpenRequest {
  std::string model;
  std::map<std::string, int64_t> dims;
  InputShapes shapes;
  std::string pipeline;  // empty: no pass runs (the eager engine needs none)
  // >= 0: every symbolic dim still unbound after `dims` and `shapes` is bound
  // to this (--dims-default N), except those named in `keepSymbolic` (a sweep's dim).
  int64_t dimsDefault = -1;
  std::vector<std::string> keepSymbolic;
};

// Input tensors: .npy files by input name, and seeded random values for the
// rest when `random` is set or when no file was given at all.
struct InputRequest {
  std::map<std::string, std::string> files;  // input name -> .npy path
  bool random = false;
  uint64_t seed = 0;
};

enum class Engine { Eager, Cpu, Cuda };  // Cuda: the driver API, loaded at run time

struct CpuExportRequest {
  std::string outDir;
  std::string name = "model";
  int optLevel = 3;
  std::string cpu = "native";  // or x86-64, x86-64-v2, x86-64-v3, x86-64-v4
  std::string tuningLog;       // empty: none
  bool link = true;            // false: stop after .o/.c/.h (no C compiler needed)
};

struct CudaExportRequest {
  std::string outDir;
  std::string name = "model";
  std::string arch = "compute_90";
  std::vector<std::string> ptxasArchs = {"sm_80", "sm_90"};  // empty: no ptxas figures
  // MatMul/Gemm groups through cuBLASLt (codegen/cuda/cuda_cublaslt.h): "none"
  // or "cublaslt", and per group NAME=cublaslt|generated overriding it.
  std::string library = "none";
  std::vector<std::string> libraryGroups;
  // Registers per thread a kernel may use before ptxas feedback splits its
  // group (codegen/cuda/cuda_register_feedback.h); 0: its launch's limit.
  int64_t registerBudget = 0;
};

// run / compare --engine cuda (Session::cudaRun): MatMul/Gemm groups through
// cuBLASLt, in export's words (CudaExportRequest::library and libraryGroups).
struct CudaRunRequest {
  std::string library = "none";
  std::vector<std::string> libraryGroups;
};

struct ExportFiles {
  std::vector<std::string> files;  // written, in order
  std::string note;                // e.g. why no .ptx was written; empty when none
  // CUDA: group members ptxas feedback would split before (fuse-ops{split=...}).
  std::vector<std::string> cudaSplits;
};

struct TuneRequest {
  double budgetSeconds = 30;
  std::string logPath = "fuselens_tuning.json";
};

// "name=value" items as --dim takes them: each name once, a non-negative integer.
Expected<std::map<std::string, int64_t>> parseDimBindings(const std::vector<std::string>& items);

}  // namespace fuselens
