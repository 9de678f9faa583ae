// The tuner's rule between cuBLASLt and the generated kernel
// (codegen/cuda/cuda_library_choice.h), on calls of known shape: a group
// cuBLASLt cannot run, a GEMV-like M, a small GEMM and a large one, each at
// the edge of its threshold; and the timed choice picking the faster.
#include "codegen/cuda/cuda_library_choice.h"

#include <QtTest>
#include <memory>

#include "codegen/cuda/cuda_cublaslt.h"

using namespace fuselens;

namespace {

CudaLibraryChoice offload(int64_t m, int64_t n, int64_t k, int64_t batch = 1) {
  auto call = std::make_shared<CudaLibraryCall>();
  call->m = m, call->n = n, call->k = k, call->batch = batch;
  call->epilogue = LtEpilogue::ReluBias;
  return {call, {}};
}

}  // namespace

class CudaLibraryChoiceTest : public QObject {
  Q_OBJECT
 private slots:
  void rule_data() {
    QTest::addColumn<int64_t>("m");
    QTest::addColumn<int64_t>("n");
    QTest::addColumn<int64_t>("k");
    QTest::addColumn<int64_t>("batch");
    QTest::addColumn<bool>("library");
    QTest::addColumn<QString>("says");
    QTest::newRow("gemv: M 1") << int64_t(1) << int64_t(4096) << int64_t(4096) << int64_t(1)
                               << false << "at most 16 rows";
    QTest::newRow("M 16, large N K")
        << int64_t(16) << int64_t(4096) << int64_t(4096) << int64_t(1) << false << "small-M stage";
    QTest::newRow("M 17, small") << int64_t(17) << int64_t(64) << int64_t(64) << int64_t(1) << false
                                 << "under 2^21 multiply-adds";
    QTest::newRow("just under 2^21")
        << int64_t(128) << int64_t(128) << int64_t(127) << int64_t(1) << false << "under 2^21";
    QTest::newRow("2^21 exactly") << int64_t(128) << int64_t(128) << int64_t(128) << int64_t(1)
                                  << true << "CUBLASLT_EPILOGUE_RELU_BIAS";
    QTest::newRow("batched: 8 x 64^3")
        << int64_t(64) << int64_t(64) << int64_t(64) << int64_t(8) << true << "batch 8";
    QTest::newRow("bert-large ffn") << int64_t(512) << int64_t(4096) << int64_t(1024) << int64_t(1)
                                    << true << "M 512, N 4096, K 1024";
  }
  void rule() {
    QFETCH(int64_t, m);
    QFETCH(int64_t, n);
    QFETCH(int64_t, k);
    QFETCH(int64_t, batch);
    QFETCH(bool, library);
    QFETCH(QString, says);
    const CudaEngineChoice c = cudaLibraryRule(offload(m, n, k, batch));
    QCOMPARE(c.library, library);
    QVERIFY2(QString::fromStdString(c.why).contains(says), c.why.c_str());
    QVERIFY2(c.why.rfind("by rule: ", 0) == 0, c.why.c_str());
  }

  // A group cuBLASLt cannot express stays generated whatever its size, and says why.
  void inexpressibleStaysGenerated() {
    CudaLibraryChoice none{nullptr,
                           "its epilogue has Mul (m), which cuBLASLt's epilogues (bias, "
                           "ReLU, GELU) cannot express"};
    const CudaEngineChoice c = cudaLibraryRule(none);
    QVERIFY(!c.library);
    QVERIFY2(c.why.find("cuBLASLt cannot run it: its epilogue has Mul") == 0, c.why.c_str());
  }

  void timedPicksTheFaster() {
    QVERIFY(cudaLibraryTimed(0.010, 0.020).library);
    QVERIFY(!cudaLibraryTimed(0.020, 0.010).library);
    QVERIFY(!cudaLibraryTimed(0.010, 0.010).library);  // a tie keeps the generated kernel
    const std::string why = cudaLibraryTimed(0.0123, 0.0456).why;
    QVERIFY2(why.find("cuBLASLt 0.0123 ms, generated 0.0456 ms") != std::string::npos, why.c_str());
  }
};

QTEST_GUILESS_MAIN(CudaLibraryChoiceTest)
#include "cuda_library_choice_test.moc"
