// Export of every dtype and for x86-64 levels. Models with i64/f16/bool
// inputs and with mixed dtypes (f64, i32, u8, bf16, i8, i16 in; f64, i32,
// bf16, i8, f16, bool out) run from a plain C program against the .so and
// match eager byte for byte; a wrong dtype is a sentence from
// model_last_error(). An f32 MatMul model built for x86-64 ... x86-64-v4 uses
// no wider vectors (nor AVX encodings below v3) than the level allows, sizes
// its schedule for the level, records the target and, where this host can run
// the level, matches eager. An unknown CPU name is one sentence.
#include <QtTest>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "codegen/export/export.h"
#include "codegen/target.h"
#include "core/eager/interpreter.h"
#include "core/ops/op_util.h"
#include "shell_util.h"
#include "test_util.h"

using namespace fuselens;
using namespace fuselens::testing;

namespace {

const char* cMacro(DType t) {
  switch (t) {
    case DType::F32:
      return "FL_F32";
    case DType::F64:
      return "FL_F64";
    case DType::F16:
      return "FL_F16";
    case DType::BF16:
      return "FL_BF16";
    case DType::I8:
      return "FL_I8";
    case DType::U8:
      return "FL_U8";
    case DType::I16:
      return "FL_I16";
    case DType::I32:
      return "FL_I32";
    case DType::I64:
      return "FL_I64";
    case DType::Bool:
      return "FL_BOOL";
  }
  return "?";
}

// A C program for graph g's inputs and outputs: reads input i from argv[1+i],
// runs, writes output j to argv[1+nin+j]; then runs once more with input 0
// declared f32 (i64 when it is f32) and prints model_last_error().
std::string mainFor(const Graph& g) {
  std::ostringstream c, shapes, ins, outs, writes;
  auto tensor = [&](ValueId v, const std::string& tag, const std::string& data) {
    const TensorType& t = g.value(v).type;
    auto dims = *t.staticShape();
    shapes << "  static const int64_t s" << tag << "[] = {" << (dims.empty() ? "0" : "");
    for (size_t d = 0; d < dims.size(); ++d) shapes << (d ? ", " : "") << dims[d];
    shapes << "};\n";
    return "{" + data + ", " + cMacro(t.dtype) + ", " + std::to_string(dims.size()) + ", s" + tag +
           "}";
  };
  const size_t nin = g.inputs().size();
  for (size_t i = 0; i < nin; ++i)
    ins << (i ? ", " : "")
        << tensor(g.inputs()[i], "i" + std::to_string(i),
                  "slurp(argv[" + std::to_string(1 + i) + "])");
  for (size_t j = 0; j < g.outputs().size(); ++j) {
    const TensorType& t = g.value(g.outputs()[j]).type;
    size_t bytes = size_t(*t.numElements()) * dtypeSize(t.dtype);
    outs << (j ? ", " : "")
         << tensor(g.outputs()[j], "o" + std::to_string(j),
                   "calloc(1, " + std::to_string(bytes + 1) + ")");
    writes << "  spill(argv[" << 1 + nin + j << "], out[" << j << "].data, " << bytes << ");\n";
  }
  bool f32 = g.value(g.inputs()[0]).type.dtype == DType::F32;
  c << "#include <stdio.h>\n#include <stdlib.h>\n#include \"model.h\"\n\n"
    << "static void* slurp(const char* path) {\n  FILE* f = fopen(path, \"rb\");\n"
    << "  if (!f) { fprintf(stderr, \"cannot read %s\\n\", path); exit(3); }\n"
    << "  char* p = malloc(1 << 16);\n  size_t n = fread(p, 1, 1 << 16, f);\n  (void)n;\n"
    << "  fclose(f);\n  return p;\n}\n"
    << "static void spill(const char* path, const void* p, size_t n) {\n"
    << "  FILE* f = fopen(path, \"wb\");\n  fwrite(p, 1, n, f);\n  fclose(f);\n}\n\n"
    << "int main(int argc, char** argv) {\n  (void)argc;\n"
    << shapes.str() << "  fl_tensor in[] = {" << ins.str() << "};\n"
    << "  fl_tensor out[] = {" << outs.str() << "};\n"
    << "  if (model_run(in, out) != 0) { fprintf(stderr, \"run: %s\\n\", model_last_error()); "
       "return 1; }\n"
    << writes.str() << "  in[0].dtype = " << (f32 ? "FL_I64" : "FL_F32") << ";\n"
    << "  if (model_run(in, out) == 0) return 2;\n"
    << "  printf(\"%s\\n\", model_last_error());\n  return 0;\n}\n";
  return c.str();
}

void writeBytes(const std::string& path, const TensorData& t) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(t.bytes.data()), std::streamsize(t.bytes.size()));
}

