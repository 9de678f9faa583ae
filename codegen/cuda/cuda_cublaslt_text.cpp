// See cuda_cublaslt.h: the generated launcher's side of library offload. The
// bundle's launcher calls FL_LT_MATMUL(state, call, stream, A, B, bias, Y)
// for an offloaded kernel; by default that is fl_lt_matmul over cuBLASLt
// (descriptors and the heuristic's algorithm made on the first run and kept in
// the context), and a host emulation of the runtime defines it first as the
// reference GEMM of cudaLibraryHostEmulation(), with the same epilogue.
#include <cstdio>
#include <sstream>

#include "codegen/cuda/cuda_cublaslt.h"

namespace fuselens {
namespace {

// Text of fl_lt_matmul over cuBLASLt; it reads the fl_lt_gemms table above it.
const char* kLtHelpers = R"FL(#ifndef FL_LT_MATMUL
struct fl_lt_plan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, y = nullptr;
  cublasLtMatmulAlgo_t algo;
  bool ready = false;
};
struct fl_lt_state {
  cublasLtHandle_t h = nullptr;
  void* ws = nullptr;
  fl_lt_plan plans[kLtCalls];
};
constexpr size_t kLtWorkspace = size_t(32) << 20;
int fl_lt_fail(cublasStatus_t st, const char* what) {
  snprintf(fl_error, sizeof fl_error, "cuBLASLt cannot %s: status %d", what, (int)st);
  return 1;
}
#define FL_LT(call, what) do { cublasStatus_t st_ = (call); if (st_ != CUBLAS_STATUS_SUCCESS) return fl_lt_fail(st_, what); } while (0)
int fl_lt_layout(cublasLtMatrixLayout_t* l, long long rows, long long cols, long long ld,
                 long long batch, long long stride) {
  FL_LT(cublasLtMatrixLayoutCreate(l, CUDA_R_32F, rows, cols, ld), "create a matrix layout");
  if (batch <= 1) return 0;
  int32_t count = (int32_t)batch;
  int64_t offset = stride;
  FL_LT(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count), "set a batch count");
  FL_LT(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &offset, sizeof offset), "set a batch stride");
  return 0;
}
// Row-major Y = op(A) op(B) is column-major Y^T = op(B)^T op(A)^T: B is
// cuBLASLt's first operand, A its second, D is n x m with ld n.
int fl_lt_prepare(fl_lt_state* st, int i, const float* bias) {
  const fl_lt_gemm& g = fl_lt_gemms[i];
  fl_lt_plan& p = st->plans[i];
  FL_LT(cublasLtMatmulDescCreate(&p.op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "create a matmul");
  cublasOperation_t ta = g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t tb = g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasLtEpilogue_t epi = (cublasLtEpilogue_t)g.epilogue;
  FL_LT(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), "set transA");
  FL_LT(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), "set transB");
  FL_LT(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi), "set the epilogue");
  if (bias) FL_LT(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias), "set the bias");
  if (int rc = g.trans_b ? fl_lt_layout(&p.a, g.k, g.n, g.k, g.batch, g.stride_b)
                         : fl_lt_layout(&p.a, g.n, g.k, g.n, g.batch, g.stride_b)) return rc;
  if (int rc = g.trans_a ? fl_lt_layout(&p.b, g.m, g.k, g.m, g.batch, g.stride_a)
                         : fl_lt_layout(&p.b, g.k, g.m, g.k, g.batch, g.stride_a)) return rc;
  if (int rc = fl_lt_layout(&p.y, g.n, g.m, g.n, g.batch, g.stride_y)) return rc;
  cublasLtMatmulPreference_t pref;
  FL_LT(cublasLtMatmulPreferenceCreate(&pref), "create a preference");
  size_t ws = kLtWorkspace;
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
  cublasLtMatmulHeuristicResult_t heur;
  int found = 0;
  cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(st->h, p.op, p.a, p.b, p.y, p.y, pref, 1, &heur, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (hs != CUBLAS_STATUS_SUCCESS || found == 0) {
    snprintf(fl_error, sizeof fl_error, "cuBLASLt has no algorithm for %s (%lld x %lld x %lld, batch %lld, epilogue %d)",
             fl_kernels[g.kernel], g.m, g.n, g.k, g.batch, g.epilogue);
    return 1;
  }
  p.algo = heur.algo;
  p.ready = true;
  return 0;
}
int fl_lt_matmul(void** state, int i, cudaStream_t s, const float* a, const float* b,
                 const float* bias, float* y) {
  fl_lt_state* st = (fl_lt_state*)*state;
  if (!st) {
    *state = st = new fl_lt_state;
    FL_LT(cublasLtCreate(&st->h), "create a handle");
    FL_CHECK(cudaMalloc(&st->ws, kLtWorkspace), "allocate the cuBLASLt workspace");
  }
  fl_lt_plan& p = st->plans[i];
  if (!p.ready)
    if (int rc = fl_lt_prepare(st, i, bias)) return rc;
  if (bias) FL_LT(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias), "set the bias");
  const float alpha = fl_lt_gemms[i].alpha, beta = 0;
  FL_LT(cublasLtMatmul(st->h, p.op, &alpha, b, p.a, a, p.b, &beta, y, p.y, y, p.y, &p.algo,
                       st->ws, kLtWorkspace, s), "run a matmul");
  return 0;
}
void fl_lt_release(void* state) {
  fl_lt_state* st = (fl_lt_state*)state;
  if (!st) return;
  for (fl_lt_plan& p : st->plans) {
    if (p.op) cublasLtMatmulDescDestroy(p.op);
    for (cublasLtMatrixLayout_t l : {p.a, p.b, p.y}) if (l) cublasLtMatrixLayoutDestroy(l);
  }
  cudaFree(st->ws);
  if (st->h) cublasLtDestroy(st->h);
  delete st;
}
#define FL_LT_MATMUL(state, i, s, a, b, bias, y) fl_lt_matmul(state, i, s, a, b, bias, y)
#define FL_LT_RELEASE(state) fl_lt_release(state)
#endif
)FL";

