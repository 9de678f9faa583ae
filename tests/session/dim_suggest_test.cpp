// suggestDims: which inputs use each symbolic dim and the value suggested, by
// metadata, dim name, input name and axis, or a small default; the shapes
// those dims give the inputs and back. Also the sweep glue both faces share
// (session/sweep_buckets.h): the bucket a value falls in and the report
// grouped by bucket, on the transformer fixture with symbolic `seq`.
#include "session/dim_suggest.h"

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include "core/ir/printer.h"
#include "session/saved_dims.h"
#include "session/session_file.h"
#include "session/sweep_buckets.h"
#include "tests/support/test_paths.h"

using namespace fuselens;

namespace {

Graph graphOf(const std::string& text) {
  auto g = parseGraph(text);
  if (!g) qFatal("%s", g.message().c_str());
  return std::move(*g);
}

const char* const kTwoInputs =
    R"(graph @main(%input_ids: f32[batch,seq], %mask: f32[batch,seq]) -> (f32[batch,seq]) {
  %0 = Add(%input_ids, %mask) : f32[batch,seq]
  return %0
}
)";

}  // namespace

class DimSuggestTest : public QObject {
  Q_OBJECT
 private slots:
  void suggestions_data() {
    QTest::addColumn<QString>("inputs");  // the graph's input list
    QTest::addColumn<QString>("dim");
    QTest::addColumn<qint64>("value");
    QTest::addColumn<QString>("reason");  // words the reason holds
    QTest::newRow("batch by name") << "%x: f32[batch,16]"
                                   << "batch" << qint64(1) << "batch size";
    QTest::newRow("N by name") << "%x: f32[N,16]"
                               << "N" << qint64(1) << "batch size";
    QTest::newRow("seq by name") << "%x: f32[1,seq,16]"
                                 << "seq" << qint64(128) << "sequence";
    QTest::newRow("tokens by name") << "%x: f32[1,tokens]"
                                    << "tokens" << qint64(128) << "sequence";
    QTest::newRow("width, square") << "%x: f32[1,1,16,width]"
                                   << "width" << qint64(16) << "static side 16";
    QTest::newRow("height alone") << "%x: f32[1,3,height,width]"
                                  << "height" << qint64(224) << "image";
    QTest::newRow("axis 0") << "%x: f32[d0,16]"
                            << "d0" << qint64(1) << "usually the batch";
    QTest::newRow("ids axis 1") << "%input_ids: f32[1,d1]"
                                << "d1" << qint64(128) << "token sequence";
    QTest::newRow("image axis") << "%img: f32[1,3,a,a]"
                                << "a" << qint64(224) << "4-d input";
    QTest::newRow("anything else") << "%x: f32[4,k]"
                                   << "k" << qint64(8) << "small value";
  }

  void suggestions() {
    QFETCH(QString, inputs);
    QFETCH(QString, dim);
    QFETCH(qint64, value);
    QFETCH(QString, reason);
    // "%x: f32[...]" -> the graph returns its input unchanged.
    const QString name = inputs.section(':', 0, 0), type = inputs.section(':', 1).trimmed();
    const std::string text = "graph @main(" + inputs.toStdString() + ") -> (" + type.toStdString() +
                             ") {\n  %0 = Identity(" + name.toStdString() +
                             ") : " + type.toStdString() + "\n  return %0\n}\n";
    auto g = parseGraph(text);
    QVERIFY2(g.isOk(), g.message().c_str());
    std::vector<DimSuggestion> dims = suggestDims(*g);
    auto it = std::find_if(dims.begin(), dims.end(),
                           [&](const DimSuggestion& d) { return d.name == dim.toStdString(); });
    QVERIFY(it != dims.end());
    QCOMPARE(it->value, value);
    QVERIFY2(QString::fromStdString(it->reason).contains(reason), it->reason.c_str());
  }

  void metadataWins() {
    Graph g = graphOf(kTwoInputs);
    std::vector<DimSuggestion> dims = suggestDims(g, {{"dim.seq", "384"}});
    QCOMPARE(dims.size(), size_t(2));
    QCOMPARE(dims[1].name, std::string("seq"));
    QCOMPARE(dims[1].value, int64_t(384));
    QVERIFY(dims[1].reason.find("metadata") != std::string::npos);
    // A hint that is not a positive number is ignored.
    QCOMPARE(suggestDims(g, {{"seq", "lots"}})[1].value, int64_t(128));
    // From a model file: its metadata_props are imported and read.
    auto fromFile =
        suggestDimsOfFile(test::sourcePath("/tests/cli/data/dyn_layernorm_seq/model.onnx"));
    QVERIFY2(fromFile, fromFile.status().message().c_str());
    QCOMPARE(fromFile->size(), size_t(1));
    QCOMPARE((*fromFile)[0].value, int64_t(24));
    QVERIFY((*fromFile)[0].reason.find("dim.seq=24") != std::string::npos);
  }