std::vector<uint8_t> readBytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

// Exports g for `cpu` into dir, builds mainFor(g) against the .so, runs it on
// `inputs` (by graph-input order) and checks every output equals eager's byte
// for byte (`exact`) or within 1e-5. `said` gets what the wrong-dtype run printed.
void exportRunAndCompare(const Graph& g, const std::vector<TensorData>& inputs,
                         const std::string& cpu, const std::string& dir, bool exact,
                         std::string* said) {
  ExportOptions o;
  o.outDir = dir;
  o.cpu = cpu;
  auto ex = exportModel(g, o);
  QVERIFY2(ex.isOk(), ex.message().c_str());
  std::string d = dir + "/";
  std::ofstream(d + "main.c") << mainFor(g);
  int rc = 0;
  std::string build = runShell(
      "cc -O1 -I" + d + " " + d + "main.c " + d + "model.so -Wl,-rpath," + d + " -o " + d + "main",
      &rc);
  QVERIFY2(rc == 0, build.c_str());
  if (!hostCanRun(*cpuTargetNamed(cpu))) return;  // built, but this host lacks the features
  std::map<std::string, TensorData> named;
  std::string args;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string f = d + "in" + std::to_string(i) + ".bin";
    writeBytes(f, inputs[i]);
    named.emplace(g.value(g.inputs()[i]).name, inputs[i]);
    args += " " + f;
  }
  for (size_t j = 0; j < g.outputs().size(); ++j)
    args += " " + d + "out" + std::to_string(j) + ".bin";
  *said = runShell(d + "main" + args, &rc);
  QVERIFY2(rc == 0, said->c_str());
  auto eager = runEager(g, named);
  QVERIFY2(eager.isOk(), eager.message().c_str());
  for (size_t j = 0; j < g.outputs().size(); ++j) {
    const TensorData* want = eager->find(g.outputs()[j]);
    QVERIFY(want);
    std::vector<uint8_t> got = readBytes(d + "out" + std::to_string(j) + ".bin");
    QCOMPARE(got.size(), want->bytes.size());
    if (exact) {
      QVERIFY2(std::memcmp(got.data(), want->bytes.data(), got.size()) == 0,
               ("output " + std::to_string(j) + " differs from eager").c_str());
      continue;
    }
    TensorData back(want->dtype, want->shape);
    std::memcpy(back.bytes.data(), got.data(), got.size());
    for (int64_t k = 0; k < want->numel(); ++k)
      QVERIFY2(std::fabs(back.at(k) - want->at(k)) <= 1e-5 + 1e-5 * std::fabs(want->at(k)),
               ("output " + std::to_string(j) + " element " + std::to_string(k)).c_str());
  }
}

ValueId op1(Graph& g, const std::string& op, std::vector<ValueId> in, DType t, const Shape& s,
            Attributes a = {}) {
  static int n = 0;
  std::string name = "v" + std::to_string(n++);
  return g.node(g.addNode(op, std::move(in), {{name, TensorType::of(t, s)}}, a)).outputs[0];
}

