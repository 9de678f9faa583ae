// Session's CUDA engine: the final graph's launch plan (the exported bundle's,
// codegen/cuda/cuda_launch_plan.h) compiled by NVRTC and run through the
// driver API (codegen/cuda_runtime/cuda_executor.h), and its outputs judged
// against the reference runs with compare's own verdicts.
#include "codegen/cuda/cuda_launch_plan.h"
#include "codegen/cuda/nvrtc.h"
#include "codegen/cuda_runtime/cuda_executor.h"
#include "codegen/cuda_runtime/cuda_program_run.h"
#include "core/compare/storage_floor.h"
#include "session/cuda_library.h"
#include "session/reference_runs.h"
#include "session/session.h"

namespace fuselens {

Expected<std::vector<TensorData>> Session::runCuda(const std::map<std::string, TensorData>& inputs,
                                                   const Progress& progress,
                                                   const CancelToken& cancel) {
  if (!model_) return Status::error("no model is open");
  // A bad flag value, then "no device", before minutes of compiling.
  auto library = cudaLibraryOptions(cudaRun);
  if (!library) return library.status();
  std::string why;
  if (!cudaDeviceAvailable(&why)) return Status::error(why, "--engine cuda");
  FL_RETURN_IF_ERROR(fitToInputs(inputs, progress, cancel));
  if (cudaNeedsProgram(finalGraph()) && !library->any()) {
    // If/Loop: the host decides between kernel segments (cuda_program.h).
    auto program = planCudaProgram(finalGraph(), progress, cancel);
    if (!program) return program.status();
    auto feed = cudaFeed(finalGraph(), inputs);
    if (!feed) return feed.status();
    report(progress, 0.9, "run on the GPU");
    auto r = runCudaProgram(*program, *feed, "compute_80", cancel);
    if (!r) return r.status();
    return std::move(r->outputs);
  }
  // With offload asked, a graph with control flow is refused here in one sentence.
  auto plan = cudaPlanWithLibrary(*this, *library, progress, cancel);
  if (!plan) return plan.status();
  report(progress, 0.7, "NVRTC: CUDA C to PTX");
  // compute_80 PTX: the driver compiles it for the device at hand (sm_80 and later).
  auto ptx = compileToPtx(plan->module.source, "compute_80");
  if (!ptx) return ptx.status();
  auto feed = cudaFeed(finalGraph(), inputs);
  if (!feed) return feed.status();
  report(progress, 0.9, "run on the GPU");
  auto r = runOnCuda(*plan, *ptx, *feed, cancel);
  if (!r) return r.status();
  return std::move(r->outputs);
}

Expected<CompareReport> Session::compareCuda(const std::map<std::string, TensorData>& inputs,
                                             const CompareOptions& opts, const Progress& progress,
                                             const CancelToken& cancel) {
  auto actual = runCuda(inputs, progress, cancel);
  if (!actual) return actual.status();
  auto refs = runReferences(original(), inputs, opts.rounding(), cancel);
  if (!refs) return refs.status();
  CompareReport rep;
  rep.options = opts;
  rep.referenceNote = refs->note;
  const Graph& g = finalGraph();
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    const Value& v = g.value(g.outputs()[i]);
    const TensorData* eager = refs->eager.find(v.origin);
    if (!eager) return Status::error("output '" + v.name + "' has no reference tensor");
    CompareRow row;
    row.value = v.id;
    row.name = v.name;
    row.producer = "CUDA";
    row.isGraphOutput = true;
    row.metrics = compareTensors(*eager, (*actual)[i], opts.tolerance, opts.stat);
    if (opts.rounding()) {
      row.rounding = checkRoundingStored(storagePrecision(original(), g), *refs->exactOf(v.origin),
                                         *refs->sampleOf(v.origin), Layout{}, (*actual)[i],
                                         Layout{}, opts, eager);
      row.verdict = row.rounding->verdict;
    } else {
      row.verdict = verdictOf(row.metrics);
    }
    rep.rows.push_back(std::move(row));
  }
  report_ = rep;
  // The inspector must not show an older CPU run's tensors as this compare's.
  runs_.reset();
  keptNote_ =
      "the CUDA compare keeps no tensors (it checks the graph outputs); "
      "compare on the CPU engine to inspect tensors";
  return rep;
}

}  // namespace fuselens
