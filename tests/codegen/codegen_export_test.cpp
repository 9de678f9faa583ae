// Export end to end: a graph with a tiled MatMul (prepacked constant), a fused
// epilogue, a Softmax, a Reshape alias as a second output and an output that is
// a graph input, exported to .ll/.s/.o/.so/.h/.json; then a plain C program is
// built against the .so with the system cc, run on the same inputs as the JIT,
// and its outputs compared; a wrong shape must fail with a sentence.
// Other dtypes and CPU levels: codegen_export_dtypes_test.cpp.
#include <QtTest>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "codegen/export/export.h"
#include "shell_util.h"
#include "test_util.h"

using namespace fuselens;
using namespace fuselens::testing;

namespace {

const char* kMainC = R"(#include <stdio.h>
#include <stdlib.h>
#include "model.h"

static void readf(const char* path, float* p, size_t n) {
  FILE* f = fopen(path, "rb");
  if (!f || fread(p, 4, n, f) != n) { fprintf(stderr, "cannot read %s\n", path); exit(3); }
  fclose(f);
}
static void writef(const char* path, const float* p, size_t n) {
  FILE* f = fopen(path, "wb");
  fwrite(p, 4, n, f);
  fclose(f);
}

int main(int argc, char** argv) {
  static float x[7 * 40], y[7 * 70], h[7 * 70], xo[7 * 40];
  const int64_t xs[] = {7, 40}, ys[] = {7, 70}, hs[] = {490}, bad[] = {40, 7};
  readf(argv[1], x, 7 * 40);
  fl_tensor in[1] = {{x, FL_F32, 2, xs}};
  fl_tensor out[3] = {{y, FL_F32, 2, ys}, {h, FL_F32, 1, hs}, {xo, FL_F32, 2, xs}};
  model_set_num_threads(2);
  if (model_run(in, out) != 0) { fprintf(stderr, "run: %s\n", model_last_error()); return 1; }
  writef(argv[2], y, 7 * 70);
  writef(argv[3], h, 7 * 70);
  writef(argv[4], xo, 7 * 40);
  fl_tensor wrong[1] = {{x, FL_F32, 2, bad}};
  if (model_run(wrong, out) == 0) return 2;
  printf("%s\n", model_last_error());
  return 0;
}
)";

std::vector<float> readFloats(const std::string& path, size_t n) {
  std::vector<float> v(n);
  std::ifstream f(path, std::ios::binary);
  f.read(reinterpret_cast<char*>(v.data()), std::streamsize(n * 4));
  return f ? v : std::vector<float>{};
}

}  // namespace

class CodegenExportTest : public QObject {
  Q_OBJECT

 private slots:
  void sharedLibraryRunsFromPlainC();
};

void CodegenExportTest::sharedLibraryRunsFromPlainC() {
  int rc = 0;
  if (!haveCc()) QSKIP("no system C compiler (cc)");
  Graph body;
  ValueId x = body.addInput("x", f32({7, 40})), w = body.addInput("w", f32({40, 70}));
  ValueId b = body.addInput("b", f32({70}));
  ValueId mm = body.node(body.addNode("MatMul", {x, w}, {{"mm", f32({7, 70})}})).outputs[0];
  ValueId a = body.node(body.addNode("Add", {mm, b}, {{"a", f32({7, 70})}})).outputs[0];
  body.addOutput(body.node(body.addNode("Relu", {a}, {{"r", f32({7, 70})}})).outputs[0]);
  Graph g = wrapInGroup(std::move(body),
                        {{"w", std::make_shared<const TensorData>(randomTensor({40, 70}, 1))},
                         {"b", std::make_shared<const TensorData>(randomTensor({70}, 2))}});
  ValueId r = g.outputs()[0];
  g.setOutputs({});
  ValueId y = g.node(g.addNode("Softmax", {r}, {{"y", f32({7, 70})}}, {}, "sm")).outputs[0];
  ValueId shape = g.addConstant("shape", std::make_shared<const TensorData>(TensorData::fromVector(
                                             DType::I64, {1}, std::vector<int64_t>{490})));
  ValueId h = g.node(g.addNode("Reshape", {r, shape}, {{"h", f32({490})}}, {}, "flat")).outputs[0];
  g.addOutput(y);
  g.addOutput(h);
  g.addOutput(g.inputs()[0]);
  // The JIT reference runs the same kernels: identical math, so identical floats.

  QTemporaryDir dir;
  ExportOptions o;
  o.outDir = dir.path().toStdString();
  Schedule s = Schedule::defaults();
  s.matmul.minWork = 0;  // tiled, with w packed at compile time
  o.compile.schedule = s;
  std::vector<double> fractions;
  auto ex = exportModel(g, o, [&](double f, const std::string&) { fractions.push_back(f); });
  QVERIFY2(ex.isOk(), ex.message().c_str());
  QCOMPARE(ex->files.size(), size_t(7));
  QCOMPARE(fractions.back(), 1.0);
  std::string d = o.outDir + "/";
  for (const char* f : {"model.ll", "model.s", "model.o", "model.so", "model.h", "model.json"})
    QVERIFY2(QFile::exists(QString::fromStdString(d + f)), f);
  QVERIFY(!QFile::exists(QString::fromStdString(d + "model.so.tmp")));
  std::ifstream mf(d + "model.json");
  auto manifest = nlohmann::json::parse(mf);
  QCOMPARE(manifest["entry"].get<std::string>(), std::string("model_run"));
  QCOMPARE(manifest["inputs"][0]["shape"], nlohmann::json({7, 40}));
  QCOMPARE(manifest["outputs"].size(), size_t(3));
  // Only the C entry points are exported from the library.
  std::string syms = runShell("nm -D --defined-only " + d + "model.so", &rc);
  QVERIFY2(syms.find("model_run") != std::string::npos, syms.c_str());
  QVERIFY2(syms.find("k0_") == std::string::npos, syms.c_str());
  QVERIFY2(syms.find("fuselens_parallel_for") == std::string::npos, syms.c_str());

  std::ofstream(d + "main.c") << kMainC;
  std::string build = runShell(
      "cc -O1 -I" + d + " " + d + "main.c " + d + "model.so -Wl,-rpath," + d + " -o " + d + "main",
      &rc);
  QVERIFY2(rc == 0, build.c_str());
  TensorData xt = randomTensor({7, 40}, 3);
  std::ofstream(d + "x.bin", std::ios::binary)
      .write(reinterpret_cast<const char*>(xt.bytes.data()), std::streamsize(xt.bytes.size()));
  std::string said =
      runShell(d + "main " + d + "x.bin " + d + "y.bin " + d + "h.bin " + d + "xo.bin", &rc);
  QVERIFY2(rc == 0, said.c_str());
  QCOMPARE(said, std::string("input 0 ('x') is f32[40,7]; the model expects f32[7,40]\n"));

  CompileOptions co;
  co.schedule = s;
  auto m = compileGraph(g, co);
  QVERIFY2(m.isOk(), m.message().c_str());
  auto jit = (*m)->run({{"x", xt}});
  QVERIFY2(jit.isOk(), jit.message().c_str());
  auto cy = readFloats(d + "y.bin", 490), ch = readFloats(d + "h.bin", 490);
  auto cx = readFloats(d + "xo.bin", 280);
  QCOMPARE(cy, values(*(*jit)[y.index]));
  QCOMPARE(ch, values(*(*jit)[h.index]));
  QCOMPARE(cx, values(xt));
}

QTEST_APPLESS_MAIN(CodegenExportTest)
#include "codegen_export_test.moc"
