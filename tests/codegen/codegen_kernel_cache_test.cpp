// The JIT's compile-time machinery: structurally identical kernels compile
// once (kernel keys), objects come back from the on-disk cache in a fresh
// module with bit-identical results, corrupt or truncated entries are
// recompiled rather than trusted, FUSELENS_CACHE=0 writes nothing, and the
// cache trims itself to its size limit, oldest entries first. Every test
// points XDG_CACHE_HOME at its own temporary folder.
#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>
#include <fstream>

#include "codegen/compiler.h"
#include "codegen/llvm/kernel_key.h"
#include "codegen/llvm/object_cache.h"
#include "core/eager/interpreter.h"
#include "test_util.h"

using namespace fuselens;
using namespace fuselens::testing;
namespace fs = std::filesystem;

namespace {

// `blocks` repeats of Tanh -> Sigmoid on x, then + x: 2 * blocks + 1 kernels,
// 3 of them distinct. Value names differ in every block.
Graph repeatedBlocks(int blocks) {
  Graph g;
  g.name = "blocks";
  ValueId x = g.addInput("x", f32({64, 130}));
  ValueId h = x;
  for (int b = 0; b < blocks; ++b) {
    std::string p = "b" + std::to_string(b) + "_";
    h = g.node(g.addNode("Tanh", {h}, {{p + "tanh", f32({64, 130})}})).outputs[0];
    h = g.node(g.addNode("Sigmoid", {h}, {{p + "sig", f32({64, 130})}})).outputs[0];
  }
  g.addOutput(g.node(g.addNode("Add", {h, x}, {{"y", f32({64, 130})}})).outputs[0]);
  return g;
}

struct Compiled {
  CompileStats stats;
  TensorData y;
  bool ok = false;
};

Compiled compileAndRun(const Graph& g) {
  Compiled c;
  auto m = compileGraph(g, CompileOptions{});
  if (!m) {
    qWarning("compile failed: %s", m.message().c_str());
    return c;
  }
  auto out = (*m)->run({{"x", randomTensor({64, 130}, 7)}});
  if (!out) {
    qWarning("run failed: %s", out.message().c_str());
    return c;
  }
  c.stats = (*m)->stats();
  c.y = *(*out)[g.outputs()[0].index];
  c.ok = true;
  return c;
}

bool sameBits(const TensorData& a, const TensorData& b) {
  return a.shape == b.shape && a.bytes == b.bytes;
}

std::vector<fs::path> cacheFiles(const QTemporaryDir& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  fs::path root = fs::path(dir.path().toStdString()) / "fuselens";
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file()) files.push_back(it->path());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

class CodegenKernelCacheTest : public QObject {
  Q_OBJECT

  QTemporaryDir* cacheHome_ = nullptr;

 private slots:
  void init() {
    cacheHome_ = new QTemporaryDir();
    qputenv("XDG_CACHE_HOME", cacheHome_->path().toUtf8());
    qunsetenv("FUSELENS_CACHE");
    qunsetenv("FUSELENS_CACHE_MAX_MB");
  }
  void cleanup() {
    delete cacheHome_;
    cacheHome_ = nullptr;
  }

  // Twelve kernels of three kinds: three compiled, same values as eager.
  void identicalKernelsCompileOnce() {
    Graph g = repeatedBlocks(6);
    Compiled c = compileAndRun(g);
    QVERIFY(c.ok);
    QCOMPARE(c.stats.kernels, size_t(13));
    QCOMPARE(c.stats.uniqueKernels, size_t(3));
    QCOMPARE(c.stats.compiledKernels, size_t(3));
    QCOMPARE(c.stats.cachedKernels, size_t(0));
    auto eager = runEager(g, {{"x", randomTensor({64, 130}, 7)}});
    QVERIFY(eager);
    const TensorData* want = eager->find(g.outputs()[0]);
    QVERIFY(want);
    for (int64_t i = 0; i < want->numel(); ++i)
      QVERIFY2(std::fabs(c.y.at(i) - want->at(i)) <= 1e-5, qPrintable(QString::number(i)));
  }

