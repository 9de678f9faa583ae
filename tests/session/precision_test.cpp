// Reduced precision on purpose (--precision; passes/reduce_precision.h) as
// Session runs it: the option's pipeline rewriting and its one error sentence,
// the floor of the storage precision in verdicts, and the LayerNorm sample
// (samples/precision_layernorm.onnx) whose LayerNorm is the one kernel flagged
// at f16 while the MatMul + bias + ReLU kernels around it stay within rounding.
#include <QtTest>

#include "core/compare/storage_floor.h"
#include "core/ops/op_util.h"
#include "session/pipeline_choice.h"
#include "session/session.h"
#include "tests/support/test_paths.h"

using namespace fuselens;

namespace {

std::string sample(const char* name) { return fuselens::test::sourcePath("/samples/") + name; }

bool isLayerNormKernel(const IsolatedKernel& k) {
  for (const std::string& m : k.members)
    if (m.rfind("/ln/", 0) == 0) return true;
  return false;
}

}  // namespace

class PrecisionTest : public QObject {
  Q_OBJECT
 private slots:
  void f32LeavesThePipelineAsItIs() {
    auto p = withPrecision(defaultPipelineText(), "f32");
    QVERIFY(p.isOk());
    QCOMPARE(*p, defaultPipelineText());
    QCOMPARE(precisionOf(*p), std::string("f32"));
  }

  void reducedPrecisionRunsBeforeMemoryPlan() {
    auto o3 = withPrecision(pipelineTextForLevel(3), "bf16");
    QVERIFY(o3.isOk());
    QVERIFY2(o3->find("reduce-precision{dtype=bf16},memory-plan") != std::string::npos,
             o3->c_str());
    auto o2 = withPrecision(defaultPipelineText(), "f16");
    QVERIFY(o2.isOk());
    QCOMPARE(*o2, defaultPipelineText() + ",reduce-precision{dtype=f16}");
    QCOMPARE(precisionOf(*o2), std::string("f16"));
    // Asking again replaces the dtype; the GUI's menu can also take it away.
    QCOMPARE(*withPrecision(*o2, "bf16"), defaultPipelineText() + ",reduce-precision{dtype=bf16}");
    QCOMPARE(*replacePrecision(*o2, "f32"), defaultPipelineText());
  }

  void anotherValueIsOneSentence() {
    auto p = withPrecision(defaultPipelineText(), "f8");
    QVERIFY(!p.isOk());
    QCOMPARE(p.status().diagnostic().message,
             std::string("'f8' is not a precision; use f32, f16 or bf16"));
    PipelineChoice choice;
    choice.precision = "fp16";
    auto r = resolvePipeline(choice, defaultPipelineText());
    QVERIFY(!r.isOk());
    QVERIFY2(r.message().find("'fp16'") != std::string::npos, r.message().c_str());
  }

  // One f16 ulp, not one f32 ulp, is an f16-stored tensor's least expected error.
  void theFloorIsOneUlpOfTheStorage() {
    auto exact = TensorData::fromVector<double>(DType::F64, {2}, {1000.1, 1.0});
    auto sample32 = TensorData::fromVector<float>(DType::F32, {2}, {1000.1f, 1.0f});
    auto actual = ops::castTensor(ops::castTensor(exact, DType::F32), DType::F16);
    CompareOptions opts;
    RoundingCheck f32Floor =
        checkRounding(exact, sample32, {}, ops::castTensor(actual, DType::F32), {}, opts);
    QCOMPARE(int(f32Floor.verdict), int(NumericVerdict::BeyondRounding));
    RoundingCheck f16Floor = checkRoundingStored(DType::F16, exact, sample32, {},
                                                 ops::castTensor(actual, DType::F32), {}, opts);
    QCOMPARE(int(f16Floor.verdict), int(NumericVerdict::WithinRounding));
    QVERIFY(f16Floor.expected >= ulpOf(1000.1, DType::F16));
    const std::string how = describeStored(opts, DType::F16);
    QVERIFY2(how.find(", f16 storage)") != std::string::npos, how.c_str());
    QCOMPARE(describeStored(opts, DType::F32), opts.describe());
  }

