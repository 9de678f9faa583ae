// The baselines tests/gpu/run_on_gpu.sh measures FuseLens kernels against,
// built with nvcc alone:
//   gpu_baselines copy BYTES        device-to-device cudaMemcpy of BYTES: prints "copy_gbps G"
//                                   (bytes read plus bytes written, per second)
//   gpu_baselines lt M N K [N_RUNS] [EPILOGUE] [BATCH]
//                                   cuBLASLt f32 GEMM M x N x K (BATCH strided batches, default
//                                   1) with EPILOGUE (a cublasLtEpilogue_t name, default
//                                   CUBLASLT_EPILOGUE_RELU_BIAS): prints "lt_ms T" (median of
//                                   N_RUNS, default 50)
// Exit 2 with one sentence when there is no device.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

static int fail(const char* what, const char* why) {
  std::fprintf(stderr, "error: %s: %s\n", what, why);
  return 2;
}
#define CK(call, what) \
  do { cudaError_t e_ = (call); if (e_ != cudaSuccess) return fail(what, cudaGetErrorString(e_)); } while (0)
#define LT(call, what) \
  do { cublasStatus_t s_ = (call); if (s_ != CUBLAS_STATUS_SUCCESS) return fail(what, "cuBLASLt status"); } while (0)

static float timeMs(cudaEvent_t a, cudaEvent_t b) {
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  return ms;
}

static int copy(long long bytes) {
  void *src = nullptr, *dst = nullptr;
  CK(cudaMalloc(&src, bytes), "allocate the copy source");
  CK(cudaMalloc(&dst, bytes), "allocate the copy target");
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  CK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice), "warm up the copy");
  std::vector<float> t;
  for (int i = 0; i < 20; ++i) {
    cudaEventRecord(a);
    cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice);
    cudaEventRecord(b);
    CK(cudaEventSynchronize(b), "copy");
    t.push_back(timeMs(a, b));
  }
  std::sort(t.begin(), t.end());
  std::printf("copy_gbps %.2f\n", 2.0 * bytes / (t[t.size() / 2] * 1e6));
  return 0;
}

// The epilogues FuseLens offloads (codegen/cuda/cuda_cublaslt.h), by name.
static bool epilogueNamed(std::string_view name, cublasLtEpilogue_t* e) {
  const std::pair<std::string_view, cublasLtEpilogue_t> known[] = {
      {"CUBLASLT_EPILOGUE_DEFAULT", CUBLASLT_EPILOGUE_DEFAULT},
      {"CUBLASLT_EPILOGUE_RELU", CUBLASLT_EPILOGUE_RELU},
      {"CUBLASLT_EPILOGUE_BIAS", CUBLASLT_EPILOGUE_BIAS},
      {"CUBLASLT_EPILOGUE_RELU_BIAS", CUBLASLT_EPILOGUE_RELU_BIAS},
      {"CUBLASLT_EPILOGUE_GELU", CUBLASLT_EPILOGUE_GELU},
      {"CUBLASLT_EPILOGUE_GELU_BIAS", CUBLASLT_EPILOGUE_GELU_BIAS}};
  for (const auto& [n, v] : known)
    if (n == name) return *e = v, true;
  return false;
}

static int lt(int m, int n, int k, int runs, cublasLtEpilogue_t epi, int batch) {
  // Row-major Y[m,n] = act(X[m,k] W[k,n] + b) as column-major Y^T = W^T X^T.
  float *x, *w, *bias, *y;
  const long long nb = batch;
  CK(cudaMalloc(&x, sizeof(float) * m * k * nb), "allocate X");
  CK(cudaMalloc(&w, sizeof(float) * k * n * nb), "allocate W");
  CK(cudaMalloc(&bias, sizeof(float) * n), "allocate the bias");
  CK(cudaMalloc(&y, sizeof(float) * m * n * nb), "allocate Y");
  cudaMemset(x, 0, sizeof(float) * m * k * nb);
  cudaMemset(w, 0, sizeof(float) * k * n * nb);
  cudaMemset(bias, 0, sizeof(float) * n);
  cublasLtHandle_t h;
  LT(cublasLtCreate(&h), "create a cuBLASLt handle");
  cublasLtMatmulDesc_t op;
  LT(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "create the matmul");
  LT(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi), "set the epilogue");
  LT(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias), "set the bias");
  cublasLtMatrixLayout_t la, lb, lc;
  LT(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, n, k, n), "layout W");
  LT(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, k, m, k), "layout X");
  LT(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, n, m, n), "layout Y");
  if (batch > 1) {
    const long long strides[3] = {1LL * n * k, 1LL * k * m, 1LL * n * m};
    cublasLtMatrixLayout_t ls[3] = {la, lb, lc};
    for (int i = 0; i < 3; ++i) {
      LT(cublasLtMatrixLayoutSetAttribute(ls[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch), "set the batch");
      int64_t st = strides[i];
      LT(cublasLtMatrixLayoutSetAttribute(ls[i], CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &st, sizeof st), "set a stride");
    }
  }
  size_t wsBytes = 32 << 20;
  void* ws;
  CK(cudaMalloc(&ws, wsBytes), "allocate the workspace");
  cublasLtMatmulPreference_t pref;
  LT(cublasLtMatmulPreferenceCreate(&pref), "create a preference");
  LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsBytes, sizeof wsBytes), "set the workspace");
  cublasLtMatmulHeuristicResult_t heur;
  int found = 0;
  LT(cublasLtMatmulAlgoGetHeuristic(h, op, la, lb, lc, lc, pref, 1, &heur, &found), "pick an algorithm");
  if (!found) return fail("cuBLASLt", "no algorithm for this shape and epilogue");
  const float one = 1, zero = 0;
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::vector<float> t;
  for (int i = 0; i < runs + 5; ++i) {
    cudaEventRecord(a);
    LT(cublasLtMatmul(h, op, &one, w, la, x, lb, &zero, y, lc, y, lc, &heur.algo, ws, wsBytes, 0), "run the matmul");
    cudaEventRecord(b);
    CK(cudaEventSynchronize(b), "matmul");
    if (i >= 5) t.push_back(timeMs(a, b));
  }
  std::sort(t.begin(), t.end());
  std::printf("lt_ms %.5f\n", t[t.size() / 2]);
  return 0;
}

int main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0)
    return fail("no CUDA device", "the driver lists none");
  if (argc >= 3 && std::string_view(argv[1]) == "copy") return copy(std::atoll(argv[2]));
  cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_RELU_BIAS;
  if (argc >= 7 && !epilogueNamed(argv[6], &epi)) return fail("unknown epilogue", argv[6]);
  if (argc >= 5 && std::string_view(argv[1]) == "lt")
    return lt(std::atoi(argv[2]), std::atoi(argv[3]), std::atoi(argv[4]), argc > 5 ? std::atoi(argv[5]) : 50,
              epi, argc > 7 ? std::max(1, std::atoi(argv[7])) : 1);
  std::fprintf(stderr, "usage: gpu_baselines copy BYTES | lt M N K [RUNS] [EPILOGUE] [BATCH]\n");
  return 2;
}