// A C float literal that reads back as `v` ("1.0f", "0.5f", "1.00000001e-07f").
std::string floatLiteral(float v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.9g", double(v));
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s + "f";
}

}  // namespace

bool cudaLibraryUsed(const CudaLaunchPlan& plan) {
  for (const CudaLibraryChoice& c : plan.library)
    if (c.call) return true;
  return false;
}

std::string cudaLibraryTable(const CudaLaunchPlan& plan) {
  if (plan.library.empty()) return {};
  std::ostringstream o;
  o << "kernel\tname\tengine\tepilogue\tm\tn\tk\tbatch\twhy\n";
  for (size_t k = 0; k < plan.library.size(); ++k) {
    const CudaLibraryChoice& c = plan.library[k];
    o << k << "\t" << plan.module.kernels[k].name << "\t";
    if (c.call)
      o << "cublaslt\t" << ltEpilogueName(c.call->epilogue) << "\t" << c.call->m << "\t"
        << c.call->n << "\t" << c.call->k << "\t" << c.call->batch << "\t-\n";
    else
      o << "generated\t-\t-\t-\t-\t-\t" << c.why << "\n";
  }
  return o.str();
}

std::string cudaLibraryCMake(bool used, const std::string& name) {
  if (!used) return {};
  return "# Kernels offloaded to cuBLASLt (manifest.json, \"library\"): link it.\n"
         "find_package(CUDAToolkit REQUIRED)\ntarget_link_libraries(" +
         name + " PRIVATE CUDA::cublasLt)\n";
}

std::string cudaLibraryIncludes(const CudaLaunchPlan& plan) {
  if (!cudaLibraryUsed(plan)) return {};
  return "#ifndef FL_LT_MATMUL\n#include <cublasLt.h>\n#endif\n";
}

