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
#include "codegen/schedule/tuner.h"
#include "core/compare/compare.h"
#include "core/onnx/import.h"
#include "passes/pass_manager.h"
#include "session/bisect_report.h"
#include "session/compare_report.h"
#include "session/explain_report.h"
#include "session/isolated_compare.h"
#include "session/perturb.h"
#include "session/profile_report.h"
#include "session/provenance.h"
#include "session/requests.h"
#include "session/tap_compare.h"
#include "session/tensor_inspect.h"

namespace fuselens {

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
  // Adopts a graph built in memory (benchmarks, generators, tests) as the
  // model, marked as the original; `label` stands for the model path.
  Status open(Graph graph, const std::string& label);
  // Opens the model, binds its dims, fixes its dynamic inputs and runs the
  // pipeline: what both faces do when the user opens a model.
  Status open(const OpenRequest& request, const Progress& progress = {},
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
  // The symbolic dims the original graph still has, sorted.
  std::vector<std::string> symbolicDims() const;
  // What the last open bound through OpenRequest::dimsDefault (name -> value).
  const std::map<std::string, int64_t>& defaultedDims() const { return defaultedDims_; }
  // Fixes every dynamic dim of the graph inputs to the shapes of `inputs` (by
  // input name; inputs not given keep theirs), binding each symbol to one
  // value throughout the graph, and re-infers types, so a model exported with
  // dynamic dims compiles for the tensors it is run on. A rank or static dim
  // that disagrees, or one symbol given two values, is an error naming the
  // input. Returns whether anything changed (then the pipeline must rerun).
  Expected<bool> bindInputShapes(const std::map<std::string, TensorData>& inputs);
  Expected<bool> bindInputShapes(const std::map<std::string, std::vector<int64_t>>& shapes);
  // The shapes bindInputShapes fixed, by input name (saved with the session).
  const std::map<std::string, std::vector<int64_t>>& boundInputShapes() const {
    return boundShapes_;
  }
  // Fixes the model's dynamic input dims to the tensors' shapes and, when that
  // changed anything, reruns the current pipeline: compiling needs static shapes.
  Status fitToInputs(const std::map<std::string, TensorData>& inputs, const Progress& progress = {},
                     const CancelToken& cancel = {});

  // Runs the pipeline on the original graph; replaces snapshots and drops any
  // compiled module and report.
  Status optimize(const std::string& pipeline, const Progress& progress = {},
                  const CancelToken& cancel = {});
  const std::string& pipeline() const { return pipeline_; }
  const std::vector<Snapshot>& snapshots() const { return snapshots_; }
  const std::vector<FusionDecision>& decisions() const { return decisions_; }
  // Decisions filtered to a node or group, kernel boundaries with their
  // reasons, and what removed a node (session/explain_report.h).
  Expected<ExplainReport> explain(const ExplainQuery& query) const;
  // The last snapshot's graph, or the original before optimize().
  const Graph& finalGraph() const;

  Status compile(const CompileOptions& opts = {}, const Progress& progress = {},
                 const CancelToken& cancel = {});
  const CompiledModule* compiled() const { return compiled_.get(); }
  // One line on the last compile: kernels unique, cached, compiled; seconds. Empty before.
  std::string compileSummary() const;
  // Compiles if needed and times every kernel against the machine's roofs
  // (session/profile_report.h, session_profile.cpp).
  Expected<ProfileReport> profile(const std::map<std::string, TensorData>& inputs,
                                  const ProfileRequest& request, const Progress& progress = {},
                                  const CancelToken& cancel = {});
  // The last profile of the compiled module; dropped with it.
  const std::optional<ProfileReport>& lastProfile() const { return profile_; }
  // The last profile's kernel times (median seconds) by the name of the value
  // each kernel writes first, so views can place them on the ops that make
  // those values (collapsed scopes sum them). Empty without a profile.
  std::map<std::string, double> kernelSecondsByValue() const;

  // Seeded random tensors for every graph input (static shapes only).
  // Inputs named in `skip` (given by the user) are left out, dynamic or not.
  Expected<std::map<std::string, TensorData>> randomInputs(
      uint64_t seed, const std::map<std::string, TensorData>& skip = {}) const;

  // The tensors a run is fed: .npy files read and checked against the model's
  // input names, seeded random values for the others (see InputRequest).
  Expected<std::map<std::string, TensorData>> inputs(const InputRequest& request) const;

  // Runs the model and returns every graph output by name: the eager reference
  // on the original graph, or the compiled module (compiling if needed, after
  // fitting dynamic inputs to the tensors given).
  Expected<std::map<std::string, TensorData>> run(Engine engine,
                                                  const std::map<std::string, TensorData>& inputs,
                                                  const Progress& progress = {},
                                                  const CancelToken& cancel = {});

  // The CUDA engine (codegen/cuda_runtime/): the final graph's kernels run on
  // device 0 and every graph output is judged against the reference runs as
  // compare judges it. Without a driver or a device: one sentence, before any
  // compile.
  Expected<CompareReport> compareCuda(const std::map<std::string, TensorData>& inputs,
                                      const CompareOptions& opts, const Progress& progress = {},
                                      const CancelToken& cancel = {});

  // Compiles if needed, runs compiled and eager on the same inputs, and compares
  // every kernel-boundary tensor with its origin in the eager run.
  Expected<CompareReport> compare(const std::map<std::string, TensorData>& inputs,
                                  const CompareOptions& opts, const Progress& progress = {},
                                  const CancelToken& cancel = {});
  const std::optional<CompareReport>& lastReport() const { return report_; }

  // Compiles if needed and compares values that fused groups compute inside
  // themselves (by original tensor name) with eager, each through its group's
  // tapped variant (session/tap_compare.h). A name that is no such value fails
  // the whole call with one sentence, before anything runs. The rows join
  // lastTaps() (a tap asked for again replaces its row) until the next compile.
  Expected<TapReport> compareTaps(const std::vector<std::string>& names,
                                  const std::map<std::string, TensorData>& inputs,
                                  const CompareOptions& opts, const Progress& progress = {},
                                  const CancelToken& cancel = {});
  const std::optional<TapReport>& lastTaps() const { return taps_; }
  // The tensors of the last compare, for the tensor inspector
  // (session/tensor_inspect.h, session_tensors.cpp): `name` is a value of the
  // final graph (a kernel boundary: eager, exact and compiled) or of the
  // imported graph (eager and exact only). An error sentence when no compare
  // ran, the tensors were over the budget, or no value has that name.
  Expected<InspectedTensor> inspectTensor(const std::string& name) const;
  // Compare keeps its runs' tensors up to this many bytes; past it, only the
  // kernel-boundary tensors, and past that none (keptTensorsNote says which).
  size_t tensorBudgetBytes = size_t(2) << 30;
  // "" when every tensor of the last compare is kept; else one sentence.
  const std::string& keptTensorsNote() const { return keptNote_; }

  // Compiles if needed and checks every kernel alone, fed the eager tensors of
  // its inputs, beside the end-to-end run (session/isolated_compare.h).
  Expected<IsolatedReport> compareIsolated(const std::map<std::string, TensorData>& inputs,
                                           const CompareOptions& opts,
                                           const Progress& progress = {},
                                           const CancelToken& cancel = {});
  const std::optional<IsolatedReport>& lastIsolated() const { return isolated_; }

  // Which fused groups, or which pass, take the watched graph outputs beyond
  // the error rounding explains (session/bisect_report.h). Compiles if needed.
  Expected<BisectReport> bisect(const std::map<std::string, TensorData>& inputs,
                                const BisectRequest& request, const CompareOptions& opts,
                                const Progress& progress = {}, const CancelToken& cancel = {});

  // The generated code of the final graph as text, for the code pane and
  // export: loop IR and LLVM IR of the compiled module (compiling if needed),
  // CUDA C (codegen/cuda/cuda_c.h), PTX (through NVRTC; an error when it is absent).
  enum class CodeKind { Ir, LoopIr, LlvmIr, Asm, CudaC, Ptx };
  Expected<std::string> codeText(CodeKind kind, const Progress& progress = {},
                                 const CancelToken& cancel = {});
  // codeText with where each kernel's lines came from (session/provenance.h):
  // loop IR, LLVM IR and (on x86 and AArch64 hosts) assembly get a
  // `from: <onnx node names>` comment before each kernel; every kind gets the
  // kernels' line spans once compiled.
  Expected<AnnotatedCode> annotatedCode(CodeKind kind, const Progress& progress = {},
                                        const CancelToken& cancel = {});
  // The compiled kernel that runs node `n` of the final graph ("k3_fused_matmul_add");
  // empty before compile or when the node is no kernel of its own.
  std::string kernelNameOf(NodeId n) const;
  // One sentence per kernel that is not plain compiled code (a reference
  // fallback, a driver kernel), for both faces to print after a compile.
  std::vector<std::string> kernelNotes() const;

  // Ahead-of-time artifacts of the final graph, each file written atomically.
  Expected<ExportFiles> exportCpu(const CpuExportRequest& request, const Progress& progress = {},
                                  const CancelToken& cancel = {});
  Expected<ExportFiles> exportCuda(const CudaExportRequest& request, const Progress& progress = {},
                                   const CancelToken& cancel = {});
  // An error naming the CPU levels when `name` is none of them; checked before
  // a model is read.
  static Status checkCpuName(const std::string& name);
  // Measures schedule candidates for every kernel of the final graph and keeps
  // the fastest in the tuning log (read, updated and saved).
  Expected<std::vector<KernelTuneResult>> tune(const TuneRequest& request,
                                               const Progress& progress = {},
                                               const CancelToken& cancel = {});

  // Settings that travel with a saved session.
  CompareOptions compareOptions;  // rounding verdicts unless the user set tolerances
  // Fault injection for compare and compareIsolated (session/perturb.h): kernel -> EPS.
  // Not saved with the session: a perturbed run is an experiment, not a setting.
  Perturbations perturbations;
  CudaRunRequest cudaRun;  // Engine::Cuda: cuBLASLt offload, not saved either (requests.h)
  uint64_t seed = 0;
  std::vector<std::string> bookmarks;

  // Writes model path + hash, pipeline, tolerances, seed and bookmarks (JSON, atomically).
  Status save(const std::string& sessionPath) const;
  // Opens the saved model and reruns the saved pipeline. A model whose bytes
  // changed since the save still opens; the returned warnings say so.
  Expected<std::vector<Diagnostic>> restore(const std::string& sessionPath,
                                            const Progress& progress = {},
                                            const CancelToken& cancel = {});

 private:
  void dropResults();  // the model's graph changed: snapshots, compile and reports are stale
  // Engine::Cuda: the final graph's outputs (in order) from a run on device 0.
  Expected<std::vector<TensorData>> runCuda(const std::map<std::string, TensorData>& inputs,
                                            const Progress& progress, const CancelToken& cancel);
  // What compare and compareIsolated both start from: the eager reference runs
  // and the compiled run with any perturbations, reported at the two fractions.
  struct ComparedRuns;
  Expected<ComparedRuns> compareRuns(const std::map<std::string, TensorData>& inputs,
                                     const CompareOptions& opts, double referenceAt,
                                     double compiledAt, const Progress& progress,
                                     const CancelToken& cancel);
  std::string path_;
  std::map<std::string, std::vector<int64_t>> boundShapes_;
  std::map<std::string, int64_t> defaultedDims_;
  std::unique_ptr<ImportedModel> model_;
  std::string pipeline_;
  std::vector<Snapshot> snapshots_;
  std::vector<FusionDecision> decisions_;
  std::unique_ptr<CompiledModule> compiled_;
  CompileOptions compileOptions_;  // of the last compile, reused by compareIsolated
  std::optional<CompareReport> report_;
  // The last compare's runs, as far as tensorBudgetBytes allows (keepRuns).
  std::shared_ptr<const ComparedRuns> runs_;
  std::string keptNote_;
  void keepRuns(ComparedRuns runs);
  std::optional<IsolatedReport> isolated_;
  std::optional<TapReport> taps_;
  std::optional<ProfileReport> profile_;
};

}  // namespace fuselens
