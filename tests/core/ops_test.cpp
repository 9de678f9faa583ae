// The op registry beyond what the ORT fixtures show: shape inference with
// symbolic dims, the exact sentences of shape errors, pattern kinds (ElemWise
// vs Broadcast, Opaque for unknown and fused ops), and that unknown ops keep
// the types they were given.
#include <QtTest>

#include "core/eager/interpreter.h"
#include "core/ops/registry.h"

using namespace fuselens;

namespace {

TensorType T(std::vector<Dim> dims, DType t = DType::F32) {
  TensorType tt;
  tt.dtype = t;
  tt.shape = std::move(dims);
  return tt;
}
Dim S(const char* s) { return Dim::named(s); }
Dim N(int64_t v) { return Dim::fixed(v); }

// One node over fresh inputs (or constants where given); its output type unknown.
struct OneNode {
  Graph g;
  NodeId n;
  const TensorType& out() const { return g.value(g.node(n).outputs[0]).type; }
};

OneNode make(const std::string& op, std::vector<TensorType> ins, Attributes attrs = {},
             std::map<size_t, TensorData> consts = {}) {
  OneNode o;
  std::vector<ValueId> ids;
  for (size_t i = 0; i < ins.size(); ++i) {
    std::string name = "in" + std::to_string(i);
    ids.push_back(consts.count(i)
                      ? o.g.addConstant(name, std::make_shared<TensorData>(consts.at(i)))
                      : o.g.addInput(name, ins[i]));
  }
  TensorType unknown;
  unknown.rankKnown = false;
  o.n = o.g.addNode(op, ids, {{"out", unknown}}, std::move(attrs), "n1");
  o.g.addOutput(o.g.node(o.n).outputs[0]);
  return o;
}

TensorData i64s(std::vector<int64_t> v) {
  return TensorData::fromVector(DType::I64, {int64_t(v.size())}, v);
}

}  // namespace

class OpsTest : public QObject {
  Q_OBJECT

