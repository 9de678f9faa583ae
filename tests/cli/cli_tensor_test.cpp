// `fuselens-cli tensor`: the stats lines and histogram the session formats,
// a slice table, --json, the .npy it writes read back (logical layout, the
// same numbers), and bad input answered with one sentence and exit 2.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "core/io/npy.h"
#include "session/pipeline_choice.h"
#include "session/tensor_inspect.h"
#include "tests/support/cli_runner.h"

using fuselens::test::runCli;

namespace {

// The default pipeline blocks to the host's vector width.
QString blockedLayout() { return QString("NCHW%1c").arg(fuselens::hostLayoutBlock()); }

const QString kTwoConvs = "tests/cli/data/two_convs/model.onnx";
const QString kTwoConvsInput = "x=tests/cli/data/two_convs/input_x.npy";

}  // namespace

class CliTensorTest : public QObject {
  Q_OBJECT
 private slots:
  void textReport() {
    auto r = runCli({"tensor", kTwoConvs, "r1", "--input", kTwoConvsInput, "--bins", "5", "--slice",
                     "0,0,:,:"});
    QVERIFY2(r.code == 0, qPrintable(r.err + r.out));
    QVERIFY2(r.out.contains("r1 (from ") &&
                 r.out.contains("compiled " + blockedLayout() + " shown as NCHW"),
             qPrintable(r.out));
    QVERIFY2(r.out.contains("side compiled: f32[1,"), qPrintable(r.out));
    QVERIFY(r.out.contains("\ncount ") && r.out.contains("\nmin ") && r.out.contains("\nmean "));
    QVERIFY(r.out.contains("NaN 0  +Inf 0  -Inf 0  zeros "));
    QVERIFY2(r.out.contains("histogram (5 bins, 0 NaN/Inf ignored)"), qPrintable(r.out));
    QVERIFY2(r.out.contains("slice [0,0,:,:]: 12 x 10\n"), qPrintable(r.out));  // all of it
    QVERIFY2(r.err.contains("tensor: fetched in"), qPrintable(r.err));
  }

  void npyRoundTrip() {
    QTemporaryDir dir;
    const QString npy = dir.path() + "/r1_error.npy";
    auto r = runCli({"tensor", kTwoConvs, "r1", "--input", kTwoConvsInput, "--side", "compiled",
                     "--json", "--npy", npy});
    QVERIFY2(r.code == 0, qPrintable(r.err + r.out));
    const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(o["layout"].toString(), blockedLayout());
    QCOMPARE(o["side"].toString(), QString("compiled"));
    auto t = fuselens::readNpy(npy.toStdString());
    QVERIFY2(t.isOk(), t.isOk() ? "" : t.message().c_str());
    QJsonArray shape = o["shape"].toArray();
    QCOMPARE(int(t->shape.size()), int(shape.size()));
    for (int i = 0; i < shape.size(); ++i) QCOMPARE(t->shape[size_t(i)], int64_t(shape[i].toInt()));
    const fuselens::TensorStats s = fuselens::tensorStats(*t);
    const QJsonObject stats = o["stats"].toObject();
    QCOMPARE(double(s.count), stats["count"].toDouble());
    QCOMPARE(s.min, stats["min"].toDouble());
    QCOMPARE(s.max, stats["max"].toDouble());
    QVERIFY(o["histogram"].toObject()["counts"].toArray().size() == 20);
  }

  void errorSide() {
    auto r = runCli({"tensor", kTwoConvs, "y", "--input", kTwoConvsInput, "--side", "error"});
    QVERIFY2(r.code == 0, qPrintable(r.err + r.out));
    QVERIFY2(r.out.contains("side error: f64[1,"), qPrintable(r.out));
  }

  void badInputIsOneSentence_data() {
    QTest::addColumn<QStringList>("extra");
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("sentence");
    QTest::newRow("unknown tensor") << QStringList{} << "nope"
                                    << "no tensor named 'nope'";
    QTest::newRow("bad side") << QStringList{"--side", "both"} << "r1"
                              << "--side must be eager, compiled, exact, error or ratio";
    QTest::newRow("bad slice") << QStringList{"--slice", "0,:,:"} << "r1"
                               << "does not fit a tensor of shape";
    QTest::newRow("inner tensor has no error map") << QStringList{"--side", "error"} << "c1"
                                                   << "not a kernel boundary";
  }
  void badInputIsOneSentence() {
    QFETCH(QStringList, extra);
    QFETCH(QString, name);
    QFETCH(QString, sentence);
    auto r = runCli(QStringList{"tensor", kTwoConvs, name, "--input", kTwoConvsInput} + extra);
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains(sentence), qPrintable(r.err));
    QVERIFY2(r.err.trimmed().count('\n') == 0, qPrintable(r.err));  // one line
    QVERIFY(r.out.isEmpty());
  }
};

QTEST_APPLESS_MAIN(CliTensorTest)
#include "cli_tensor_test.moc"
