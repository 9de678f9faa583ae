// The host's side of a CUDA program (codegen/cuda/cuda_program.h) without a
// GPU: walkCudaProgram, the walk `run --engine cuda` makes, with each kernel
// segment compiled for the CPU instead (the very segment graphs the CUDA
// kernels are emitted from). The host decides If branches, Loop iterations
// Scan steps and the slots between steps as on the GPU; the outputs must match the
// fixtures' onnxruntime references, and if_dynamic (a Relu sunk into both
// branches of different shapes) the eager interpreter, both ways.
#include "codegen/cuda/cuda_program.h"

#include <QtTest>

#include "codegen/compiler.h"
#include "codegen/cuda_runtime/cuda_program_run.h"
#include "core/eager/interpreter.h"
#include "core/io/npy.h"
#include "core/onnx/import.h"
#include "tests/support/test_paths.h"

using namespace fuselens;

namespace {

// Runs a Kernels step's segment graph compiled for the CPU.
Expected<std::vector<TensorData>> onCpu(const CudaStep& st, const std::vector<TensorData>& in) {
  const Graph& g = *st.segment;
  CompileOptions opts;
  opts.fallback = false;  // every step must be compiled code, as on the GPU
  auto mod = compileGraph(g, opts);
  if (!mod) return mod.status();
  std::map<std::string, TensorData> feed;
  for (size_t i = 0; i < g.inputs().size() && i < in.size(); ++i)
    feed[g.value(g.inputs()[i]).name] = in[i];
  std::map<std::string, TensorData> outs;
  FL_RETURN_IF_ERROR((*mod)->runInto(feed, outs));
  std::vector<TensorData> result;
  for (ValueId v : g.outputs()) result.push_back(outs.at(g.value(v).name));
  return result;
}

void expectClose(const TensorData& got, const TensorData& want, const QString& what) {
  QVERIFY2(got.shape == want.shape,
           qPrintable(what + ": shape " + QString::fromStdString(formatShape(got.shape)) +
                      ", expected " + QString::fromStdString(formatShape(want.shape))));
  for (int64_t i = 0; i < want.numel(); ++i)
    QVERIFY2(std::abs(got.at(i) - want.at(i)) <= 1e-5 * (1 + std::abs(want.at(i))),
             qPrintable(what + " differs at " + QString::number(i)));
}

}  // namespace

class CudaProgramTest : public QObject {
  Q_OBJECT
 private slots:
  void walkMatchesReferences_data() {
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<QStringList>("inputs");
    QTest::addColumn<QStringList>("outputs");
    QTest::newRow("cf_if_nested") << "cf_if_nested" << QStringList{"x", "c1", "c2"}
                                  << QStringList{"y"};
    QTest::newRow("cf_if_then") << "cf_if_then" << QStringList{"x"} << QStringList{"y"};
    QTest::newRow("cf_loop") << "cf_loop" << QStringList{"x"} << QStringList{"y", "ys"};
    QTest::newRow("cf_loop_untyped_body")
        << "cf_loop_untyped_body" << QStringList{"x"} << QStringList{"y", "ys"};
    QTest::newRow("cf_scan") << "cf_scan" << QStringList{"xs"} << QStringList{"s", "ys"};
    QTest::newRow("cf_scan_axes_reverse")
        << "cf_scan_axes_reverse" << QStringList{"xs"} << QStringList{"s", "ys"};
  }

  void walkMatchesReferences() {
    QFETCH(QString, fixture);
    QFETCH(QStringList, inputs);
    QFETCH(QStringList, outputs);
    const std::string dir = test::sourcePath("/tests/fixtures/" + fixture.toStdString() + "/");
    auto model = importOnnxFile(dir + "model.onnx");
    QVERIFY2(model, qPrintable(QString::fromStdString(model.message())));
    auto plan = planCudaProgram(model->graph);
    QVERIFY2(plan, qPrintable(QString::fromStdString(plan.message())));
    std::vector<TensorData> feed;
    for (const QString& name : inputs) {
      auto t = readNpy(dir + "input_" + name.toStdString() + ".npy");
      QVERIFY(t);
      feed.push_back(*t);
    }
    auto outs = walkCudaProgram(*plan, feed, onCpu);
    QVERIFY2(outs, qPrintable(QString::fromStdString(outs.message())));
    QCOMPARE(outs->size(), size_t(outputs.size()));
    for (int i = 0; i < outputs.size(); ++i) {
      auto want = readNpy(dir + "output_" + outputs[i].toStdString() + ".npy");
      QVERIFY(want);
      expectClose((*outs)[size_t(i)], *want, outputs[i]);
    }
  }

  // if_dynamic: y = Relu(If(sum(x) > 0, x * 2 : [1,8], Squeeze(x[:, :3]) : [3])).
  void sunkKernelsRunTheTakenBranch_data() {
    QTest::addColumn<float>("sign");
    QTest::newRow("then: [1,8]") << 1.0f;
    QTest::newRow("else: [3]") << -1.0f;
  }

  void sunkKernelsRunTheTakenBranch() {
    QFETCH(float, sign);
    auto model = importOnnxFile(test::sourcePath("/tests/cli/data/if_dynamic/model.onnx"));
    QVERIFY(model);
    auto plan = planCudaProgram(model->graph);
    QVERIFY2(plan, qPrintable(QString::fromStdString(plan.message())));
    TensorData x(DType::F32, {1, 8});
    for (int i = 0; i < 8; ++i) x.data<float>()[i] = sign * float(i % 3 + 1) * (i % 2 ? -0.5f : 1);
    auto outs = walkCudaProgram(*plan, {x}, onCpu);
    QVERIFY2(outs, qPrintable(QString::fromStdString(outs.message())));
    auto eager = runEager(model->graph, {{"x", x}});
    QVERIFY(eager);
    expectClose(outs->at(0), *eager->find(model->graph.outputs()[0]), "y");
  }
};

QTEST_GUILESS_MAIN(CudaProgramTest)
#include "cuda_program_test.moc"
