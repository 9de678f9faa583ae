// Codegen's dispatch table agrees with the op registry: every op the registry
// marks computable has its row in the table of its compute class (an op added
// to the registry without a lowering fails here, not in a user's model), and
// the dtypes columns admit what lowering handles and refuse the rest.
#include <QtTest>

#include "codegen/lower/compute_table.h"
#include "core/ops/registry.h"

using namespace fuselens;

class CodegenDispatchTableTest : public QObject {
  Q_OBJECT

 private slots:
  void everyComputableOpHasItsRow() {
    int checked = 0;
    for (const OpInfo* op : OpRegistry::instance().all()) {
      Node n;
      n.op = op->name;
      n.domain = op->domain;
      const std::string what = op->domain + "::" + op->name;
      switch (op->compute) {
        case ComputeClass::Elementwise:
          QVERIFY2(hasElementwiseRow(op->name), what.c_str());
          break;
        case ComputeClass::IndexMap:
          QVERIFY2(indexMapRow(n) != nullptr, what.c_str());
          break;
        case ComputeClass::Injective:
          QVERIFY2(injectiveRow(n) != nullptr, what.c_str());
          break;
        case ComputeClass::Reduction:
          QVERIFY2(reductionRow(n) != nullptr, what.c_str());
          break;
        default:
          continue;
      }
      ++checked;
    }
    QVERIFY(checked > 100);
  }

  void dtypesColumns_data() {
    QTest::addColumn<QString>("op");
    QTest::addColumn<int>("dtype");
    QTest::addColumn<bool>("handled");
    QTest::newRow("MatMul i64") << "MatMul" << int(DType::I64) << true;
    QTest::newRow("Gemm i64") << "Gemm" << int(DType::I64) << false;
    QTest::newRow("ReduceSum i32") << "ReduceSum" << int(DType::I32) << true;
    QTest::newRow("ReduceMean i32") << "ReduceMean" << int(DType::I32) << false;
    QTest::newRow("ReduceMax bool") << "ReduceMax" << int(DType::Bool) << false;
    QTest::newRow("Conv f16") << "Conv" << int(DType::F16) << true;
    QTest::newRow("Concat bool") << "Concat" << int(DType::Bool) << true;
    QTest::newRow("Pad i64") << "Pad" << int(DType::I64) << false;
  }
  void dtypesColumns() {
    QFETCH(QString, op);
    QFETCH(int, dtype);
    QFETCH(bool, handled);
    Node n;
    n.op = op.toStdString();
    QCOMPARE(computeHandlesDType(n, DType(dtype)), handled);
  }

  void elementwiseKindsColumn() {
    QCOMPARE(elementwiseKinds("Sqrt"), OperandKinds::Float);
    QCOMPARE(elementwiseKinds("Add"), OperandKinds::Numeric);
    QCOMPARE(elementwiseKinds("Less"), OperandKinds::Same);
    QCOMPARE(elementwiseKinds("Xor"), OperandKinds::Bool);
    QVERIFY(isBinaryElementwise("Pow"));
    QVERIFY(!isBinaryElementwise("Sum"));  // variadic
    QVERIFY(!hasElementwiseRow("MatMul"));
  }
};

QTEST_APPLESS_MAIN(CodegenDispatchTableTest)
#include "codegen_dispatch_table_test.moc"
