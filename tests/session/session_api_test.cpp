// Session as the whole headless API the faces call: open as a user asks for it
// (dims, shapes, pipeline), in-memory graphs, run on both engines, explain
// queries, code text and exports, and bad requests answered with a sentence.
#include <QtTest>

#include "session/pipeline_choice.h"
#include "session/session.h"
#include "tests/support/test_paths.h"

using namespace fuselens;

namespace {

std::string sample(const char* name) { return fuselens::test::sourcePath("/samples/") + name; }

// x[2,8] -> MatMul(w) -> Add(b) -> Relu -> y
Graph smallMlp() {
  Graph g;
  ValueId x = g.addInput("x", TensorType::of(DType::F32, {2, 8}));
  auto w = std::make_shared<TensorData>(DType::F32, std::vector<int64_t>{8, 4});
  for (int64_t i = 0; i < w->numel(); ++i) w->data<float>()[i] = 0.01f * float(i % 7) - 0.02f;
  ValueId wv = g.addConstant("w", w);
  ValueId m =
      g.node(g.addNode("MatMul", {x, wv}, {{"m", TensorType::of(DType::F32, {2, 4})}})).outputs[0];
  ValueId y =
      g.node(g.addNode("Relu", {m}, {{"y", TensorType::of(DType::F32, {2, 4})}})).outputs[0];
  g.addOutput(y);
  return g;
}

}  // namespace

class SessionApiTest : public QObject {
  Q_OBJECT
 private slots:
  void openRequestRunsThePipeline() {
    Session s;
    Status st = s.open(OpenRequest{sample("mlp.onnx"), {}, {}, defaultPipelineText()});
    QVERIFY2(st.isOk(), st.message().c_str());
    QVERIFY(s.snapshots().size() > 1);
    QCOMPARE(s.pipeline(), defaultPipelineText());
  }

  void openRequestRefusesUnknownShapeInput() {
    Session s;
    Status st =
        s.open(OpenRequest{sample("mlp.onnx"), {}, {{"nope", {1, 2}}}, defaultPipelineText()});
    QVERIFY(!st.isOk());
    QVERIFY2(st.message().find("no input named 'nope'") != std::string::npos, st.message().c_str());
  }

  void inMemoryGraphRunsOnBothEngines() {
    Session s;
    QVERIFY(s.open(smallMlp(), "small-mlp").isOk());
    QVERIFY(s.optimize(defaultPipelineText()).isOk());
    auto in = s.inputs(InputRequest{{}, true, 5});
    QVERIFY2(in.isOk(), in.message().c_str());
    auto eager = s.run(Engine::Eager, *in);
    auto cpu = s.run(Engine::Cpu, *in);
    QVERIFY2(eager.isOk(), eager.message().c_str());
    QVERIFY2(cpu.isOk(), cpu.message().c_str());
    const TensorData& a = eager->at("y");
    const TensorData& b = cpu->at("y");
    QCOMPARE(a.shape, b.shape);
    for (int64_t i = 0; i < a.numel(); ++i) QVERIFY(std::abs(a.at(i) - b.at(i)) < 1e-5);
  }

  void inputsRefuseNamesTheModelLacks() {
    Session s;
    QVERIFY(s.open(sample("mlp.onnx")).isOk());
    auto in = s.inputs(InputRequest{{{"nope", "/tmp/x.npy"}}, false, 0});
    QVERIFY(!in.isOk());
    QVERIFY2(in.message().find("no input named 'nope'") != std::string::npos, in.message().c_str());
  }

  void explainFiltersAndCounts() {
    Session s;
    QVERIFY(s.open(OpenRequest{sample("mlp.onnx"), {}, {}, defaultPipelineText()}).isOk());
    auto all = s.explain({});
    QVERIFY2(all.isOk(), all.message().c_str());
    QCOMPARE(all->accepted + all->rejected, all->decisions.size());
    QVERIFY(all->accepted > 0 && all->rejected > 0);
    QVERIFY(all->complete());
    QVERIFY(all->summary().find(" accepted, ") != std::string::npos);
    auto bad = s.explain(ExplainQuery{"no_such_node", -1});
    QVERIFY(!bad.isOk());
    auto group = s.explain(ExplainQuery{"", 0});
    QVERIFY2(group.isOk(), group.message().c_str());
    QVERIFY(group->decisions.size() <= all->decisions.size());
  }

  void codeTextOfEveryCpuKind() {
    Session s;
    QVERIFY(
        s.open(OpenRequest{sample("matmul_bias_relu.onnx"), {}, {}, defaultPipelineText()}).isOk());
    for (Session::CodeKind k :
         {Session::CodeKind::Ir, Session::CodeKind::LoopIr, Session::CodeKind::LlvmIr,
          Session::CodeKind::Asm, Session::CodeKind::CudaC}) {
      auto text = s.codeText(k);
      QVERIFY2(text.isOk(), text.message().c_str());
      QVERIFY(!text->empty());
    }
    QVERIFY(s.kernelNotes().empty());
  }

  void pipelineChoice() {
    QVERIFY(!resolvePipeline(PipelineChoice{"dce", 2, {}}, defaultPipelineText()).isOk());
    auto o1 = resolvePipeline(PipelineChoice{"", 1, {"dce"}}, defaultPipelineText());
    QVERIFY2(o1.isOk(), o1.message().c_str());
    QVERIFY(o1->find("dce") == std::string::npos);
    std::vector<std::string> warnings;
    auto none =
        resolvePipeline(PipelineChoice{"cse", -1, {"dce"}}, defaultPipelineText(), &warnings);
    QVERIFY(none.isOk());
    QCOMPARE(warnings.size(), size_t(1));
    QVERIFY(!resolvePipeline(PipelineChoice{"", -1, {"bogus"}}, defaultPipelineText()).isOk());
  }

  void exportsThroughSession() {
    QVERIFY(!Session::checkCpuName("pentium").isOk());
    Session s;
    QVERIFY(s.open(OpenRequest{sample("mlp.onnx"), {}, {}, defaultPipelineText()}).isOk());
    QTemporaryDir dir;
    auto cpu = s.exportCpu(
        CpuExportRequest{dir.filePath("cpu").toStdString(), "mlp", 2, "native", "", false});
    QVERIFY2(cpu.isOk(), cpu.message().c_str());
    QVERIFY(cpu->files.size() >= 4);
    auto cuda =
        s.exportCuda(CudaExportRequest{dir.filePath("cuda").toStdString(), "mlp", "compute_90"});
    QVERIFY2(cuda.isOk(), cuda.message().c_str());
    QVERIFY(!cuda->files.empty());
  }
};

QTEST_GUILESS_MAIN(SessionApiTest)
#include "session_api_test.moc"
