// Loop IR tests: the printer's text for small kernels (goldens), the builders'
// folding, stride analysis and the default schedule's choices.
#include <QtTest>

#include "codegen/loop/loop_ir.h"
#include "codegen/lower/lower.h"
#include "codegen/schedule/schedule.h"
#include "test_util.h"

using namespace fuselens;
using namespace fuselens::testing;

class CodegenLoopIrTest : public QObject {
  Q_OBJECT

 private slots:
  void printerGoldenAddRelu();
  void printerGoldenMatMulEpilogue();
  void printerGoldenSoftmaxWithTemp();
  void builderFolding();
  void strides();
  void scheduleMarksLoops();
};

namespace {

// QString so a failing comparison prints both texts.
QString qs(const std::string& s) { return QString::fromStdString(s); }

LoopFunc lowerGroup(const Graph& g, bool schedule) {
  const Node& n = g.node(g.nodeIds().back());
  auto f = lowerKernel(g, n, "k0");
  if (!f) qFatal("lowering failed: %s", f.message().c_str());
  applySchedule(*f, schedule ? Schedule::defaults() : Schedule::serial());
  return std::move(*f);
}

}  // namespace

void CodegenLoopIrTest::printerGoldenAddRelu() {
  Graph body;
  ValueId x = body.addInput("x", f32({2, 3})), b = body.addInput("b", f32({3}));
  ValueId a = body.node(body.addNode("Add", {x, b}, {{"a", f32({2, 3})}})).outputs[0];
  body.addOutput(body.node(body.addNode("Relu", {a}, {{"y", f32({2, 3})}})).outputs[0]);
  LoopFunc f = lowerGroup(wrapInGroup(std::move(body)), true);
  const char* golden =
      "void k0(const float* x /*[2,3]*/, const float* b /*[3]*/, float* y /*[2,3]*/) {\n"
      "  for (int64 i0 = 0; i0 < 2; ++i0) {\n"
      "    for (int64 i1 = 0; i1 < 3; ++i1) {  // vectorized\n"
      "      y[i0 * 3 + i1] = max(x[i0 * 3 + i1] + b[i1], 0.0f);\n"
      "    }\n"
      "  }\n"
      "}\n";
  if (qs(printLoopFunc(f)) != QString(golden)) qWarning("%s", printLoopFunc(f).c_str());
  QCOMPARE(qs(printLoopFunc(f)), QString(golden));
}

void CodegenLoopIrTest::printerGoldenMatMulEpilogue() {
  Graph body;
  ValueId x = body.addInput("x", f32({1, 4})), w = body.addInput("w", f32({4, 2}));
  ValueId mm = body.node(body.addNode("MatMul", {x, w}, {{"mm", f32({1, 2})}})).outputs[0];
  ValueId s = body.node(body.addNode("Sigmoid", {mm}, {{"s", f32({1, 2})}})).outputs[0];
  body.addOutput(body.node(body.addNode("Mul", {mm, s}, {{"y", f32({1, 2})}})).outputs[0]);
  LoopFunc f = lowerGroup(wrapInGroup(std::move(body)), true);
  const char* golden =
      "void k0(const float* x /*[1,4]*/, const float* w /*[4,2]*/, float* y /*[1,2]*/) {\n"
      "  for (int64 i0 = 0; i0 < 2; ++i0) {\n"
      "    float acc0 = 0.0f;\n"
      "    for (int64 i1 = 0; i1 < 4; ++i1) {\n"
      "      acc0 = acc0 + x[i1] * w[i1 * 2 + i0];\n"
      "    }\n"
      "    y[i0] = acc0 * sigmoid(acc0);\n"
      "  }\n"
      "}\n";
  if (qs(printLoopFunc(f)) != QString(golden)) qWarning("%s", printLoopFunc(f).c_str());
  QCOMPARE(qs(printLoopFunc(f)), QString(golden));
}