ValueId castTo(Graph& g, ValueId v, DType t, int64_t onnx) {
  Attributes a;
  a.set("to", onnx);
  return op1(g, "Cast", {v}, t, *g.value(v).type.staticShape(), a);
}

// Inputs i64, f16, bool; outputs of each, plus an f32 Where over casts of all three.
Graph i64F16BoolModel() {
  Graph g;
  Shape s{2, 3};
  ValueId a = g.addInput("a", TensorType::of(DType::I64, s));
  ValueId h = g.addInput("h", TensorType::of(DType::F16, s));
  ValueId m = g.addInput("m", TensorType::of(DType::Bool, s));
  g.addOutput(op1(g, "Mul", {a, a}, DType::I64, s));
  g.addOutput(op1(g, "Add", {h, h}, DType::F16, s));
  g.addOutput(op1(g, "Not", {m}, DType::Bool, s));
  g.addOutput(op1(g, "Where", {m, castTo(g, a, DType::F32, 1), castTo(g, h, DType::F32, 1)},
                  DType::F32, s));
  g.markAsOriginal();
  return g;
}

std::vector<TensorData> i64F16BoolInputs() {
  std::vector<uint16_t> h;
  for (float f : {0.5f, -1.25f, 3.0f, 1000.0f, -0.001f, 65504.0f}) h.push_back(ops::floatToHalf(f));
  return {TensorData::fromVector(DType::I64, {2, 3},
                                 std::vector<int64_t>{3000000000, -7, 0, 1, -4000000000, 12}),
          TensorData::fromVector(DType::F16, {2, 3}, h),
          TensorData::fromVector(DType::Bool, {2, 3}, std::vector<uint8_t>{1, 0, 0, 1, 1, 0})};
}

// Inputs f64, i32, u8, bf16, i8, i16; outputs f64, i32, bf16, i8 (wrapping),
// f16 and bool.
Graph mixedModel() {
  Graph g;
  Shape s{4};
  ValueId d = g.addInput("d", TensorType::of(DType::F64, s));
  ValueId i = g.addInput("i", TensorType::of(DType::I32, s));
  ValueId u = g.addInput("u", TensorType::of(DType::U8, s));
  ValueId b = g.addInput("b", TensorType::of(DType::BF16, s));
  ValueId c = g.addInput("c", TensorType::of(DType::I8, s));
  ValueId w = g.addInput("w", TensorType::of(DType::I16, s));
  g.addOutput(op1(g, "Add", {d, castTo(g, i, DType::F64, 11)}, DType::F64, s));
  g.addOutput(op1(g, "Add", {castTo(g, u, DType::I32, 6), i}, DType::I32, s));
  g.addOutput(op1(g, "Mul", {b, b}, DType::BF16, s));
  g.addOutput(op1(g, "Add", {c, c}, DType::I8, s));
  g.addOutput(castTo(g, w, DType::F16, 10));
  g.addOutput(op1(g, "Less", {castTo(g, w, DType::F64, 11), d}, DType::Bool, s));
  g.markAsOriginal();
  return g;
}

std::vector<TensorData> mixedInputs() {
  std::vector<uint16_t> b;
  for (float f : {1.5f, -2.0f, 0.1f, 300.0f}) b.push_back(ops::floatToBf16(f));
  return {TensorData::fromVector(DType::F64, {4}, std::vector<double>{0.1, -2.5, 1e10, 7}),
          TensorData::fromVector(DType::I32, {4}, std::vector<int32_t>{1, -2, 2000000000, 40}),
          TensorData::fromVector(DType::U8, {4}, std::vector<uint8_t>{255, 0, 7, 128}),
          TensorData::fromVector(DType::BF16, {4}, b),
          TensorData::fromVector(DType::I8, {4}, std::vector<int8_t>{100, -100, 3, -128}),
          TensorData::fromVector(DType::I16, {4}, std::vector<int16_t>{-300, 2, 30000, 7})};
}