  void layerNormIsTheKernelThatLosesPrecision() {
    Session s;
    QVERIFY(s.open(sample("precision_layernorm.onnx")).isOk());
    QVERIFY(s.optimize(*withPrecision(defaultPipelineText(), "f16")).isOk());
    QCOMPARE(precisionOf(s.pipeline()), std::string("f16"));
    QCOMPARE(storagePrecision(s.original(), s.finalGraph()), DType::F16);
    auto inputs = s.randomInputs(5);
    QVERIFY(inputs.isOk());
    auto rep = s.compareIsolated(*inputs, CompareOptions());
    QVERIFY2(rep.isOk(), rep.message().c_str());
    int layerNorms = 0, others = 0;
    for (const IsolatedKernel& k : rep->kernels) {
      for (size_t i : k.rows) {
        const IsolatedRow& r = rep->rows[i];
        QVERIFY2(r.own.has_value(),
                 qPrintable(QString::fromStdString(r.kernel + ": " + r.skipped)));
        if (isLayerNormKernel(k)) {
          QVERIFY2(r.own->verdict == NumericVerdict::BeyondRounding,
                   (r.kernel + ": " + verdictText(*r.own)).c_str());
          QVERIFY2(r.own->ratio > 8, verdictText(*r.own).c_str());
        } else {
          QVERIFY2(r.own->verdict == NumericVerdict::WithinRounding,
                   (r.kernel + ": " + verdictText(*r.own)).c_str());
        }
      }
      (isLayerNormKernel(k) ? layerNorms : others) += 1;
    }
    QCOMPARE(layerNorms, 1);
    QVERIFY(others >= 2);  // the MatMul + bias + ReLU kernels on either side
    const IsolatedRow* first = rep->firstKernelDiffering();
    QVERIFY(first);
    QVERIFY2(isolatedVerdict(*rep).find(first->kernel) != std::string::npos,
             isolatedVerdict(*rep).c_str());
  }

  // The same model stored in f32 has nothing to flag: the loss above is the storage's.
  void atF32TheSampleIsWithinRounding() {
    Session s;
    QVERIFY(s.open(sample("precision_layernorm.onnx")).isOk());
    QVERIFY(s.optimize(defaultPipelineText()).isOk());
    auto rep = s.compareIsolated(*s.randomInputs(5), CompareOptions());
    QVERIFY2(rep.isOk(), rep.message().c_str());
    QVERIFY2(rep->allWithin(), isolatedVerdict(*rep).c_str());
  }

  // Graph inputs and outputs stay f32; tensors between kernels are f16 and the
  // end-to-end compare reads them exactly.
  void boundariesAreReducedAndOutputsStayF32() {
    Session s;
    QVERIFY(s.open(sample("precision_layernorm.onnx")).isOk());
    QVERIFY(s.optimize(*withPrecision(defaultPipelineText(), "f16")).isOk());
    const Graph& g = s.finalGraph();
    for (ValueId v : g.inputs()) QCOMPARE(g.value(v).type.dtype, DType::F32);
    for (ValueId v : g.outputs()) QCOMPARE(g.value(v).type.dtype, DType::F32);
    auto rep = s.compare(*s.randomInputs(5), CompareOptions());
    QVERIFY2(rep.isOk(), rep.message().c_str());
    int reduced = 0;
    for (const CompareRow& r : rep->rows) {
      QVERIFY(r.rounding.has_value());
      reduced += g.value(r.value).type.dtype == DType::F16;
    }
    QVERIFY(reduced >= 2);  // the two tensors between the three kernels
    QVERIFY2(precisionLine(s.pipeline()).find("stored in f16") != std::string::npos,
             precisionLine(s.pipeline()).c_str());
    QVERIFY(!rep->allWithin());  // the LayerNorm, and the output after it
  }
};

QTEST_GUILESS_MAIN(PrecisionTest)
#include "precision_test.moc"
