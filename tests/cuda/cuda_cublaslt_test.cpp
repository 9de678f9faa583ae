// cuBLASLt offload without a GPU: the values the dlopen'd executor passes to
// libcublasLt (codegen/cuda_runtime/cublaslt_api.h) and the epilogue codes the
// generated launcher writes (codegen/cuda/cuda_cublaslt.h) are the installed
// cublasLt.h's, checked by compiling static_asserts against it; the library
// either loads or says why in one sentence. The offloaded bundles themselves
// are verified in cuda_bundle_emulation_test and built in cuda_bundle_test.
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>
#include <fstream>

#include "codegen/cuda/toolkit.h"
#include "codegen/cuda_runtime/cublaslt_api.h"
#include "tests/support/test_paths.h"

class CudaCublasLtTest : public QObject {
  Q_OBJECT
 private slots:
  void abiMatchesTheInstalledHeader() {
    const std::string nvcc = fuselens::findCudaTool("nvcc");
    if (nvcc.empty()) QSKIP("no CUDA toolkit: cublasLt.h is not installed");
    const auto include = std::filesystem::path(nvcc).parent_path().parent_path() / "include";
    if (!std::filesystem::exists(include / "cublasLt.h")) QSKIP("the toolkit has no cublasLt.h");
    QTemporaryDir dir;
    const QString src = dir.filePath("abi.cpp");
    std::ofstream(src.toStdString()) << R"(#include <cublasLt.h>
#include <cstddef>
#include "codegen/cuda/cuda_cublaslt.h"
#include "codegen/cuda_runtime/cublaslt_api.h"
namespace lt = fuselens::cublaslt;
using fuselens::LtEpilogue;
static_assert(lt::kComputeF32 == CUBLAS_COMPUTE_32F);
static_assert(lt::kR32F == CUDA_R_32F);
static_assert(lt::kOpN == CUBLAS_OP_N && lt::kOpT == CUBLAS_OP_T);
static_assert(lt::kDescTransA == CUBLASLT_MATMUL_DESC_TRANSA);
static_assert(lt::kDescTransB == CUBLASLT_MATMUL_DESC_TRANSB);
static_assert(lt::kDescEpilogue == CUBLASLT_MATMUL_DESC_EPILOGUE);
static_assert(lt::kDescBiasPointer == CUBLASLT_MATMUL_DESC_BIAS_POINTER);
static_assert(lt::kLayoutBatchCount == CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT);
static_assert(lt::kLayoutBatchStride == CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET);
static_assert(lt::kPrefMaxWorkspace == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES);
static_assert(sizeof(lt::HeuristicResult) == sizeof(cublasLtMatmulHeuristicResult_t));
static_assert(offsetof(lt::HeuristicResult, state) == offsetof(cublasLtMatmulHeuristicResult_t, state));
static_assert(int(LtEpilogue::Default) == CUBLASLT_EPILOGUE_DEFAULT);
static_assert(int(LtEpilogue::Relu) == CUBLASLT_EPILOGUE_RELU);
static_assert(int(LtEpilogue::Bias) == CUBLASLT_EPILOGUE_BIAS);
static_assert(int(LtEpilogue::ReluBias) == CUBLASLT_EPILOGUE_RELU_BIAS);
static_assert(int(LtEpilogue::Gelu) == CUBLASLT_EPILOGUE_GELU);
static_assert(int(LtEpilogue::GeluBias) == CUBLASLT_EPILOGUE_GELU_BIAS);
)";
    QProcess cc;
    cc.start("c++", {"-std=c++20", "-fsyntax-only", "-I",
                     QString::fromStdString(fuselens::test::sourcePath()), "-I",
                     QString::fromStdString(include.string()), src});
    QVERIFY(cc.waitForFinished(120000));
    QVERIFY2(cc.exitCode() == 0, qPrintable(QString::fromUtf8(cc.readAllStandardError())));
  }

  void libraryLoadsOrSaysWhy() {
    std::string why;
    const fuselens::cublaslt::Api* api = fuselens::cublaslt::library(&why);
    if (api) {
      QVERIFY(api->matmul && api->getHeuristic && api->create);
      qInfo("libcublasLt loaded");
      return;
    }
    QVERIFY2(why.rfind("no cuBLASLt", 0) == 0 || why.rfind("no usable cuBLASLt", 0) == 0,
             why.c_str());
    QVERIFY(why.find('\n') == std::string::npos);
    qInfo("%s", why.c_str());
  }
};

QTEST_GUILESS_MAIN(CudaCublasLtTest)
#include "cuda_cublaslt_test.moc"
