// `fuselens-cli run --sweep` as the command line runs it: the JSON has
// every field; a second process finds every module in the compile cache (the
// cache survives a restart); a corrupt cache entry is refused with a sentence
// and recompiled; buckets compile once per bucket on the OCR-style CNN of
// symbolic width; --dims-default binds what is left and says so; shapes that
// are expressions of seq (Concat, Slice, strided Conv) run and match eager; a
// LayerNorm and an AveragePool across the padded dim pass --pad-check.
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "tests/support/cli_runner.h"

namespace {

using Result = fuselens::test::CliResult;

Result cli(const QStringList& args) { return fuselens::test::runCli(args, 240000); }

const QString kTransformer = "tests/cli/data/dyn_transformer/model.onnx";
const QString kOcr = "tests/cli/data/dyn_ocr/model.onnx";
const QString kConcatSlice = "tests/cli/data/dyn_concat_slice/model.onnx";
const QString kLayerNormSeq = "tests/cli/data/dyn_layernorm_seq/model.onnx";

QJsonObject jsonOf(const Result& r) { return QJsonDocument::fromJson(r.out.toUtf8()).object(); }

QStringList moduleEntries(const QString& cacheHome) {
  QStringList files;
  QDirIterator it(cacheHome + "/fuselens/modules", {"*.json"}, QDir::Files);
  while (it.hasNext()) files << it.next();
  return files;
}

}  // namespace

class CliSweepTest : public QObject {
  Q_OBJECT
 private slots:
  void init() {
    QVERIFY(cache_.isValid());
    qputenv("XDG_CACHE_HOME", cache_.path().toUtf8());  // the CLI processes inherit it
  }

  void sweepJsonHasEveryFieldAndTheCacheSurvivesARestart() {
    const QStringList args = {"run",     kTransformer, "--engine",      "cpu",   "--random-inputs",
                              "--sweep", "seq=1,3,5",  "--check-eager", "--json"};
    Result first = cli(args);
    QVERIFY2(first.code == 0, qPrintable(first.out + first.err));
    QJsonObject j = jsonOf(first);
    for (const char* key : {"runs", "compiles", "cache_hits", "cache_misses", "compile_seconds",
                            "run_seconds", "padding_waste", "all_match", "rows", "mode", "dim"})
      QVERIFY2(j.contains(key), key);
    QCOMPARE(j["runs"].toInt(), 3);
    QCOMPARE(j["compiles"].toInt(), 3);
    QCOMPARE(j["cache_hits"].toInt(), 0);
    QCOMPARE(j["all_match"].toBool(), true);
    QCOMPARE(j["padding_waste"].toDouble(), 0.0);
    QCOMPARE(j["rows"].toArray().size(), 3);
    QVERIFY2(first.err.contains("[3/3] value 5"), qPrintable(first.err));  // progress per run

    Result second = cli(args);  // a fresh process: every module is in the cache
    QVERIFY2(second.code == 0, qPrintable(second.out + second.err));
    QJsonObject warm = jsonOf(second);
    QCOMPARE(warm["cache_hits"].toInt(), 3);
    QCOMPARE(warm["cache_misses"].toInt(), 0);
    // The entries remember what the cold compiles took.
    QVERIFY(std::abs(warm["cache_hits_first_compile_seconds"].toDouble() -
                     j["compile_seconds"].toDouble()) < 1e-6);

    const QStringList entries = moduleEntries(cache_.path());
    QCOMPARE(entries.size(), 3);
    QFile f(entries.front());
    QVERIFY(f.open(QIODevice::ReadWrite));
    QByteArray bytes = f.readAll();
    bytes[bytes.size() - 3] = bytes[bytes.size() - 3] == '1' ? '2' : '1';  // flip one digit
    f.seek(0);
    f.write(bytes);
    f.close();
    Result third = cli(args);
    QVERIFY2(third.code == 0, qPrintable(third.out + third.err));
    QVERIFY2(third.err.contains("is corrupt (its checksum does not match): refused"),
             qPrintable(third.err));
    QCOMPARE(jsonOf(third)["cache_hits"].toInt(), 2);
    QCOMPARE(moduleEntries(cache_.path()).size(), 3);  // recompiled and stored again
  }

