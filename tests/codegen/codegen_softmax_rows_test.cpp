// Softmax over wide last-axis rows: the software-pipelined nest (blocks of
// rows, the next row's max gathered inside this row's exp pass) against a
// double-precision reference. Rows with a tail after the lane chunks, a rank-3
// input (rows flattened over two outer dims), a fused epilogue in the sink,
// rows whose maxima differ widely (a wrong carried max shows at once), and
// shapes that stay on the one-row-per-step nest.
#include <QtTest>

#include "codegen/compiler.h"
#include "test_util.h"

using namespace fuselens;
using namespace fuselens::testing;

Q_DECLARE_METATYPE(std::vector<int64_t>)

namespace {

double maxError(const std::vector<float>& got, const std::vector<float>& want) {
  if (got.size() != want.size()) return INFINITY;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    double d = std::fabs(double(got[i]) - double(want[i]));
    if (!(d <= worst)) worst = std::isnan(d) ? INFINITY : d;
  }
  return worst;
}

}  // namespace

class CodegenSoftmaxRowsTest : public QObject {
  Q_OBJECT

 private slots:
  void wideRows_data();
  void wideRows();
};

void CodegenSoftmaxRowsTest::wideRows_data() {
  QTest::addColumn<Shape>("shape");
  QTest::addColumn<bool>("epilogue");
  QTest::addColumn<bool>("pipelined");
  QTest::newRow("64x1024, blocks of 8") << Shape{64, 1024} << false << true;
  QTest::newRow("64x1000, lane tail, fused epilogue") << Shape{64, 1000} << true << true;
  QTest::newRow("3x8x515 rank 3, blocks of 2") << Shape{3, 8, 515} << true << true;
  QTest::newRow("16x2048, blocks of 2") << Shape{16, 2048} << false << true;
  QTest::newRow("7x600: 7 rows, one row a step") << Shape{7, 600} << false << false;
  QTest::newRow("32x256: narrow, one row a step") << Shape{32, 256} << false << false;
}

// y = Softmax(x) (* 3 when `epilogue`, applied in the sink); every row gets
// its own offset (-120..+120): exp with another row's max over- or underflows.
void CodegenSoftmaxRowsTest::wideRows() {
  QFETCH(Shape, shape);
  QFETCH(bool, epilogue);
  QFETCH(bool, pipelined);
  const int64_t len = shape.back(), rows = numel(shape) / len;
  TensorData xt = randomTensor(shape, 91, -4, 4);
  float* xd = xt.data<float>();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < len; ++j) xd[r * len + j] += 3.0f * float((r * 37) % 81 - 40);
  Graph body;
  ValueId x = body.addInput("x", f32(shape));
  ValueId y = body.node(body.addNode("Softmax", {x}, {{"sm", f32(shape)}})).outputs[0];
  std::map<std::string, std::shared_ptr<const TensorData>> consts;
  if (epilogue) {
    ValueId k = body.addInput("k", f32({}));
    consts["k"] = std::make_shared<const TensorData>(
        TensorData::fromVector(DType::F32, {}, std::vector<float>{3.0f}));
    y = body.node(body.addNode("Mul", {y, k}, {{"y", f32(shape)}})).outputs[0];
  }
  body.addOutput(y);
  Graph g = wrapInGroup(std::move(body), consts);
  auto want = refSoftmax(values(xt), shape, -1);
  if (epilogue)
    for (float& v : want) v *= 3.0f;
  auto m = compileGraph(g, {});
  QVERIFY2(m.isOk(), m.message().c_str());
  std::string ir = (*m)->loopIrText();
  // The pipelined nest reads the next row at min(r + 1, block - 1).
  QVERIFY2((ir.find("min(") != std::string::npos) == pipelined, ir.c_str());
  auto out = (*m)->run({{"x", xt}});
  QVERIFY2(out.isOk(), out.message().c_str());
  QVERIFY(maxError(values(*(*out)[g.outputs()[0].index]), want) <= 1e-6);
}

QTEST_GUILESS_MAIN(CodegenSoftmaxRowsTest)
#include "codegen_softmax_rows_test.moc"
