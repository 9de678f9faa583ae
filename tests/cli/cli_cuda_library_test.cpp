// cuBLASLt offload beyond export (session/cuda_library.h): `run | compare
// --engine cuda` take --cuda-library / --cuda-library-group with export's words
// and validation, `compile --target cuda` reports per MatMul/Gemm group the
// engine and epilogue (or why generated) in manifest.json's words, and
// `tune --target cuda` chooses per group, by rule where no device can time.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "session/engines.h"
#include "tests/support/cli_runner.h"

using fuselens::test::runCli;

namespace {

// group node -> its "library" entry, from compile --json's "cuda_library".
QMap<QString, QJsonObject> compileEntries(const QStringList& extra, QString* err = nullptr) {
  auto r = runCli(QStringList{"compile", "samples/mlp.onnx", "--target", "cuda", "--json"} + extra);
  if (err) *err = r.err;
  QMap<QString, QJsonObject> out;
  for (const auto& row : QJsonDocument::fromJson(r.out.toUtf8()).object()["cuda_library"].toArray())
    out[row.toObject()["group"].toString()] = row.toObject()["library"].toObject();
  return out;
}

void verifyOneSentence(const fuselens::test::CliResult& r, const QString& what) {
  QCOMPARE(r.code, 2);
  const QString err = r.err.trimmed();
  QVERIFY2(!err.contains('\n'), qPrintable(err));
  QVERIFY2(err.contains(what), qPrintable(err));
}

}  // namespace

class CliCudaLibraryTest : public QObject {
  Q_OBJECT
 private slots:
  // The options parse and the run reaches the engine: without a device its
  // one sentence, exit 2; with one, the offloaded run passes.
  void engineTakesTheOptions_data() {
    QTest::addColumn<QStringList>("args");
    const QStringList lib{"--engine", "cuda", "--cuda-library", "cublaslt"};
    QTest::newRow("run") << QStringList{"run", "samples/mlp.onnx", "--output-dir",
                                        QDir::tempPath() + "/fl-cuda-lib-run"} +
                                lib;
    QTest::newRow("compare") << QStringList{"compare", "samples/mlp.onnx"} + lib;
    QTest::newRow("compare, per group") << QStringList{
        "compare", "samples/matmul_bias_relu.onnx", "--engine",
        "cuda",    "--cuda-library-group",          "no_group_checked_before_the_device=generated"};
  }
  void engineTakesTheOptions() {
    QFETCH(QStringList, args);
    auto r = runCli(args);
    std::string why;
    if (!fuselens::cudaEngineAvailable(&why)) {
      verifyOneSentence(r, QString::fromStdString(why));
      QSKIP(qPrintable("no GPU here: " + r.err.trimmed()));
    }
    if (args.join(' ').contains("no_group")) {
      verifyOneSentence(r, "no_group_checked_before_the_device");
      return;
    }
    QVERIFY2(r.code == 0, qPrintable(r.err));
    if (args[0] == "compare") QVERIFY2(r.out.contains("PASS"), qPrintable(r.out));
  }

