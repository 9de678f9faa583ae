#include "codegen/cuda_runtime/cuda_lt_run.h"

#include "codegen/cuda_runtime/cublaslt_api.h"

namespace fuselens {
namespace {

const cublaslt::Api& api() { return *cublaslt::library(nullptr); }

Status check(cublaslt::Status s, const std::string& what) {
  if (s == 0) return Status::ok();
  return Status::error("cuBLASLt cannot " + what + " (status " + std::to_string(s) + ")",
                       "CUDA executor");
}

}  // namespace

Expected<std::unique_ptr<CudaLtRun>> CudaLtRun::open(unsigned long long workspace,
                                                     size_t workspaceBytes) {
  std::string why;
  if (!cublaslt::library(&why)) return Status::error(why, "CUDA executor");
  std::unique_ptr<CudaLtRun> r(new CudaLtRun);
  FL_RETURN_IF_ERROR(check(api().create(&r->handle_), "create a handle"));
  r->workspace_ = workspace;
  r->workspaceBytes_ = workspaceBytes;
  return r;
}

CudaLtRun::~CudaLtRun() {
  if (!handle_) return;
  for (void* d : descs_) api().descDestroy(d);
  for (void* l : layouts_) api().layoutDestroy(l);
  api().destroy(handle_);
}

fuselens::Status CudaLtRun::run(const CudaLibraryCall& c, unsigned long long a,
                                unsigned long long b, unsigned long long bias, unsigned long long y,
                                void* stream) {
  const cublaslt::Api& lt = api();
  using namespace cublaslt;  // the k* enum values
  // Row-major Y = op(A) op(B) as column-major Y^T = op(B)^T op(A)^T.
  auto layout = [&](int64_t rows, int64_t cols, int64_t ld, int64_t stride) -> Expected<Handle> {
    Handle l = nullptr;
    FL_RETURN_IF_ERROR(check(lt.layoutCreate(&l, kR32F, uint64_t(rows), uint64_t(cols), ld),
                             "create a matrix layout"));
    layouts_.push_back(l);
    if (c.batch > 1) {
      const int32_t count = int32_t(c.batch);
      const int64_t offset = stride;
      FL_RETURN_IF_ERROR(check(lt.layoutSetAttribute(l, kLayoutBatchCount, &count, sizeof count),
                               "set a batch count"));
      FL_RETURN_IF_ERROR(check(lt.layoutSetAttribute(l, kLayoutBatchStride, &offset, sizeof offset),
                               "set a stride"));
    }
    return l;
  };
  Handle desc = nullptr;
  FL_RETURN_IF_ERROR(check(lt.descCreate(&desc, kComputeF32, kR32F), "create a matmul"));
  descs_.push_back(desc);
  const int32_t ta = c.transB ? kOpT : kOpN, tb = c.transA ? kOpT : kOpN;
  const int32_t epi = int32_t(c.epilogue);
  const void* biasPtr = reinterpret_cast<const void*>(bias);
  FL_RETURN_IF_ERROR(check(lt.descSetAttribute(desc, kDescTransA, &ta, sizeof ta), "set transA"));
  FL_RETURN_IF_ERROR(check(lt.descSetAttribute(desc, kDescTransB, &tb, sizeof tb), "set transB"));
  FL_RETURN_IF_ERROR(
      check(lt.descSetAttribute(desc, kDescEpilogue, &epi, sizeof epi), "set the epilogue"));
  if (c.hasBias)
    FL_RETURN_IF_ERROR(check(lt.descSetAttribute(desc, kDescBiasPointer, &biasPtr, sizeof biasPtr),
                             "set the bias"));
  auto la = c.transB ? layout(c.k, c.n, c.k, c.strideB) : layout(c.n, c.k, c.n, c.strideB);
  auto lb = c.transA ? layout(c.m, c.k, c.m, c.strideA) : layout(c.k, c.m, c.k, c.strideA);
  auto ly = layout(c.n, c.m, c.n, c.strideY);
  for (auto* l : {&la, &lb, &ly})
    if (!*l) return l->status();
  Handle pref = nullptr;
  FL_RETURN_IF_ERROR(check(lt.prefCreate(&pref), "create a preference"));
  const size_t ws = workspaceBytes_;
  lt.prefSetAttribute(pref, kPrefMaxWorkspace, &ws, sizeof ws);
  HeuristicResult heur{};
  int found = 0;
  const cublaslt::Status hs =
      lt.getHeuristic(handle_, desc, *la, *lb, *ly, *ly, pref, 1, &heur, &found);
  lt.prefDestroy(pref);
  if (hs != 0 || found == 0)
    return fuselens::Status::error("cuBLASLt has no algorithm for " + std::to_string(c.m) + " x " +
                                       std::to_string(c.n) + " x " + std::to_string(c.k) +
                                       " with " + ltEpilogueName(c.epilogue),
                                   "CUDA executor");
  const float alpha = c.alpha, beta = 0;
  auto ptr = [](unsigned long long p) { return reinterpret_cast<void*>(p); };
  return check(lt.matmul(handle_, desc, &alpha, ptr(b), *la, ptr(a), *lb, &beta, ptr(y), *ly,
                         ptr(y), *ly, heur.algo, ptr(workspace_), workspaceBytes_, stream),
               "run a matmul");
}

}  // namespace fuselens