// An f32 MatMul (tiled), bias and a row reduction: schedules and vectors that
// follow the target's width.
Graph f32Model() {
  Graph g;
  ValueId x = g.addInput("x", TensorType::of(DType::F32, {8, 64}));
  ValueId w = g.addConstant("w", std::make_shared<const TensorData>(randomTensor({64, 48}, 7)));
  ValueId mm = op1(g, "MatMul", {x, w}, DType::F32, {8, 48});
  g.addOutput(op1(g, "Relu", {mm}, DType::F32, {8, 48}));
  ValueId axes = g.addConstant("axes", std::make_shared<const TensorData>(TensorData::fromVector(
                                           DType::I64, {1}, std::vector<int64_t>{1})));
  Attributes a;
  a.set("keepdims", int64_t(0));
  g.addOutput(op1(g, "ReduceSum", {x, axes}, DType::F32, {8}, a));
  g.markAsOriginal();
  return g;
}

}  // namespace

class CodegenExportDtypesTest : public QObject {
  Q_OBJECT

 private slots:
  void everyDtypeRunsFromPlainC_data();
  void everyDtypeRunsFromPlainC();
  void cpuLevels_data();
  void cpuLevels();
  void unknownCpuIsOneSentence();
  void manifestListsDtypes();
};

void CodegenExportDtypesTest::everyDtypeRunsFromPlainC_data() {
  QTest::addColumn<int>("model");
  QTest::addColumn<QString>("cpu");
  QTest::addColumn<QString>("error");
  const QString i64Err = "input 0 ('a') is f32[2,3]; the model expects i64[2,3]\n";
  const QString f64Err = "input 0 ('d') is f32[4]; the model expects f64[4]\n";
  QTest::newRow("i64 f16 bool, native") << 0 << "native" << i64Err;
  QTest::newRow("mixed, native") << 1 << "native" << f64Err;
  QTest::newRow("i64 f16 bool, x86-64-v2") << 0 << "x86-64-v2" << i64Err;
  QTest::newRow("mixed, x86-64") << 1 << "x86-64" << f64Err;
}

void CodegenExportDtypesTest::everyDtypeRunsFromPlainC() {
  QFETCH(int, model);
  QFETCH(QString, cpu);
  QFETCH(QString, error);
  if (!haveCc()) QSKIP("no system C compiler (cc)");
  QTemporaryDir dir;
  std::string said;
  Graph g = model == 0 ? i64F16BoolModel() : mixedModel();
  exportRunAndCompare(g, model == 0 ? i64F16BoolInputs() : mixedInputs(), cpu.toStdString(),
                      dir.path().toStdString(), true, &said);
  if (QTest::currentTestFailed()) return;
  QCOMPARE(QString::fromStdString(said), error);
}

void CodegenExportDtypesTest::cpuLevels_data() {
  QTest::addColumn<QString>("cpu");
  QTest::addColumn<int>("bits");
  QTest::addColumn<QString>("widest");  // registers wider than the level allows must not appear
  QTest::newRow("x86-64") << "x86-64" << 128 << "ymm";
  QTest::newRow("x86-64-v2") << "x86-64-v2" << 128 << "ymm";
  QTest::newRow("x86-64-v3") << "x86-64-v3" << 256 << "zmm";
  QTest::newRow("x86-64-v4") << "x86-64-v4" << 512 << "";
}