  // A bad value is one sentence naming the flag and the value, before any
  // model is read, on every command; so is the option without the CUDA engine.
  void badValuesAreOneSentence_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("says");
    for (const QString cmd : {"run", "compare"}) {
      QTest::newRow(qPrintable(cmd + ": mode"))
          << QStringList{cmd, "samples/mlp.onnx", "--engine", "cuda", "--cuda-library", "cublas"}
          << "--cuda-library: 'cublas' is not a CUDA library: use cublaslt or none";
      QTest::newRow(qPrintable(cmd + ": group"))
          << QStringList{cmd,    "samples/mlp.onnx",     "--engine",
                         "cuda", "--cuda-library-group", "fc1=fast"}
          << "--cuda-library-group: 'fc1=fast' is not NAME=cublaslt or NAME=generated";
      QTest::newRow(qPrintable(cmd + ": cpu engine"))
          << QStringList{cmd, "samples/mlp.onnx", "--engine", "cpu", "--cuda-library", "cublaslt"}
          << "runs on the CUDA engine only; add --engine cuda";
    }
    QTest::newRow("compile: mode") << QStringList{"compile", "samples/mlp.onnx", "--target",
                                                  "cuda",    "--cuda-library",   "cuBLAS"}
                                   << "'cuBLAS' is not a CUDA library";
    QTest::newRow("compile: no target")
        << QStringList{"compile", "samples/mlp.onnx", "--cuda-library", "cublaslt"}
        << "add --target cuda";
    QTest::newRow("compile: group") << QStringList{"compile", "samples/mlp.onnx",     "--target",
                                                   "cuda",    "--cuda-library-group", "=cublaslt"}
                                    << "'=cublaslt' is not NAME=cublaslt";
    QTest::newRow("export: mode") << QStringList{"export",         "samples/mlp.onnx",
                                                 "--target",       "cuda",
                                                 "--out",          "/nonexistent/x",
                                                 "--cuda-library", "yes"}
                                  << "'yes' is not a CUDA library";
    QTest::newRow("missing model")
        << QStringList{"run", "no/such/model.onnx", "--engine", "cuda", "--cuda-library", "cublas"}
        << "'cublas' is not a CUDA library";
  }
  void badValuesAreOneSentence() {
    QFETCH(QStringList, args);
    QFETCH(QString, says);
    verifyOneSentence(runCli(args), says);
  }

  // compile --target cuda names the engine per MatMul/Gemm group in the words
  // of the manifest export writes with the same options.
  void compileMatchesTheManifest_data() {
    QTest::addColumn<QStringList>("options");
    QTest::newRow("every group") << QStringList{"--cuda-library", "cublaslt"};
    QTest::newRow("none") << QStringList{};
  }
  void compileMatchesTheManifest() {
    QFETCH(QStringList, options);
    QString err;
    const auto entries = compileEntries(options, &err);
    QVERIFY2(entries.size() == 2, qPrintable(err));  // the MLP's Gemm and MatMul groups
    QTemporaryDir dir;
    auto ex = runCli(QStringList{"export", "samples/mlp.onnx", "--target", "cuda", "--out",
                                 dir.path(), "--ptxas", "none"} +
                     options);
    QVERIFY2(ex.code == 0, qPrintable(ex.err));
    QFile mf(dir.filePath("manifest.json"));
    QVERIFY(mf.open(QIODevice::ReadOnly));
    int matched = 0;
    for (const auto& g : QJsonDocument::fromJson(mf.readAll()).object()["groups"].toArray()) {
      const QJsonObject group = g.toObject();
      if (!entries.contains(group["node"].toString())) continue;
      ++matched;
      const QJsonObject lib = entries[group["node"].toString()];
      if (options.isEmpty()) {
        QVERIFY(!group.contains("library"));  // export writes none without the option
        QCOMPARE(lib["engine"].toString(), QString("generated"));
        QCOMPARE(lib["why"].toString(), QString("--cuda-library is none"));
      } else {
        QCOMPARE(lib, group["library"].toObject());
      }
    }
    QCOMPARE(matched, 2);
    auto text = runCli(QStringList{"compile", "samples/mlp.onnx", "--target", "cuda"} + options);
    QVERIFY2(text.code == 0, qPrintable(text.err));
    QVERIFY(text.out.contains("CUDA library offload (--cuda-library "));
    for (auto it = entries.begin(); it != entries.end(); ++it) {
      const QString word = it.value()["engine"].toString() == "cublaslt"
                               ? it.value()["epilogue"].toString()
                               : it.value()["why"].toString();
      QVERIFY2(text.out.contains(it.key()) && text.out.contains(word), qPrintable(text.out));
    }
  }

  // A group named per flag wins over the mode; a name the graph lacks is a
  // sentence naming it; control flow is refused in one sentence.
  void compileGroupsAndRefusals() {
    const auto all = compileEntries({"--cuda-library", "cublaslt"});
    QString offloaded;
    for (auto it = all.begin(); it != all.end(); ++it)
      if (it.value()["engine"].toString() == "cublaslt") offloaded = it.key();
    QVERIFY(!offloaded.isEmpty());
    const auto one = compileEntries(
        {"--cuda-library", "cublaslt", "--cuda-library-group", offloaded + "=generated"});
    QCOMPARE(one[offloaded]["engine"].toString(), QString("generated"));
    QCOMPARE(one[offloaded]["why"].toString(),
             QString("--cuda-library-group asked for the generated kernel"));
    verifyOneSentence(runCli({"compile", "samples/mlp.onnx", "--target", "cuda",
                              "--cuda-library-group", "no_such_group=cublaslt"}),
                      "no kernel group named 'no_such_group'");
    verifyOneSentence(runCli({"compile", "tests/fixtures/cf_loop/model.onnx", "--target", "cuda",
                              "--cuda-library", "cublaslt"}),
                      "cuBLASLt offload covers graphs without If, Loop or Scan");
    QTemporaryDir bundle;  // export too: its groups would be no nodes of the top-level graph
    verifyOneSentence(runCli({"export", "tests/fixtures/cf_loop/model.onnx", "--target", "cuda",
                              "--out", bundle.path(), "--cuda-library", "cublaslt"}),
                      "cuBLASLt offload covers graphs without If, Loop or Scan");
    verifyOneSentence(
        runCli({"tune", "tests/fixtures/cf_loop/model.onnx", "--target", "cuda"}),
        "tune --target cuda: cuBLASLt offload covers graphs without If, Loop or Scan");
    auto none = runCli({"compile", "tests/fixtures/cf_loop/model.onnx", "--target", "cuda"});
    QVERIFY2(none.code == 0, qPrintable(none.err));
    QVERIFY2(none.out.contains("control flow (its kernels are planned per segment)"),
             qPrintable(none.out));
  }

  // The tuner without a device: one sentence saying so, the rule per group
  // (the MLP's M = 4 rows stay generated; llama's seq = 1024 projections that
  // cuBLASLt expresses go to it), and its flags give compile the same engines.
  void tuneChoosesByRule_data() {
    QTest::addColumn<QStringList>("model");
    QTest::addColumn<bool>("someLibrary");
    QTest::newRow("mlp, M 4") << QStringList{"samples/mlp.onnx"} << false;
    QTest::newRow("llama, seq 1024")
        << QStringList{"samples/llama_block.onnx", "--dim", "seq=1024"} << true;
  }
  void tuneChoosesByRule() {
    QFETCH(QStringList, model);
    QFETCH(bool, someLibrary);
    std::string why;
    if (fuselens::cudaEngineAvailable(&why)) QSKIP("a device times both engines instead");
    auto r = runCli(QStringList{"tune"} + model + QStringList{"--target", "cuda"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.out.startsWith("note: " + QString::fromStdString(why) +
                              ", so nothing can be timed and each MatMul/Gemm group is chosen "
                              "by rule\n"),
             qPrintable(r.out));
    const QString flagsLine = r.out.section('\n', -2, -2);
    QVERIFY2(flagsLine.startsWith("as flags: --cuda-library-group "), qPrintable(r.out));
    QStringList flags = flagsLine.mid(QString("as flags: ").size()).split(' ');
    QCOMPARE(r.out.count("--cuda-library-group "), flags.size() / 2);
    QCOMPARE(r.out.contains("=cublaslt"), someLibrary);
    QVERIFY(r.out.contains("by rule: "));
    if (!someLibrary) QVERIFY(r.out.contains("has at most 16 rows"));
    // The choice fed back: compile reports the engines the tuner chose.
    auto c =
        runCli(QStringList{"compile"} + model + QStringList{"--target", "cuda", "--json"} + flags);
    QVERIFY2(c.code == 0, qPrintable(c.err));
    const auto rows = QJsonDocument::fromJson(c.out.toUtf8()).object()["cuda_library"].toArray();
    QCOMPARE(rows.size(), flags.size() / 2);
    for (const auto& row : rows) {
      const QString group = row.toObject()["group"].toString();
      const QString engine = row.toObject()["library"].toObject()["engine"].toString();
      QVERIFY2(flags.contains(group + "=" + engine), qPrintable(group + " " + engine));
    }
  }
};

QTEST_GUILESS_MAIN(CliCudaLibraryTest)
#include "cli_cuda_library_test.moc"
