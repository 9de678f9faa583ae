// See cuda_library.h: the tuner's per-group choice between cuBLASLt and the
// generated kernel. With a device, the whole plan runs through the executor
// twice per round, once with every group the library can express offloaded and
// once generated, and each kernel's event times are compared (the same
// boundaries either way: one event pair per kernel). Without one, the rule of
// codegen/cuda/cuda_library_choice.h decides and the report says why.
#include <algorithm>

#include "codegen/cuda/cuda_library_choice.h"
#include "codegen/cuda/nvrtc.h"
#include "codegen/cuda_runtime/cuda_executor.h"
#include "session/cuda_library.h"

namespace fuselens {
namespace {

double median(std::vector<double> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Per kernel, the median of `runs` event times of `plan` on `feed`.
Expected<std::vector<double>> timeKernels(const CudaLaunchPlan& plan, const std::string& ptx,
                                          const std::vector<TensorData>& feed, int runs,
                                          const CancelToken& cancel) {
  std::vector<std::vector<double>> ms(plan.module.kernels.size());
  for (int r = 0; r <= runs; ++r) {  // run 0 warms up (module load, cuBLASLt heuristics)
    auto run = runOnCuda(plan, ptx, feed, cancel);
    if (!run) return run.status();
    for (size_t k = 0; r > 0 && k < ms.size() && k < run->kernelMs.size(); ++k)
      ms[k].push_back(run->kernelMs[k]);
  }
  std::vector<double> out;
  for (auto& m : ms) out.push_back(median(std::move(m)));
  return out;
}

// Only where a device answers: both engines' times per kernel.
Status timeBoth(const Session& s, const CudaLaunchPlan& offloaded, int runs,
                std::vector<double>& libraryMs, std::vector<double>& generatedMs,
                const Progress& progress, const CancelToken& cancel) {
  report(progress, 0.5, "NVRTC: CUDA C to PTX");
  auto ptx = compileToPtx(offloaded.module.source, "compute_80");
  if (!ptx) return ptx.status();
  auto inputs = s.randomInputs(s.seed);
  if (!inputs) return inputs.status();
  auto feed = cudaFeed(s.finalGraph(), *inputs);
  if (!feed) return feed.status();
  CudaLaunchPlan generated = offloaded;
  generated.library.clear();
  report(progress, 0.7, "time the generated kernels");
  auto gen = timeKernels(generated, *ptx, *feed, runs, cancel);
  if (!gen) return gen.status();
  report(progress, 0.85, "time the cuBLASLt calls");
  auto lib = timeKernels(offloaded, *ptx, *feed, runs, cancel);
  if (!lib) return lib.status();
  generatedMs = std::move(*gen);
  libraryMs = std::move(*lib);
  return Status::ok();
}

}  // namespace

std::vector<std::string> CudaLibraryTuneReport::groupValues() const {
  std::vector<std::string> values;
  for (const CudaLibraryTuneRow& r : rows)
    values.push_back(r.group + (r.library ? "=cublaslt" : "=generated"));
  return values;
}

Expected<CudaLibraryTuneReport> tuneCudaLibrary(const Session& s, int runs,
                                                const Progress& progress,
                                                const CancelToken& cancel) {
  if (std::string why = cudaOffloadRefusal(s); !why.empty())
    return Status::error(why + ", so there is no choice to make", "tune --target cuda");
  CudaLibraryOptions every;
  every.mode = "cublaslt";
  auto plan = cudaPlanWithLibrary(s, every, progress, cancel);
  if (!plan) return plan.status();
  CudaLibraryTuneReport rep;
  std::vector<double> libraryMs, generatedMs;
  std::string why;
  if (cudaDeviceAvailable(&why)) {
    FL_RETURN_IF_ERROR(timeBoth(s, *plan, runs, libraryMs, generatedMs, progress, cancel));
  } else {
    rep.note = why + ", so nothing can be timed and each MatMul/Gemm group is chosen by rule";
  }
  for (size_t k = 0; k < plan->module.kernels.size(); ++k) {
    if (plan->gemmShapes[k].size() != 3) continue;
    const CudaLibraryChoice& offload = plan->library[k];
    const bool timed = offload.call && k < libraryMs.size() && k < generatedMs.size();
    const CudaEngineChoice c =
        timed ? cudaLibraryTimed(libraryMs[k], generatedMs[k]) : cudaLibraryRule(offload);
    CudaLibraryTuneRow row{plan->module.kernels[k].name,
                           s.finalGraph().node(plan->module.infos[k].node).name, c.library, c.why};
    if (timed) row.libraryMs = libraryMs[k], row.generatedMs = generatedMs[k];
    rep.rows.push_back(std::move(row));
  }
  return rep;
}

}  // namespace fuselens