void CodegenExportDtypesTest::cpuLevels() {
  QFETCH(QString, cpu);
  QFETCH(int, bits);
  QFETCH(QString, widest);
  if (!haveCc()) QSKIP("no system C compiler (cc)");
  QTemporaryDir dir;
  std::string d = dir.path().toStdString(), said;
  exportRunAndCompare(f32Model(), {randomTensor({8, 64}, 8)}, cpu.toStdString(), d, false, &said);
  if (QTest::currentTestFailed()) return;
  std::ifstream mf(d + "/model.json");
  auto m = nlohmann::json::parse(mf);
  QCOMPARE(QString::fromStdString(m["target"]["name"].get<std::string>()), cpu);
  QCOMPARE(QString::fromStdString(m["target"]["cpu"].get<std::string>()), cpu);
  QCOMPARE(m["target"]["vector_bits"].get<int>(), bits);
  QCOMPARE(m["target"]["runs_on_build_host"].get<bool>(),
           hostCanRun(*cpuTargetNamed(cpu.toStdString())));
  // The schedule follows the level: the MatMul tile is two vectors wide.
  QCOMPARE(m["schedule"]["matmul"]["nr"].get<int>(), 2 * std::max(4, bits / 32));
  std::ifstream sf(d + "/model.s");
  std::string asmText((std::istreambuf_iterator<char>(sf)), {});
  QVERIFY(!asmText.empty());
  if (!widest.isEmpty())
    QVERIFY2(asmText.find("%" + widest.toStdString()) == std::string::npos,
             ("the " + cpu.toStdString() + " code uses " + widest.toStdString()).c_str());
  // Nor AVX's VEX encoding of 128-bit code below x86-64-v3 ("vmovups %xmm0, ...").
  if (bits == 128)
    QVERIFY2(asmText.find("\tvmov") == std::string::npos &&
                 asmText.find("\tvfmadd") == std::string::npos,
             ("the " + cpu.toStdString() + " code uses AVX instructions").c_str());
  if (bits > 128)
    QVERIFY2(asmText.find(bits == 512 ? "%zmm" : "%ymm") != std::string::npos,
             "no full-width vectors");
}

void CodegenExportDtypesTest::unknownCpuIsOneSentence() {
  ExportOptions o;
  QTemporaryDir dir;
  o.outDir = dir.path().toStdString();
  o.cpu = "pentium4";
  auto ex = exportModel(f32Model(), o);
  QVERIFY(!ex.isOk());
  QCOMPARE(QString::fromStdString(ex.message()),
           "unknown CPU target 'pentium4'; valid targets are native, x86-64, x86-64-v2, "
           "x86-64-v3, x86-64-v4");
  QVERIFY(!QFile::exists(dir.filePath("model.h")));
}

void CodegenExportDtypesTest::manifestListsDtypes() {
  ExportOptions o;
  QTemporaryDir dir;
  o.outDir = dir.path().toStdString();
  o.cc.clear();
  auto ex = exportModel(mixedModel(), o);
  QVERIFY2(ex.isOk(), ex.message().c_str());
  std::ifstream mf(o.outDir + "/model.json");
  auto m = nlohmann::json::parse(mf);
  std::vector<std::string> ins, outs;
  for (auto& t : m["inputs"]) ins.push_back(t["dtype"].get<std::string>());
  for (auto& t : m["outputs"]) outs.push_back(t["dtype"].get<std::string>());
  QCOMPARE(ins, (std::vector<std::string>{"f64", "i32", "u8", "bf16", "i8", "i16"}));
  QCOMPARE(outs, (std::vector<std::string>{"f64", "i32", "bf16", "i8", "f16", "bool"}));
  QCOMPARE(m["inputs"][0]["dtype_code"].get<int>(), 11);
  QCOMPARE(QString::fromStdString(m["target"]["name"].get<std::string>()), "native");
  std::ifstream hf(o.outDir + "/model.h");
  std::string h((std::istreambuf_iterator<char>(hf)), {});
  QVERIFY2(h.find("FL_BF16 = 16") != std::string::npos, h.c_str());
  QVERIFY2(h.find("[3] \"b\" bf16[4] (FL_BF16)") != std::string::npos, h.c_str());
}
QTEST_APPLESS_MAIN(CodegenExportDtypesTest)
#include "codegen_export_dtypes_test.moc"
