// .npy I/O: a write/read round trip per dtype, reading files numpy wrote (the
// fixtures), refusing broken or unsupported files with a sentence instead of
// crashing or allocating from a lying header, atomic writes, and seeded
// random tensors.
#include "core/io/npy.h"

#include <QtTest>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "fixture_util.h"

using namespace fuselens;
using namespace fuselens::test;

namespace {

// A header numpy would write, wrapped in a v1.0 preamble, plus `data` bytes.
std::string npyFile(const std::string& dict, const std::string& data) {
  std::string h = dict;
  while ((10 + h.size() + 1) % 64) h += ' ';
  h += '\n';
  std::string f = std::string("\x93NUMPY\x01\x00", 8);
  f += char(h.size() & 0xff);
  f += char(h.size() >> 8);
  return f + h + data;
}

}  // namespace

class NpyTest : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;

  std::string path(const std::string& name) { return (tmp_.path() + "/").toStdString() + name; }
  void write(const std::string& name, const std::string& bytes) {
    std::ofstream(path(name), std::ios::binary) << bytes;
  }

 private slots:
  void roundTrip_data() {
    QTest::addColumn<int>("dtype");
    QTest::addColumn<QList<qint64>>("shape");
    for (DType t : {DType::F32, DType::F64, DType::F16, DType::I8, DType::U8, DType::I16,
                    DType::I32, DType::I64, DType::Bool})
      QTest::newRow(std::string(dtypeName(t)).c_str()) << int(t) << QList<qint64>{2, 3, 5};
    QTest::newRow("scalar") << int(DType::F32) << QList<qint64>{};
    QTest::newRow("vector") << int(DType::F32) << QList<qint64>{7};
    QTest::newRow("empty") << int(DType::F32) << QList<qint64>{0, 4};
  }

  void roundTrip() {
    QFETCH(int, dtype);
    QFETCH(QList<qint64>, shape);
    TensorType type =
        TensorType::of(DType(dtype), std::vector<int64_t>(shape.begin(), shape.end()));
    auto t = randomTensor(type, 42);
    QVERIFY2(t.isOk(), t.message().c_str());
    fs::create_directories(path("rt"));
    QVERIFY2(writeNpy(path("rt/t.npy"), *t).isOk(), "write failed");
    auto back = readNpy(path("rt/t.npy"));
    QVERIFY2(back.isOk(), back.message().c_str());
    QCOMPARE(back->dtype, t->dtype);
    QCOMPARE(back->shape, t->shape);
    QVERIFY(back->bytes == t->bytes);
    // No temporary file is left beside the written one.
    int files = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(path("rt"))) ++files;
    QCOMPARE(files, 1);
  }

  void readsWhatNumpyWrote() {
    auto t = readNpy((fixturesDir() / "samples" / "mlp" / "input_x.npy").string());
    QVERIFY2(t.isOk(), t.message().c_str());
    QCOMPARE(t->shape, (std::vector<int64_t>{4, 64}));
    auto i = readNpy((fixturesDir() / "identity_i64" / "input_x.npy").string());
    QVERIFY2(i.isOk(), i.message().c_str());
    QCOMPARE(i->dtype, DType::I64);
  }

  void readsVersion2Headers() {
    std::string h = "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }";
    while ((12 + h.size() + 1) % 64) h += ' ';
    h += '\n';
    std::string f = std::string("\x93NUMPY\x02\x00", 8);
    for (int i = 0; i < 4; ++i) f += char((h.size() >> (8 * i)) & 0xff);
    int32_t data[2] = {7, -9};
    write("v2.npy", f + h + std::string(reinterpret_cast<char*>(data), 8));
    auto t = readNpy(path("v2.npy"));
    QVERIFY2(t.isOk(), t.message().c_str());
    QCOMPARE(t->data<int32_t>()[1], -9);
  }

  void badFilesAreRefused_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("expected");
    const std::string f4 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    auto row = [](const char* name, const std::string& bytes, const char* expected) {
      QTest::newRow(name) << QByteArray(bytes.data(), qsizetype(bytes.size())) << expected;
    };
    row("empty", "", "not a .npy file");
    row("no magic", "hello world, not numpy", "not a .npy file");
    row("truncated data", npyFile(f4, std::string(10, '\0')),
        "needs 24 data bytes but the file holds 10");
    row("extra data", npyFile(f4, std::string(30, '\0')),
        "needs 24 data bytes but the file holds 30");
    row("header longer than file", std::string("\x93NUMPY\x01\x00\xff\xff{", 11),
        "does not fit in the file");
    row("huge shape",
        npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': "
                "(4294967296, 4294967296), }",
                ""),
        "is too large");
    row("big-endian",
        npyFile("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", std::string(4, '\0')),
        "big-endian data ('>f4') is not supported");
    row("object",
        npyFile("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", std::string(8, '\0')),
        "object arrays are not supported");
    row("fortran",
        npyFile("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }", std::string(4, '\0')),
        "Fortran-order arrays are not supported");
    row("no shape", npyFile("{'descr': '<f4', 'fortran_order': False, }", ""), "lacks descr");
    row("bad shape", npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", ""),
        "malformed shape");
    row("complex",
        npyFile("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", std::string(8, '\0')),
        "dtype '<c8' is not supported");
    row("version 9", std::string("\x93NUMPY\x09\x00\x00\x00", 10), "format version 9");
  }

  void badFilesAreRefused() {
    QFETCH(QByteArray, bytes);
    QFETCH(QString, expected);
    write("bad.npy", bytes.toStdString());
    auto t = readNpy(path("bad.npy"));
    QVERIFY(!t.isOk());
    QVERIFY2(QString::fromStdString(t.message()).contains(expected), t.message().c_str());
  }

  void missingFileAndUnwritablePath() {
    QVERIFY(!readNpy(path("nope.npy")).isOk());
    TensorData t(DType::F32, {2});
    auto s = writeNpy(path("no/such/dir/t.npy"), t);
    QVERIFY(!s.isOk());
    QVERIFY(!writeNpy(path("bf16.npy"), TensorData(DType::BF16, {2})).isOk());
  }

  void randomTensorIsSeededAndInRange() {
    TensorType type = TensorType::of(DType::F32, {1000});
    auto a = randomTensor(type, 7), b = randomTensor(type, 7), c = randomTensor(type, 8);
    QVERIFY(a.isOk() && b.isOk() && c.isOk());
    QVERIFY(a->bytes == b->bytes);
    QVERIFY(a->bytes != c->bytes);
    double lo = 1, hi = -1;
    for (int64_t i = 0; i < a->numel(); ++i) {
      lo = std::min(lo, a->at(i));
      hi = std::max(hi, a->at(i));
    }
    QVERIFY(lo >= -1.0 && hi < 1.0 && lo < -0.9 && hi > 0.9);
    auto f16 = randomTensor(TensorType::of(DType::F16, {100}), 1);
    for (int64_t i = 0; i < f16->numel(); ++i) QVERIFY(f16->at(i) >= -1.0 && f16->at(i) <= 1.0);
    TensorType dyn;
    dyn.shape = {Dim::named("batch"), Dim::fixed(4)};
    QVERIFY(!randomTensor(dyn, 1).isOk());
  }
};

QTEST_APPLESS_MAIN(NpyTest)
#include "npy_test.moc"