 private slots:
  void registryHasEveryOp() {
    const auto& r = OpRegistry::instance();
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Relu", "Sigmoid", "Tanh", "Exp", "Identity",
                           "MatMul", "Gemm", "Softmax", "Reshape", "Transpose"}) {
      QVERIFY2(r.find("", op), op);
      QVERIFY2(r.find("ai.onnx", op), op);  // the default domain's long name
    }
    QVERIFY(!r.find("", "FooBar"));
    QVERIFY(!r.find("com.example", "Add"));
    QCOMPARE(r.all().size(), size_t(14));
    QCOMPARE(QString::fromStdString(std::string(patternKindName(PatternKind::OutEWiseFusable))),
             "OutEWiseFusable");
  }

  void inference_data() {
    QTest::addColumn<QString>("got");
    QTest::addColumn<QString>("want");
    auto row = [](const char* name, OneNode o, const char* want) {
      Status s = inferNodeTypes(o.g, o.n);
      QString got =
          s.isOk() ? QString::fromStdString(o.out().str()) : QString::fromStdString(s.message());
      QTest::newRow(name) << got << want;
    };
    Attributes transB, perm, axis1, allowzero;
    transB.set("transB", int64_t(1));
    perm.set("perm", std::vector<int64_t>{1, 0, 2});
    axis1.set("axis", int64_t(3));
    allowzero.set("allowzero", int64_t(1));
    row("add symbol vs 1", make("Add", {T({S("b"), N(1), N(4)}), T({N(3), N(1)})}), "f32[b,3,4]");
    row("add equal symbols", make("Add", {T({S("b"), N(4)}), T({S("b"), N(4)})}), "f32[b,4]");
    row("add other symbols", make("Add", {T({S("n"), N(4)}), T({S("m"), N(4)})}), "f32[?,4]");
    row("add symbol vs 5", make("Add", {T({S("n")}), T({N(5)})}), "f32[5]");
    row("add mismatch", make("Add", {T({N(2), N(3)}), T({N(4)})}),
        "node 'n1' (Add): shapes [2,3] and [4] cannot be broadcast (dimension 1: 3 vs 4)");
    row("add dtypes", make("Add", {T({N(2)}), T({N(2)}, DType::F64)}),
        "node 'n1' (Add): inputs have different element types f32 and f64");
    row("relu keeps symbols", make("Relu", {T({S("b"), N(8)})}), "f32[b,8]");
    row("matmul batched symbol", make("MatMul", {T({S("b"), N(3), N(4)}), T({N(4), N(5)})}),
        "f32[b,3,5]");
    row("matmul 1-D left", make("MatMul", {T({N(4)}), T({N(2), N(4), N(3)})}), "f32[2,3]");
    row("matmul 1-D both", make("MatMul", {T({N(4)}), T({N(4)})}), "f32[]");
    row("matmul inner mismatch", make("MatMul", {T({N(1), N(128)}), T({N(64), N(32)})}),
        "node 'n1' (MatMul): inner dimensions 128 and 64 do not match");
    row("gemm transB", make("Gemm", {T({S("b"), N(64)}), T({N(128), N(64)}), T({N(128)})}, transB),
        "f32[b,128]");
    row("gemm bad C", make("Gemm", {T({N(2), N(3)}), T({N(3), N(4)}), T({N(2)})}),
        "node 'n1' (Gemm): shapes [2,4] and [2] cannot be broadcast (dimension 1: 4 vs 2)");
    row("softmax bad axis", make("Softmax", {T({N(2), N(3)})}, axis1),
        "node 'n1' (Softmax): axis 3 is out of range for f32[2,3]");
    row("reshape keeps symbol",
        make("Reshape", {T({S("b"), N(4), N(16)}), T({N(2)}, DType::I64)}, {},
             {{1, i64s({0, -1})}}),
        "f32[b,64]");
    row("reshape -1 of symbol",
        make("Reshape", {T({S("b"), N(4)}), T({N(1)}, DType::I64)}, {}, {{1, i64s({-1})}}),
        "f32[?]");
    row("reshape computed shape", make("Reshape", {T({N(6)}), T({N(3)}, DType::I64)}),
        "f32[?,?,?]");
    row("reshape count mismatch",
        make("Reshape", {T({N(2), N(3)}), T({N(2)}, DType::I64)}, {}, {{1, i64s({4, 2})}}),
        "node 'n1' (Reshape): cannot reshape [2,3] into [4,2] (the element counts differ)");
    row("reshape two -1",
        make("Reshape", {T({N(6)}), T({N(2)}, DType::I64)}, {}, {{1, i64s({-1, -1})}}),
        "node 'n1' (Reshape): the target shape has more than one -1");
    row("reshape allowzero",
        make("Reshape", {T({N(0), N(3)}), T({N(2)}, DType::I64)}, allowzero, {{1, i64s({3, 0})}}),
        "f32[3,0]");
    row("transpose perm", make("Transpose", {T({S("b"), N(3), N(4)})}, perm), "f32[3,b,4]");
    row("transpose default", make("Transpose", {T({S("b"), N(3), N(4)})}), "f32[4,3,b]");
    row("transpose bad perm", make("Transpose", {T({N(2), N(3)})}, perm),
        "node 'n1' (Transpose): perm [1,0,2] is not a permutation of 2 axes");
  }

  void inference() {
    QFETCH(QString, got);
    QFETCH(QString, want);
    QCOMPARE(got, want);
  }

  void patternKinds() {
    OneNode same = make("Add", {T({N(2), N(3)}), T({N(2), N(3)})});
    QVERIFY(inferGraphTypes(same.g).isOk());
    QCOMPARE(patternKindOf(same.g, same.n), PatternKind::ElemWise);
    OneNode bcast = make("Mul", {T({N(2), N(3)}), T({N(3)})});
    QVERIFY(inferGraphTypes(bcast.g).isOk());
    QCOMPARE(patternKindOf(bcast.g, bcast.n), PatternKind::Broadcast);
    OneNode tr = make("Transpose", {T({N(2), N(3)})});
    QCOMPARE(patternKindOf(tr.g, tr.n), PatternKind::Injective);
    OneNode unknown = make("FooBar", {T({N(2)})});
    QCOMPARE(patternKindOf(unknown.g, unknown.n), PatternKind::Opaque);
  }

  void unknownOpsKeepTheirTypes() {
    OneNode o = make("FooBar", {T({N(2)})});
    o.g.mutableValue(o.g.node(o.n).outputs[0]).type = T({N(7)});
    QVERIFY(inferGraphTypes(o.g).isOk());
    QCOMPARE(QString::fromStdString(o.out().str()), "f32[7]");
  }

  void kernelErrorsNameTheNode() {
    // Types left unknown, so only the kernel can see the mismatch.
    TensorType unknown;
    unknown.rankKnown = false;
    OneNode o = make("MatMul", {unknown, unknown});
    o.g.mutableNode(o.n).name = "fc1";
    auto r = runEager(o.g, {{"in0", TensorData(DType::F32, {1, 128})},
                            {"in1", TensorData(DType::F32, {64, 32})}});
    QVERIFY(!r.isOk());
    QCOMPARE(QString::fromStdString(r.message()),
             "node 'fc1' (MatMul): inner dimensions 128 and 64 do not match");
  }
};

QTEST_APPLESS_MAIN(OpsTest)
#include "ops_test.moc"
