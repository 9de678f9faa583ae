// Session: the one API both faces drive. It owns the imported model, the
// pipeline's snapshots, the compiled module, and the last comparison of the
// compiled run with the eager reference. Every long call takes a Progress
// callback and a CancelToken; none of them touches Qt.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codegen/compiler.h"
#include "core/compare/compare.h"
#include "core/onnx/import.h"
#include "session/isolated_compare.h"
#include "passes/pass_manager.h"

namespace fuselens {

struct CompareRow {
  ValueId value;           // in the final (optimized) graph
  std::string name;        // the value's name
  std::string producer;    // the kernel or op that produced it ("graph input" for inputs)
  bool isGraphOutput = false;
  // Produced by a reference-fallback kernel (codegen's KernelInfo::fallback, or
  // a view of such a tensor): not compiled, so never counted as agreement.
  bool fallback = false;
  TensorMetrics metrics;
};

struct CompareReport {
  Tolerance tolerance;
  std::vector<CompareRow> rows;  // in topological order of the producers
  bool allWithin() const;  // every compiled tensor (fallback rows are not judged)
  size_t fallbackCount() const;
  // The first row out of tolerance, in topological order; nullptr when none.
  const CompareRow* firstDivergent() const;
};

struct GraphStats {
  size_t nodes = 0;
  size_t fusedGroups = 0;
  size_t kernels = 0;  // launches a compiled run makes: groups plus unfused compute ops
  std::map<std::string, size_t> opHistogram;
};
GraphStats graphStats(const Graph& g);

class Session {
 public:
  Status open(const std::string& modelPath, const Progress& progress = {},
              const CancelToken& cancel = {});
  bool isOpen() const { return model_ != nullptr; }
  const std::string& modelPath() const { return path_; }
  const ImportedModel& model() const { return *model_; }
  const Graph& original() const { return model_->graph; }

  // Replaces symbolic dims by numbers in the original graph (every value, not
  // only inputs) and re-infers types, so a model with dynamic dims can be
  // compiled and given random inputs. Drops later results. A name the graph
  // does not use is an error naming the ones it does.
  Status bindDims(const std::map<std::string, int64_t>& dims);
  // Fixes every dynamic dim of the graph inputs to the shapes of `inputs` (by
  // input name; inputs not given keep theirs), binding each symbol to one
  // value throughout the graph, and re-infers types, so a model exported with
  // dynamic dims compiles for the tensors it is run on. A rank or static dim
  // that disagrees, or one symbol given two values, is an error naming the
  // input. Returns whether anything changed (then the pipeline must rerun).
  Expected<bool> bindInputShapes(const std::map<std::string, TensorData>& inputs);
  Expected<bool> bindInputShapes(const std::map<std::string, std::vector<int64_t>>& shapes);
  // The shapes bindInputShapes fixed, by input name (saved with the session).
  const std::map<std::string, std::vector<int64_t>>& boundInputShapes() const { return boundShapes_; }

  // Runs the pipeline on the original graph; replaces snapshots and drops any
  // compiled module and report.
  Status optimize(const std::string& pipeline, const Progress& progress = {},
                  const CancelToken& cancel = {});
  const std::string& pipeline() const { return pipeline_; }
  const std::vector<Snapshot>& snapshots() const { return snapshots_; }
  const std::vector<FusionDecision>& decisions() const { return decisions_; }
  // The last snapshot's graph, or the original before optimize().
  const Graph& finalGraph() const;

  Status compile(const CompileOptions& opts = {}, const Progress& progress = {},
                 const CancelToken& cancel = {});
  const CompiledModule* compiled() const { return compiled_.get(); }

  // Seeded random tensors for every graph input (static shapes only).
  // Inputs named in `skip` (given by the user) are left out, dynamic or not.
  Expected<std::map<std::string, TensorData>> randomInputs(uint64_t seed,
                                                           const std::map<std::string, TensorData>& skip = {}) const;

  // Compiles if needed, runs compiled and eager on the same inputs, and compares
  // every kernel-boundary tensor with its origin in the eager run.
  Expected<CompareReport> compare(const std::map<std::string, TensorData>& inputs,
                                  const Tolerance& tol, const Progress& progress = {},
                                  const CancelToken& cancel = {});
  const std::optional<CompareReport>& lastReport() const { return report_; }

  // Compiles if needed and checks every kernel alone, fed the eager tensors of
  // its inputs, beside the end-to-end run (session/isolated_compare.h).
  Expected<IsolatedReport> compareIsolated(const std::map<std::string, TensorData>& inputs,
                                           const Tolerance& tol, const Progress& progress = {},
                                           const CancelToken& cancel = {});
  const std::optional<IsolatedReport>& lastIsolated() const { return isolated_; }

  // The generated code of the final graph as text, for the code pane and
  // export: loop IR and LLVM IR of the compiled module (compiling if needed),
  // CUDA C (codegen/cuda/cuda_c.h), PTX (through NVRTC; an error when it is absent).
  enum class CodeKind { LoopIr, LlvmIr, CudaC, Ptx };
  Expected<std::string> codeText(CodeKind kind, const Progress& progress = {}, const CancelToken& cancel = {});
  // The compiled kernel that runs node `n` of the final graph ("k3_fused_matmul_add");
  // empty before compile or when the node is no kernel of its own.
  std::string kernelNameOf(NodeId n) const;

  // Settings that travel with a saved session.
  Tolerance tolerance;
  uint64_t seed = 0;
  std::vector<std::string> bookmarks;

  // Writes model path + hash, pipeline, tolerances, seed and bookmarks (JSON, atomically).
  Status save(const std::string& sessionPath) const;
  // Opens the saved model and reruns the saved pipeline. A model whose bytes
  // changed since the save still opens; the returned warnings say so.
  Expected<std::vector<Diagnostic>> restore(const std::string& sessionPath, const Progress& progress = {},
                                            const CancelToken& cancel = {});

 private:
  void dropResults();  // the model's graph changed: snapshots, compile and reports are stale
  std::string path_;
  std::map<std::string, std::vector<int64_t>> boundShapes_;
  std::unique_ptr<ImportedModel> model_;
  std::string pipeline_;
  std::vector<Snapshot> snapshots_;
  std::vector<FusionDecision> decisions_;
  std::unique_ptr<CompiledModule> compiled_;
  CompileOptions compileOptions_;  // of the last compile, reused by compareIsolated
  std::optional<CompareReport> report_;
  std::optional<IsolatedReport> isolated_;
};

}  // namespace fuselens