std::string cudaLibraryHelpers(const CudaLaunchPlan& plan) {
  if (!cudaLibraryUsed(plan)) return {};
  std::ostringstream o;
  o << "// Kernels offloaded to cuBLASLt (manifest.json, \"library\"): Y[b] = act(alpha * "
       "op(A[b]) op(B[b]) + bias),\n// row-major; epilogue is cublasLtEpilogue_t's value.\n"
    << "namespace {\nstruct fl_lt_gemm {\n  int kernel, epilogue;\n"
    << "  long long m, n, k, batch, stride_a, stride_b, stride_y;\n"
    << "  int trans_a, trans_b;\n  float alpha;\n};\nconst fl_lt_gemm fl_lt_gemms[] = {\n";
  int calls = 0;
  for (size_t k = 0; k < plan.library.size(); ++k) {
    if (!plan.library[k].call) continue;
    const CudaLibraryCall& c = *plan.library[k].call;
    o << "  {" << k << ", " << int(c.epilogue) << ", " << c.m << ", " << c.n << ", " << c.k << ", "
      << c.batch << ", " << c.strideA << ", " << c.strideB << ", " << c.strideY << ", "
      << int(c.transA) << ", " << int(c.transB) << ", " << floatLiteral(c.alpha) << "},  // "
      << ltEpilogueName(c.epilogue) << "\n";
    ++calls;
  }
  o << "};\nconstexpr int kLtCalls = " << calls << ";\n" << kLtHelpers << "}  // namespace\n\n";
  return o.str();
}

std::string cudaLibraryLaunch(const CudaLaunchPlan& plan, size_t k,
                              const std::function<std::string(const CudaArg&)>& pointer) {
  int index = 0;
  for (size_t i = 0; i < k; ++i) index += plan.library[i].call ? 1 : 0;
  const CudaLibraryCall& c = *plan.library[k].call;
  return "  if (int rc = FL_LT_MATMUL(&ctx->lt, " + std::to_string(index) + ", s, (const float*)" +
         pointer(c.a) + ", (const float*)" + pointer(c.b) + ", " +
         (c.hasBias ? "(const float*)" + pointer(c.bias) : std::string("(const float*)nullptr")) +
         ", (float*)" + pointer(c.y) + ")) return rc;  // cuBLASLt, " + ltEpilogueName(c.epilogue) +
         "\n";
}

std::string cudaLibraryHostEmulation() {
  return R"FL(// The reference GEMM behind FL_LT_MATMUL: cuBLASLt's call with the same
// epilogue semantics (bias added per column, then ReLU or tanh-form GELU).
#include <cmath>
template <class G>
int fl_emu_lt_matmul(const G& g, const float* a, const float* b, const float* bias, float* y) {
  for (long long bt = 0; bt < g.batch; ++bt)
    for (long long i = 0; i < g.m; ++i)
      for (long long j = 0; j < g.n; ++j) {
        const float* A = a + bt * g.stride_a;
        const float* B = b + bt * g.stride_b;
        double acc = 0;
        for (long long p = 0; p < g.k; ++p)
          acc += double(g.trans_a ? A[p * g.m + i] : A[i * g.k + p]) *
                 double(g.trans_b ? B[j * g.k + p] : B[p * g.n + j]);
        float v = g.alpha * float(acc);
        if ((g.epilogue & 4) && bias) v += bias[j];
        if (g.epilogue & 2) v = v > 0 ? v : 0;
        if (g.epilogue & 32)
          v = 0.5f * v * (1.0f + std::tanh(0.7978845608f * (v + 0.044715f * v * v * v)));
        y[bt * g.stride_y + i * g.n + j] = v;
      }
  return 0;
}
#define FL_LT_MATMUL(state, i, s, a, b, bias, y) fl_emu_lt_matmul(fl_lt_gemms[i], a, b, bias, y)
#define FL_LT_RELEASE(state) (void)(state)
)FL";
}

}  // namespace fuselens
