// Provenance of generated code (session/provenance.h): every kernel of a
// compiled sample is found in the loop IR, the LLVM IR and the assembly;
// loop IR and LLVM IR say before each kernel which imported nodes it came
// from; spans are disjoint and in text order; a line maps back to its node.
#include <QtTest>
#include <sstream>

#include "session/session.h"
#include "tests/support/test_paths.h"

using namespace fuselens;

namespace {

std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

}  // namespace

class ProvenanceTest : public QObject {
  Q_OBJECT

 private slots:
  void everyKernelHasItsLines_data() {
    QTest::addColumn<QString>("sample");
    QTest::addColumn<int>("kind");
    QTest::addColumn<QString>("comment");
    const int loops = int(Session::CodeKind::LoopIr), llvm = int(Session::CodeKind::LlvmIr),
              asmKind = int(Session::CodeKind::Asm);
    QTest::newRow("matmul_bias_relu loop IR") << "matmul_bias_relu.onnx" << loops << "//";
    QTest::newRow("matmul_bias_relu LLVM IR") << "matmul_bias_relu.onnx" << llvm << ";";
    QTest::newRow("mlp loop IR") << "mlp.onnx" << loops << "//";
#if defined(__x86_64__) || defined(__i386__)
    QTest::newRow("mlp assembly") << "mlp.onnx" << asmKind << "#";
#elif defined(__aarch64__)
    QTest::newRow("mlp assembly") << "mlp.onnx" << asmKind << "//";
#endif
    QTest::newRow("mlp CUDA C (its emitter writes its own)")
        << "mlp.onnx" << int(Session::CodeKind::CudaC) << "";
    QTest::newRow("reduce_fusion LLVM IR") << "reduce_fusion.onnx" << llvm << ";";
    QTest::newRow("llama_block loop IR") << "llama_block.onnx" << loops << "//";
  }

  void everyKernelHasItsLines() {
    QFETCH(QString, sample);
    QFETCH(int, kind);
    QFETCH(QString, comment);
    Session s;
    OpenRequest req{
        test::sourcePath("/samples/" + sample.toStdString()), {}, {}, defaultPipeline()};
    if (sample.startsWith("llama")) req.dims["seq"] = 8;
    QVERIFY(s.open(req).isOk());
    QVERIFY(s.compile().isOk());
    auto code = s.annotatedCode(Session::CodeKind(kind));
    QVERIFY2(code.isOk(), code.message().c_str());
    const auto lines = linesOf(code->text);
    QCOMPARE(code->spans.size(), s.compiled()->kernels().size());
    int previousEnd = -1;
    for (const CodeSpan& span : code->spans) {
      QVERIFY(span.firstLine > previousEnd);
      QVERIFY(span.lastLine >= span.firstLine && span.lastLine < int(lines.size()));
      previousEnd = span.lastLine;
      QVERIFY(!span.origins.empty());
      QCOMPARE(code->atLine(span.lastLine), &span);
      QCOMPARE(code->ofNode(span.node), &span);
      QCOMPARE(code->ofOp(span.ops.front()), &span);
      const std::string& first = lines[size_t(span.firstLine)];
      if (comment.isEmpty()) {
        QVERIFY2(first.find(span.kernel) != std::string::npos, first.c_str());
        continue;
      }
      // "// from: /a/MatMul, /a/Add": the origin line, then the kernel's definition.
      QVERIFY2(first.rfind(comment.toStdString() + " from: ", 0) == 0, first.c_str());
      for (const std::string& o : span.origins)
        QVERIFY2(first.find(o) != std::string::npos, (first + " lacks " + o).c_str());
      QVERIFY(lines[size_t(span.firstLine) + 1].find(span.kernel) != std::string::npos);
    }
    // The origins name imported nodes: each one is a node of the original graph.
    for (const CodeSpan& span : code->spans)
      for (const std::string& o : span.origins) {
        bool known = false;
        for (NodeId id : s.original().nodeIds()) known |= s.original().node(id).name == o;
        QVERIFY2(known, o.c_str());
      }
  }

  void beforeCompileThereAreNoSpans() {
    Session s;
    QVERIFY(s.open(OpenRequest{test::sourcePath("/samples/mlp.onnx"), {}, {}, defaultPipeline()})
                .isOk());
    auto ir = s.annotatedCode(Session::CodeKind::Ir);
    QVERIFY(ir.isOk());
    QVERIFY(ir->spans.empty());
    QVERIFY(ir->atLine(0) == nullptr);
  }

  void annotateFindsDefinitionsNotReferences() {
    Session s;
    QVERIFY(s.open(OpenRequest{test::sourcePath("/samples/mlp.onnx"), {}, {}, defaultPipeline()})
                .isOk());
    QVERIFY(s.compile().isOk());
    const auto& ks = s.compiled()->kernels();
    QVERIFY(ks.size() >= 2);
    // Column-0 lines define; an indented call is only a reference.
    const std::string text = "void " + ks[1].name + "(float* a) {\n  " + ks[0].name +
                             "(a);\n}\n\nvoid " + ks[0].name + "(float* a) {\n  a[0] = 0;\n}\n";
    auto code = annotateOrigins(text, ks, s.finalGraph(), s.original(), "");
    QCOMPARE(code.text, text);
    QCOMPARE(code.spans.size(), size_t(2));
    QCOMPARE(code.spans[0].kernel, ks[1].name);
    QCOMPARE(code.spans[0].lastLine, 2);  // its closing brace
    QCOMPARE(code.spans[1].kernel, ks[0].name);
    QCOMPARE(code.spans[1].firstLine, 4);
    QVERIFY(code.atLine(3) == nullptr);  // the blank line between them
  }
};

QTEST_GUILESS_MAIN(ProvenanceTest)
#include "provenance_test.moc"