  void usesAndShapes() {
    Graph g = graphOf(kTwoInputs);
    std::vector<DimSuggestion> dims = suggestDims(g);
    QCOMPARE(dims[0].usesText(), std::string("input_ids[0], mask[0]"));
    QCOMPARE(dims[1].usesText(), std::string("input_ids[1], mask[1]"));
    InputShapes shapes = shapesForDims(g, {{"batch", 2}, {"seq", 7}});
    QCOMPARE(shapes.size(), size_t(2));
    QCOMPARE(shapes["mask"], (std::vector<int64_t>{2, 7}));
    QVERIFY(shapesForDims(g, {{"seq", 7}}).empty());  // batch unbound: no shape
    QCOMPARE(dimsFromShapes(dims, shapes),
             (std::map<std::string, int64_t>{{"batch", 2}, {"seq", 7}}));
    QCOMPARE(suggestedDimFlag(g, "seq"), std::string(" (suggested: --dim seq=128)"));
    QCOMPARE(suggestedDimFlag(g, "len"), std::string());
  }

  // The session file beside a model answers for it only when it names that model.
  void savedDimsBesideTheModel() {
    QTemporaryDir dir;
    const std::string model = dir.filePath("m.onnx").toStdString();
    QVERIFY(QFile::copy(
        QString::fromStdString(test::sourcePath("/tests/cli/data/dyn_transformer/model.onnx")),
        QString::fromStdString(model)));
    QCOMPARE(besideSessionPath(model), dir.filePath("m.fuselens.json").toStdString());
    const std::vector<DimSuggestion> dims = {{"seq", {{"x", 1}}, 128, ""}};
    QVERIFY(savedDims(model, dims).empty());  // no file yet
    SessionFile file;
    file.modelPath = model;
    file.inputShapes = {{"x", {1, 6, 16}}};
    QVERIFY(saveSessionFile(besideSessionPath(model), file).isOk());
    QCOMPARE(savedDims(model, dims), (std::map<std::string, int64_t>{{"seq", 6}}));
    file.modelPath = test::sourcePath("/tests/cli/data/dyn_transformer/model.onnx");
    QVERIFY(saveSessionFile(besideSessionPath(model), file).isOk());
    QVERIFY(savedDims(model, dims).empty());  // another model's session
  }

  void noSymbolicInputsNoSuggestions() {
    Graph g = graphOf(
        "graph @main(%x: f32[2,3]) -> (f32[2,3]) {\n  %0 = Relu(%x) : f32[2,3]\n"
        "  return %0\n}\n");
    QVERIFY(suggestDims(g).empty());
  }

  void bucketPolicy() {
    auto b = parseBucketPolicy("pow2", "seq", 20);
    QVERIFY(b.isOk());
    QCOMPARE(*b, (std::vector<int64_t>{1, 2, 4, 8, 16, 32}));
    b = parseBucketPolicy("seq=step:32", "seq", 40);
    QCOMPARE(*b, (std::vector<int64_t>{32, 64}));
    QCOMPARE(bucketOf(*b, 33), std::optional<int64_t>(64));
    QCOMPARE(bucketOf(*b, 65), std::optional<int64_t>());
    QVERIFY(!parseBucketPolicy("width=8", "seq", 8).isOk());
    auto request = makeSweepRequest({"seq=1,5", "", "", 0, false, true});
    QVERIFY(!request.isOk());
    QVERIFY(request.message().find("give --buckets") != std::string::npos);
  }

  // Three lengths into two buckets: the rows add up to the report's runs.
  void bucketRowsOfASweep() {
    QTemporaryDir cache;
    qputenv("XDG_CACHE_HOME", cache.path().toUtf8());
    auto request = makeSweepRequest({"seq=2,3,5", "seq=4,8", "", 0, true, false});
    QVERIFY2(request.isOk(), request.message().c_str());
    auto report =
        sweepModel(test::sourcePath("/tests/cli/data/dyn_transformer/model.onnx"), {}, *request);
    QVERIFY2(report.isOk(), report.message().c_str());
    std::vector<BucketRow> rows = bucketRows(*report);
    QCOMPARE(rows.size(), size_t(2));
    QCOMPARE(rows[0].bucket, int64_t(4));
    QCOMPARE(rows[0].runs, size_t(2));
    QCOMPARE(rows[0].compiles, size_t(1));
    QCOMPARE(rows[1].runs, size_t(1));
    QVERIFY(rows[0].paddingWaste > 0);
    QCOMPARE(rows[0].verdict, report->runs[0].verdict);
  }
};

QTEST_GUILESS_MAIN(DimSuggestTest)
#include "dim_suggest_test.moc"