void CodegenLoopIrTest::printerGoldenSoftmaxWithTemp() {
  Graph body;
  ValueId x = body.addInput("x", f32({2, 3})), w = body.addInput("w", f32({3, 3}));
  ValueId mm = body.node(body.addNode("MatMul", {x, w}, {{"mm", f32({2, 3})}})).outputs[0];
  body.addOutput(body.node(body.addNode("Softmax", {mm}, {{"y", f32({2, 3})}})).outputs[0]);
  LoopFunc f = lowerGroup(wrapInGroup(std::move(body)), false);
  const char* golden =
      "void k0(const float* x /*[2,3]*/, const float* w /*[3,3]*/, float* y /*[2,3]*/) {\n"
      "  float* mm = alloc(6 * sizeof(float));  // temp f32[2,3]\n"
      "  for (int64 i0 = 0; i0 < 2; ++i0) {\n"
      "    for (int64 i1 = 0; i1 < 3; ++i1) {\n"
      "      float acc0 = 0.0f;\n"
      "      for (int64 i2 = 0; i2 < 3; ++i2) {\n"
      "        acc0 = acc0 + x[i0 * 3 + i2] * w[i2 * 3 + i1];\n"
      "      }\n"
      "      mm[i0 * 3 + i1] = acc0;\n"
      "    }\n"
      "  }\n"
      "  for (int64 i3 = 0; i3 < 2; ++i3) {\n"
      "    float max0 = -INFINITY;\n"
      "    for (int64 i4 = 0; i4 < 3; ++i4) {\n"
      "      max0 = max(max0, mm[i3 * 3 + i4]);\n"
      "    }\n"
      "    float sum0 = 0.0f;\n"
      "    for (int64 i5 = 0; i5 < 3; ++i5) {\n"
      "      sum0 = sum0 + exp(mm[i3 * 3 + i5] - max0);\n"
      "    }\n"
      "    for (int64 i6 = 0; i6 < 3; ++i6) {\n"
      "      y[i3 * 3 + i6] = exp(mm[i3 * 3 + i6] - max0) / sum0;\n"
      "    }\n"
      "  }\n"
      "  free(mm);\n"
      "}\n";
  if (qs(printLoopFunc(f)) != QString(golden)) qWarning("%s", printLoopFunc(f).c_str());
  QCOMPARE(qs(printLoopFunc(f)), QString(golden));
}

void CodegenLoopIrTest::builderFolding() {
  LoopFunc f;
  Var i = f.addVar("i0", DType::I64);
  QCOMPARE(qs(printExpr(f, add(mul(varRef(i), intConst(1)), intConst(0)))), QString("i0"));
  QCOMPARE(qs(printExpr(f, mul(intConst(3), intConst(4)))), QString("12"));
  QCOMPARE(qs(printExpr(f, mul(add(varRef(i), intConst(2)), intConst(5)))),
           QString("(i0 + 2) * 5"));
  QCOMPARE(qs(printExpr(f, sub(varRef(i), sub(varRef(i), intConst(1))))), QString("i0 - (i0 - 1)"));
  QCOMPARE(qs(printExpr(f, binary(BinOp::Mod, varRef(i), intConst(1)))), QString("0"));
  // Float x + 0 is not folded: -0.0f + 0.0f is +0.0f, so it is not the identity.
  Var v = f.addVar("acc0", DType::F32);
  QCOMPARE(qs(printExpr(f, add(varRef(v), floatConst(0)))), QString("acc0 + 0.0f"));
  QCOMPARE(printExpr(f, select(compare(CmpOp::GT, varRef(v), floatConst(0.5)), varRef(v),
                               floatConst(-1))),
           std::string("acc0 > 0.5f ? acc0 : -1.0f"));
}

void CodegenLoopIrTest::strides() {
  LoopFunc f;
  Var i = f.addVar("i0", DType::I64), j = f.addVar("i1", DType::I64);
  ExprRef idx = add(mul(varRef(i), intConst(64)), varRef(j));
  QCOMPARE(strideIn(idx, j.id), std::optional<int64_t>(1));
  QCOMPARE(strideIn(idx, i.id), std::optional<int64_t>(64));
  QCOMPARE(strideIn(binary(BinOp::Div, varRef(j), intConst(4)), j.id), std::optional<int64_t>());
  QCOMPARE(strideIn(binary(BinOp::Div, varRef(i), intConst(4)), j.id), std::optional<int64_t>(0));
}

void CodegenLoopIrTest::scheduleMarksLoops() {
  // Large elementwise: outer parallel, inner vectorized.
  Graph g;
  ValueId x = g.addInput("x", f32({512, 128}));
  g.addOutput(g.node(g.addNode("Exp", {x}, {{"y", f32({512, 128})}})).outputs[0]);
  LoopFunc f = lowerGroup(g, true);
  std::string text = printLoopFunc(f);
  QVERIFY2(text.find("i0 < 512; ++i0) {  // parallel") != std::string::npos, text.c_str());
  QVERIFY2(text.find("i1 < 128; ++i1) {  // vectorized") != std::string::npos, text.c_str());
  // Transposed store: the inner loop is strided, so it is not vectorized.
  Graph t;
  ValueId a = t.addInput("a", f32({8, 4}));
  t.addOutput(t.node(t.addNode("Transpose", {a}, {{"b", f32({4, 8})}})).outputs[0]);
  LoopFunc ft = lowerGroup(t, true);
  QVERIFY(printLoopFunc(ft).find("vectorized") != std::string::npos);  // store is contiguous
  QVERIFY(printLoopFunc(ft).find("a[i1 * 4 + i0]") != std::string::npos);
  // The serial preset leaves everything serial.
  LoopFunc fs = lowerGroup(g, false);
  QVERIFY(printLoopFunc(fs).find("//") == std::string::npos);
}

QTEST_APPLESS_MAIN(CodegenLoopIrTest)
#include "codegen_loop_ir_test.moc"