  // Names never enter a key; structure, constants and context do.
  void keysIgnoreNamesOnly() {
    auto funcOf = [](const std::string& name, float v) {
      LoopFunc f;
      f.name = name;
      BufferId in = f.addBuffer(name + "_in", BufferKind::Input, DType::F32, {4});
      BufferId out = f.addBuffer(name + "_out", BufferKind::Output, DType::F32, {4});
      f.params = {in, out};
      f.numInputs = 1;
      Var i = f.addVar(name + "_i", DType::I64);
      f.body = forLoop(
          i, 4,
          {store(f.buffer(out), varRef(i), add(load(f.buffer(in), varRef(i)), floatConst(v)))});
      return f;
    };
    LoopFunc a = funcOf("k0_add", 1.5f), b = funcOf("k7_other", 1.5f), c = funcOf("k0_add", 2.5f);
    QCOMPARE(kernelKey(a, "ctx"), kernelKey(b, "ctx"));
    QVERIFY(kernelKey(a, "ctx") != kernelKey(c, "ctx"));
    QVERIFY(kernelKey(a, "ctx") != kernelKey(a, "other schedule"));
    QCOMPARE(canonicalLoopText(a), canonicalLoopText(b));
  }

  // A second compile (a fresh module) takes every object from the disk.
  void secondCompileHitsTheDiskCache() {
    Graph g = repeatedBlocks(3);
    Compiled cold = compileAndRun(g);
    QVERIFY(cold.ok);
    QCOMPARE(cold.stats.compiledKernels, size_t(3));
    QCOMPARE(cacheFiles(*cacheHome_).size(), size_t(3));
    QVERIFY(cold.stats.cacheDir.find(cacheHome_->path().toStdString()) == 0);
    Compiled warm = compileAndRun(g);
    QVERIFY(warm.ok);
    QCOMPARE(warm.stats.cachedKernels, size_t(3));
    QCOMPARE(warm.stats.compiledKernels, size_t(0));
    QVERIFY(sameBits(cold.y, warm.y));
  }

  void corruptEntriesAreRecompiled_data() {
    QTest::addColumn<QString>("damage");
    QTest::newRow("truncated") << "truncate";
    QTest::newRow("flipped byte") << "flip";
    QTest::newRow("empty") << "empty";
    QTest::newRow("garbage") << "garbage";
  }
  void corruptEntriesAreRecompiled() {
    QFETCH(QString, damage);
    Graph g = repeatedBlocks(2);
    Compiled cold = compileAndRun(g);
    QVERIFY(cold.ok);
    auto files = cacheFiles(*cacheHome_);
    QCOMPARE(files.size(), size_t(3));
    std::string bytes;
    {
      std::ifstream in(files[0], std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    if (damage == "truncate") bytes.resize(bytes.size() / 2);
    if (damage == "flip") bytes[bytes.size() - 100] ^= 0x5a;
    if (damage == "empty") bytes.clear();
    if (damage == "garbage") bytes = std::string(4096, 'x');
    std::ofstream(files[0], std::ios::binary | std::ios::trunc) << bytes;
    Compiled warm = compileAndRun(g);
    QVERIFY(warm.ok);
    QCOMPARE(warm.stats.compiledKernels, size_t(1));
    QCOMPARE(warm.stats.cachedKernels, size_t(2));
    QVERIFY(sameBits(cold.y, warm.y));
    // The bad entry was replaced by a good one.
    Compiled third = compileAndRun(g);
    QCOMPARE(third.stats.cachedKernels, size_t(3));
  }

  void disabledCacheWritesNothing() {
    qputenv("FUSELENS_CACHE", "0");
    Compiled c = compileAndRun(repeatedBlocks(2));
    QVERIFY(c.ok);
    QCOMPARE(c.stats.compiledKernels, size_t(3));
    QVERIFY(c.stats.cacheDir.empty());
    QVERIFY(cacheFiles(*cacheHome_).empty());
    QVERIFY(!fs::exists(fs::path(cacheHome_->path().toStdString()) / "fuselens"));
  }

  // Over its limit, the cache drops the entries used longest ago.
  void trimDropsLeastRecentlyUsed() {
    std::string dir = cacheHome_->path().toStdString() + "/trim";
    fs::create_directories(dir);
    ObjectCache cache(dir, 10000);
    auto now = fs::file_time_type::clock::now();
    for (int i = 0; i < 8; ++i) {
      std::string key = "key" + std::to_string(i);
      cache.store(key, std::string(2000, char('a' + i)));
      fs::last_write_time(dir + "/" + key + ".o", now - std::chrono::minutes(60 - i));
    }
    QVERIFY(cache.load("key0"));  // used now: the most recent
    cache.trim();
    int64_t total = 0;
    for (const auto& e : fs::directory_iterator(dir)) total += int64_t(e.file_size());
    QVERIFY2(total <= 9000, qPrintable(QString::number(total)));
    QVERIFY(cache.load("key0"));
    QVERIFY(cache.load("key7"));
    QVERIFY(!cache.load("key1"));
    QCOMPARE(*cache.load("key7"), std::string(2000, 'h'));
  }
};

QTEST_GUILESS_MAIN(CodegenKernelCacheTest)
#include "codegen_kernel_cache_test.moc"