  // The table ends with one line per bucket, the Buckets dock's rows.
  void bucketLinesInTheTable() {
    Result r = cli({"run", kOcr, "--engine", "cpu", "--random-inputs", "--sweep", "width=3,7,11",
                    "--buckets", "width=8,16", "--check-eager"});
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.out.contains("bucket 8: 2 runs, 1 compile ("), qPrintable(r.out));
    QVERIFY2(r.out.contains("bucket 16: 1 run, 1 compile ("), qPrintable(r.out));
    QVERIFY2(r.out.contains("%, within rounding\n"), qPrintable(r.out));
  }

  void bucketsOnACnnOfSymbolicWidth() {
    Result r = cli({"run", kOcr, "--engine", "cpu", "--random-inputs", "--sweep", "width=3:20:4",
                    "--buckets", "width=8,16,32", "--check-eager", "--pad-check", "--json"});
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    QJsonObject j = jsonOf(r);
    QCOMPARE(j["runs"].toInt(), 5);      // 3 7 11 15 19
    QCOMPARE(j["compiles"].toInt(), 3);  // buckets 8, 16, 32
    QCOMPARE(j["all_match"].toBool(), true);
    QVERIFY(j["padding_waste"].toDouble() > 0.2);
    for (const auto& row : j["rows"].toArray())
      QCOMPARE(row.toObject()["pad_match"].toBool(), true);
  }

  // --dynamic: kernels generalized over the dim serve every length, each
  // length matches eager, and far fewer kernels are compiled than lengths
  // times kernels; a second process compiles none.
  void symbolicKernelsServeEveryLength_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("sweep");
    QTest::newRow("transformer, seq") << kTransformer << "seq=1,2,7,64,300";
    QTest::newRow("ocr cnn, width") << kOcr << "width=1,2,7,64,300";
  }
  void symbolicKernelsServeEveryLength() {
    QFETCH(QString, model);
    QFETCH(QString, sweep);
    const QStringList args = {"run",     model, "--engine",  "cpu",           "--random-inputs",
                              "--sweep", sweep, "--dynamic", "--check-eager", "--json"};
    Result cold = cli(args);
    QVERIFY2(cold.code == 0, qPrintable(cold.out + cold.err));
    QJsonObject j = jsonOf(cold);
    QCOMPARE(j["mode"].toString(), QString("symbolic"));
    QCOMPARE(j["all_match"].toBool(), true);
    QCOMPARE(j["padding_waste"].toDouble(), 0.0);
    for (const char* key : {"kernel_compiles", "symbolic_kernels", "per_shape_kernels",
                            "symbolic_samples", "symbolic_seconds"})
      QVERIFY2(j.contains(key), key);
    const int symbolic = j["symbolic_kernels"].toInt();
    QVERIFY2(symbolic >= 1, qPrintable(cold.out));
    // Attention's seq x seq scores and the pooled NCHWc row are sized at run
    // time: no kernel of either model is left to compile per shape.
    QVERIFY2(j["per_shape_kernels"].toArray().isEmpty(),
             qPrintable(QJsonDocument(j["per_shape_kernels"].toArray()).toJson()));
    int kernels = 0, lastSymbolic = 0;
    for (const auto& row : j["rows"].toArray()) {
      kernels += row.toObject()["kernels"].toInt();
      lastSymbolic = row.toObject()["symbolic_kernels"].toInt();
    }
    // 300 is past every sample, and still served by most: a kernel fitted on
    // a group of same-shaped samples only (not all twelve) serves lengths where
    // its instance verifies, and is compiled for the others.
    QVERIFY2(lastSymbolic >= symbolic * 3 / 4,
             qPrintable(QString("%1 of %2 symbolic at 300").arg(lastSymbolic).arg(symbolic)));
    // Every symbolic kernel is compiled once, not once per length.
    QVERIFY2(j["kernel_compiles"].toInt() <= kernels - 4 * symbolic,
             qPrintable(QString("%1 kernel compiles of %2 kernels run, %3 symbolic")
                            .arg(j["kernel_compiles"].toInt())
                            .arg(kernels)
                            .arg(symbolic)));
    Result warm = cli(args);
    QVERIFY2(warm.code == 0, qPrintable(warm.out + warm.err));
    QCOMPARE(jsonOf(warm)["kernel_compiles"].toInt(), 0);
  }

  void dynamicAndBucketsIsOneSentence() {
    Result r = cli({"run", kTransformer, "--engine", "cpu", "--random-inputs", "--sweep", "seq=1,2",
                    "--dynamic", "--buckets", "seq=pow2"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("give --dynamic or --buckets"), qPrintable(r.err));
  }

  void badSweepIsOneSentence() {
    Result r = cli({"run", kTransformer, "--engine", "cpu", "--sweep", "seq=5:1:1"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("stops before it starts"), qPrintable(r.err));
    r = cli(
        {"run", kTransformer, "--engine", "cpu", "--sweep", "seq=4,40", "--buckets", "seq=8,16"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("beyond the largest bucket 16"), qPrintable(r.err));
    r = cli({"run", kTransformer, "--engine", "cpu", "--sweep", "len=4,40"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("no symbolic dim named 'len' (it has: seq)"), qPrintable(r.err));
  }

  void dimsDefaultBindsWhatIsLeft() {
    QTemporaryDir out;
    Result r = cli({"run", kTransformer, "--engine", "cpu", "--random-inputs", "--dims-default",
                    "6", "--output-dir", out.path(), "--json"});
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.err.contains("--dims-default bound seq=6"), qPrintable(r.err));
    QVERIFY2(r.out.contains("6,"), qPrintable(r.out));  // y is [1, 6, 16]
    // Without it, the dynamic dim is refused with the sentence that names the way out.
    r = cli(
        {"run", kTransformer, "--engine", "cpu", "--random-inputs", "--output-dir", out.path()});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("--dim seq=N"), qPrintable(r.err));
  }

  // The refusal names a value to start from: the dim's name says what it is.
  void refusalSuggestsADim_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("suggestion");
    QTest::newRow("sequence") << kTransformer << "(suggested: --dim seq=128)";
    QTest::newRow("image width") << kOcr << "(suggested: --dim width=16)";
    // metadata_props "dim.seq" = "24" comes before the name's 128.
    QTest::newRow("metadata hint") << kLayerNormSeq << "(suggested: --dim seq=24)";
  }

  void refusalSuggestsADim() {
    QFETCH(QString, model);
    QFETCH(QString, suggestion);
    QTemporaryDir out;
    Result r =
        cli({"run", model, "--engine", "cpu", "--random-inputs", "--output-dir", out.path()});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains(suggestion), qPrintable(r.err));
    // The suggestion works as given.
    QStringList args = {"run",          model,     "--engine", "cpu", "--random-inputs",
                        "--output-dir", out.path()};
    r = cli(args << suggestion.section(' ', 1).chopped(1).split(' '));
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
  }

  // Concat along seq, Slice [1:] of it, a stride-2 conv over it and a Reshape
  // to a target computed from its Shape: inspect
  // shows the shapes as expressions of seq, and the compiled module matches
  // eager at the lengths the issue names.
  void symbolicShapeArithmeticMatchesEager() {
    Result info = cli({"inspect", kConcatSlice});
    QVERIFY2(info.code == 0, qPrintable(info.out + info.err));
    QVERIFY2(info.out.contains("f32[1,seq*2,8]"), qPrintable(info.out));    // the Concat
    QVERIFY2(info.out.contains("f32[1,seq*2-1,4]"), qPrintable(info.out));  // y, "2*seq - 1"
    QVERIFY2(info.out.contains("f32[1,4,seq]"), qPrintable(info.out));      // ceil(seq*2/2)
    // A Reshape whose target is Concat(Shape(cat)[0:2], [2, 4]).
    QVERIFY2(info.out.contains("f32[1,seq*2,2,4]"), qPrintable(info.out));
    Result one = cli({"compare", kConcatSlice, "--dim", "seq=7", "--random-inputs"});
    QVERIFY2(one.code == 0 && one.out.contains("PASS"), qPrintable(one.out + one.err));
    Result r = cli({"run", kConcatSlice, "--engine", "cpu", "--random-inputs", "--sweep",
                    "seq=1,2,7,64,300", "--check-eager", "--json"});
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    QJsonObject j = jsonOf(r);
    QCOMPARE(j["runs"].toInt(), 5);
    QCOMPARE(j["all_match"].toBool(), true);
  }

  // LayerNorm normalizing over seq, an AveragePool along seq that does not
  // count its pads, and a normalization over seq written out as ReduceMean,
  // Sub, Pow, ReduceMean, Sqrt, Div: in buckets, padded runs equal unpadded ones.
  void layerNormAndAveragePoolOverThePaddedDim() {
    Result r =
        cli({"run", kLayerNormSeq, "--engine", "cpu", "--random-inputs", "--sweep", "seq=1:40:6",
             "--buckets", "seq=8,16,32,64", "--check-eager", "--pad-check", "--json"});
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    QJsonObject j = jsonOf(r);
    QCOMPARE(j["runs"].toInt(), 7);      // 1 7 13 19 25 31 37
    QCOMPARE(j["compiles"].toInt(), 4);  // buckets 8, 16, 32, 64
    QCOMPARE(j["all_match"].toBool(), true);
    for (const auto& row : j["rows"].toArray())
      QCOMPARE(row.toObject()["pad_match"].toBool(), true);
  }

 private:
  QTemporaryDir cache_;
};

QTEST_GUILESS_MAIN(CliSweepTest)
#include "cli_sweep_test.moc"
