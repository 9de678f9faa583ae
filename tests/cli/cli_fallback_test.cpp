// The reference fallback as a user sees it: `compare` runs a model with an op
// codegen cannot lower (Resize in linear mode on uint8 data; the model is
// written by tests/cli/data/make_cli_models.py) by running that node through its eager kernel and
// prints its tensor as "fallback", never "ok" (table and JSON); --no-fallback
// makes it a compile error naming the node; `export` refuses such a model in
// one sentence naming the node.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "tests/support/cli_runner.h"

namespace {

using Result = fuselens::test::CliResult;

Result cli(const QStringList& args) { return fuselens::test::runCli(args, 120000); }

const QString kModel = "tests/cli/data/resize_linear_u8/model.onnx";
const QString kInput = "x=tests/cli/data/resize_linear_u8/input_x.npy";

}  // namespace

class CliFallbackTest : public QObject {
  Q_OBJECT
 private slots:
  void compareLabelsFallbackTensors() {
    Result r = cli({"compare", kModel, "--input", kInput});
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    QString yLine;
    for (const QString& line : r.out.split('\n'))
      if (line.startsWith("y ")) yLine = line;
    QVERIFY2(yLine.contains("fallback") && !yLine.contains(" ok"), qPrintable(r.out));
    QVERIFY2(r.out.contains("not compiled (reference fallback)"), qPrintable(r.out));
  }

  void compareJsonMarksFallback() {
    Result r = cli({"compare", kModel, "--input", kInput, "--json"});
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(o["fallback_tensors"].toInt(), 1);
    bool sawY = false;
    for (const QJsonValue& t : o["tensors"].toArray()) {
      QJsonObject row = t.toObject();
      bool isY = row["value"].toString() == "y";
      sawY |= isY;
      QCOMPARE(row["fallback"].toBool(), isY);
      if (isY) QCOMPARE(row["status"].toString(), QString("not compiled (reference fallback)"));
    }
    QVERIFY(sawY);
  }

  void noFallbackIsACompileError() {
    Result r = cli({"compare", kModel, "--input", kInput, "--no-fallback"});
    QVERIFY(r.code != 0);
    QVERIFY2(r.err.contains("'resize' (Resize)") && r.err.contains("f32 data only"),
             qPrintable(r.err));
  }

  void exportRefusesFallback() {
    QTemporaryDir out;
    Result r = cli({"export", kModel, "--out", out.path()});
    QVERIFY(r.code != 0);
    QVERIFY2(r.err.contains("'resize' (Resize)") && r.err.contains("reference fallback"),
             qPrintable(r.err));
  }
};

QTEST_GUILESS_MAIN(CliFallbackTest)
#include "cli_fallback_test.moc"
