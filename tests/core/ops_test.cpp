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
    // Every op issue 3 lists.
    for (const char* op : {"Abs",
                           "Neg",
                           "Sqrt",
                           "Reciprocal",
                           "Pow",
                           "Exp",
                           "Log",
                           "Erf",
                           "Sin",
                           "Cos",
                           "Floor",
                           "Ceil",
                           "Round",
                           "Sign",
                           "Relu",
                           "LeakyRelu",
                           "PRelu",
                           "Elu",
                           "Selu",
                           "Celu",
                           "Sigmoid",
                           "HardSigmoid",
                           "HardSwish",
                           "Tanh",
                           "Softplus",
                           "Gelu",
                           "Mish",
                           "Clip",
                           "Min",
                           "Max",
                           "Sum",
                           "Mean",
                           "Mod",
                           "BitShift",
                           "Equal",
                           "Less",
                           "LessOrEqual",
                           "Greater",
                           "GreaterOrEqual",
                           "Not",
                           "And",
                           "Or",
                           "Xor",
                           "Where",
                           "IsNaN",
                           "IsInf",
                           "ReduceSum",
                           "ReduceMean",
                           "ReduceMax",
                           "ReduceMin",
                           "ReduceProd",
                           "ReduceL2",
                           "ReduceSumSquare",
                           "ReduceLogSumExp",
                           "ArgMax",
                           "ArgMin",
                           "CumSum",
                           "TopK",
                           "Softmax",
                           "LogSoftmax",
                           "MatMul",
                           "Gemm",
                           "Einsum",
                           "Conv",
                           "ConvTranspose",
                           "MaxPool",
                           "AveragePool",
                           "GlobalAveragePool",
                           "GlobalMaxPool",
                           "BatchNormalization",
                           "InstanceNormalization",
                           "LayerNormalization",
                           "GroupNormalization",
                           "LSTM",
                           "GRU",
                           "RNN",
                           "Reshape",
                           "Flatten",
                           "Transpose",
                           "Squeeze",
                           "Unsqueeze",
                           "Concat",
                           "Split",
                           "Slice",
                           "Gather",
                           "GatherElements",
                           "GatherND",
                           "ScatterND",
                           "ScatterElements",
                           "Expand",
                           "Tile",
                           "Pad",
                           "Resize",
                           "DepthToSpace",
                           "SpaceToDepth",
                           "Shape",
                           "Size",
                           "ConstantOfShape",
                           "Range",
                           "NonZero",
                           "OneHot",
                           "Cast",
                           "CastLike",
                           "Identity",
                           "Dropout",
                           "If",
                           "Loop",
                           "Scan",
                           "DequantizeLinear",
                           "QuantizeLinear"}) {
      QVERIFY2(r.find("", op), op);
      QVERIFY2(r.find("", op)->infer && r.find("", op)->eager, op);
    }
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
        "f32[b*4]");
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
    Attributes axis0, convPads, flat2, pool;
    axis0.set("axis", int64_t(0));
    convPads.set("pads", std::vector<int64_t>{1, 1, 1, 1});
    convPads.set("strides", std::vector<int64_t>{2, 2});
    flat2.set("axis", int64_t(2));
    pool.set("kernel_shape", std::vector<int64_t>{2, 2});
    row("concat symbol", make("Concat", {T({S("b"), N(3)}), T({S("b"), N(3)})}, axis0),
        "f32[b*2,3]");
    row("flatten keeps lone symbol", make("Flatten", {T({S("b"), N(1), N(3), N(4)})}, flat2),
        "f32[b,12]");
    row("conv keeps batch symbol",
        make("Conv", {T({S("b"), N(3), N(8), N(9)}), T({N(4), N(3), N(3), N(3)})}, convPads),
        "f32[b,4,4,5]");
    row("conv channel mismatch",
        make("Conv", {T({S("b"), N(3), N(8), N(9)}), T({N(4), N(2), N(3), N(3)})}, convPads),
        "f32[b,4,4,5]");  // the kernel checks groups; inference reads sizes only
    row("maxpool symbol spatial", make("MaxPool", {T({N(1), N(2), S("h"), N(6)})}, pool),
        "f32[1,2,h-1,5]");
    row("unsqueeze const axes",
        make("Unsqueeze", {T({S("b"), N(3)}), T({N(2)}, DType::I64)}, {}, {{1, i64s({0, -1})}}),
        "f32[1,b,3,1]");
    row("slice const",
        make("Slice",
             {T({S("b"), N(10)}), T({N(1)}, DType::I64), T({N(1)}, DType::I64),
              T({N(1)}, DType::I64)},
             {}, {{1, i64s({2})}, {2, i64s({-1})}, {3, i64s({1})}}),
        "f32[b,7]");
    row("gather", make("Gather", {T({N(5), S("d")}), T({N(2), N(3)}, DType::I64)}), "f32[2,3,d]");
    row("nonzero is data-dependent", make("NonZero", {T({N(3), N(4)})}), "i64[2,?]");
    row("equal gives bool", make("Equal", {T({N(3)}), T({N(1)})}), "bool[3]");
    row("where mixes dtypes",
        make("Where", {T({N(3)}, DType::Bool), T({N(3)}), T({N(3)}, DType::I64)}),
        "node 'n1' (Where): X and Y have different element types");
    row("lstm shapes",
        make("LSTM", {T({S("t"), N(2), N(3)}), T({N(1), N(20), N(3)}), T({N(1), N(20), N(5)})}),
        "f32[t,1,2,5]");
  }

  void inference() {
    QFETCH(QString, got);
    QFETCH(QString, want);
    QCOMPARE(got, want);
  }

  // Sentences of kernel errors that only data can show.
  void dataErrorsNameTheNode_data() {
    QTest::addColumn<QString>("got");
    QTest::addColumn<QString>("want");
    auto run = [](const char* op, std::vector<TensorData> ins, Attributes attrs = {}) {
      std::vector<TensorType> types;
      for (const auto& t : ins) {
        TensorType u;
        u.dtype = t.dtype;
        u.rankKnown = false;
        types.push_back(u);
      }
      OneNode o = make(op, types, attrs);
      std::map<std::string, TensorData> feed;
      for (size_t i = 0; i < ins.size(); ++i) feed["in" + std::to_string(i)] = ins[i];
      auto r = runEager(o.g, feed);
      return QString::fromStdString(r.isOk() ? std::string("ok") : r.message());
    };
    TensorData f(DType::F32, {3, 2});
    QTest::newRow("gather index") << run("Gather", {f, i64s({5})})
                                  << "node 'n1' (Gather): index 5 is out of range for a dim of 3";
    QTest::newRow("squeeze non-1")
        << run("Squeeze", {f, i64s({0})})
        << "node 'n1' (Squeeze): cannot squeeze axis 0 of shape [3,2], whose size is not 1";
    QTest::newRow("range zero delta")
        << run("Range", {TensorData::fromVector(DType::I64, {}, std::vector<int64_t>{0}),
                         TensorData::fromVector(DType::I64, {}, std::vector<int64_t>{4}),
                         TensorData::fromVector(DType::I64, {}, std::vector<int64_t>{0})})
        << "node 'n1' (Range): delta is 0";
    QTest::newRow("mod by zero")
        << run("Mod", {TensorData::fromVector(DType::I32, {1}, std::vector<int32_t>{3}),
                       TensorData::fromVector(DType::I32, {1}, std::vector<int32_t>{0})})
        << "node 'n1' (Mod): integer division by zero";
    QTest::newRow("constant of shape huge")
        << run("ConstantOfShape", {i64s({1 << 30, 1 << 30})})
        << "node 'n1' (ConstantOfShape): shape [1073741824,1073741824] is negative or too large";
    // Training-mode Dropout that would drop anything is random in ORT: refused.
    QTest::newRow("dropout training ratio")
        << run("Dropout", {f, TensorData::fromVector(DType::F32, {}, std::vector<float>{0.25f}),
                           TensorData::fromVector(DType::Bool, {}, std::vector<uint8_t>{1})})
        << "node 'n1' (Dropout): training_mode=true with ratio 0.250000 drops elements at random "
           "(ONNX Runtime draws them from its own generator, so no reference can match); only "
           "ratio 0 runs";
    Attributes blocked;
    blocked.set("axis", int64_t(1));
    blocked.set("block_size", int64_t(2));
    QTest::newRow("blocked scale shape")
        << run("DequantizeLinear", {TensorData(DType::I8, {3, 5}), TensorData(DType::F32, {3, 2})},
               blocked)
        << "node 'n1' (DequantizeLinear): a blocked scale [3,2] does not fit [3,5] with axis 1 "
           "and block_size 2";
    QTest::newRow("rank-2 scale without block_size")
        << run("DequantizeLinear", {TensorData(DType::I8, {3, 4}), TensorData(DType::F32, {3, 2})})
        << "node 'n1' (DequantizeLinear): a scale of rank 2 needs block_size > 0 (blocked "
           "quantization)";
    Attributes toString;
    toString.set("to", int64_t(8));
    QTest::newRow("cast to string")
        << run("Cast", {f}, toString)
        << "node 'n1' (Cast): cast to string is not supported: FuseLens tensors hold numbers and "
           "bools only";
    Attributes policy;
    policy.set("keep_aspect_ratio_policy", std::string("fit"));
    QTest::newRow("resize policy")
        << run("Resize",
               {TensorData(DType::F32, {1, 1, 2, 2}), TensorData(DType::F32, {0}),
                TensorData(DType::F32, {0}), i64s({1, 1, 4, 4})},
               policy)
        << "node 'n1' (Resize): keep_aspect_ratio_policy 'fit' is not stretch, not_larger or "
           "not_smaller";
    Attributes axes;
    axes.set("axes", std::vector<int64_t>{2, -2});
    QTest::newRow("resize axes twice")
        << run("Resize",
               {TensorData(DType::F32, {1, 1, 2, 2}), TensorData(DType::F32, {0}),
                TensorData::fromVector(DType::F32, {2}, std::vector<float>{2, 2})},
               axes)
        << "node 'n1' (Resize): axis -2 is listed twice in axes";
  }

  void dataErrorsNameTheNode() {
    QFETCH(QString, got);
    QFETCH(QString, want);
    QCOMPARE(got, want);
  }

  // f16/bf16 round to nearest even, as ONNX Runtime's Cast does.
  void halfCastsRoundToNearestEven() {
    std::vector<float> in{1.0f, 1.0f + 1.0f / 2048, 1.0f + 3.0f / 2048, 65520.0f, 6.0e-8f, -0.0f,
                          1e-9f};
    std::vector<uint16_t> want16{0x3c00, 0x3c00, 0x3c02, 0x7c00, 0x0001, 0x8000, 0x0000};
    Attributes to16, toBf;
    to16.set("to", int64_t(10));
    toBf.set("to", int64_t(16));
    auto x = TensorData::fromVector(DType::F32, {int64_t(in.size())}, in);
    for (auto [attrs, dt] : {std::pair{to16, DType::F16}, std::pair{toBf, DType::BF16}}) {
      OneNode o = make("Cast", {TensorType::of(DType::F32, {int64_t(in.size())})}, attrs);
      QVERIFY(inferGraphTypes(o.g).isOk());
      auto r = runEager(o.g, {{"in0", x}});
      QVERIFY2(r.isOk(), r.message().c_str());
      const TensorData* y = r->find(o.g.outputs()[0]);
      QCOMPARE(y->dtype, dt);
      if (dt == DType::F16) {
        for (size_t i = 0; i < in.size(); ++i) QCOMPARE(y->data<uint16_t>()[i], want16[i]);
      } else {
        QCOMPARE(y->data<uint16_t>()[1], uint16_t(0x3f80));  // 1 + 2^-11 rounds to 1 in bf16
        QCOMPARE(y->at(3), 65536.0);
      }
    }
  }

  // ORT's CPU LSTM refuses layout=1, so the batch-first layout is checked
  // against the sequence-first one on the same data.
  void lstmLayoutsAgree() {
    const int64_t T = 3, B = 2, I = 2, H = 3;
    auto seeded = [](std::vector<int64_t> shape, float scale) {
      TensorData t(DType::F32, shape);
      for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = scale * float((i * 37) % 11 - 5);
      return t;
    };
    TensorData xs = seeded({T, B, I}, 0.1f), w = seeded({1, 4 * H, I}, 0.05f),
               r = seeded({1, 4 * H, H}, 0.03f);
    TensorData xb(DType::F32, {B, T, I});
    for (int64_t t = 0; t < T; ++t)
      for (int64_t b = 0; b < B; ++b)
        for (int64_t i = 0; i < I; ++i)
          xb.data<float>()[(b * T + t) * I + i] = xs.data<float>()[(t * B + b) * I + i];
    auto runLayout = [&](int64_t layout, const TensorData& x) {
      Attributes a;
      a.set("hidden_size", H);
      a.set("layout", layout);
      a.set("direction", std::string("bidirectional"));
      TensorData w2 = seeded({2, 4 * H, I}, 0.05f), r2 = seeded({2, 4 * H, H}, 0.03f);
      OneNode o = make("LSTM", {x.type(), w2.type(), r2.type()}, a, {{1, w2}, {2, r2}});
      auto res = runEager(o.g, {{"in0", x}});
      return res.isOk() ? *res->find(o.g.outputs()[0]) : TensorData();
    };
    (void)w;
    (void)r;
    TensorData ys = runLayout(0, xs), yb = runLayout(1, xb);
    QCOMPARE(ys.shape, (std::vector<int64_t>{T, 2, B, H}));
    QCOMPARE(yb.shape, (std::vector<int64_t>{B, T, 2, H}));
    for (int64_t t = 0; t < T; ++t)
      for (int64_t d = 0; d < 2; ++d)
        for (int64_t b = 0; b < B; ++b)
          for (int64_t h = 0; h < H; ++h)
            QCOMPARE(yb.data<float>()[((b * T + t) * 2 + d) * H + h],
                     ys.data<float>()[((t * 2 + d) * B + b) * H + h]);
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
