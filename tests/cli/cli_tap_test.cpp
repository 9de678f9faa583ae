// `fuselens-cli compare --tap NAME` as a user runs it: tap rows after the
// compare table and in the JSON's `taps` array (name, kernel, group, metrics,
// expected error, verdict), counted toward the exit code; a bad name is one
// sentence on stderr and exit 2.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "tests/support/cli_runner.h"

using fuselens::test::runCli;

namespace {
const QString kBn1 = "/layer1/0/block1/bn/BatchNormalization_output_0";
const QString kBn2 = "/layer1/0/block2/bn/BatchNormalization_output_0";
const QString kResnet = "samples/resnet_bottleneck.onnx";
}  // namespace

class CliTapTest : public QObject {
  Q_OBJECT
 private slots:
  void tableHasTapRows() {
    auto r = runCli({"compare", kResnet, "--tap", kBn1, "--tap", kBn2, "--seed", "4"});
    QVERIFY2(r.code == 0, qPrintable(r.err + r.out));
    QVERIFY2(r.out.contains("tap (inside a group)"), qPrintable(r.out));
    QVERIFY2(r.out.contains("PASS: 2 taps within rounding"), qPrintable(r.out));
    QCOMPARE(r.out.count(QRegularExpression(
                 "^/layer1/0/block\\d/bn/\\S+ +group \\d+ \\(k\\d+\\) .*within rounding$",
                 QRegularExpression::MultilineOption)),
             2);
  }

  void jsonHasTapsArray() {
    auto r = runCli({"compare", kResnet, "--tap", kBn1, "--json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QJsonArray taps = o["taps"].toArray();
    QCOMPARE(taps.size(), 1);
    QJsonObject t = taps[0].toObject();
    QCOMPARE(t["name"].toString(), kBn1);
    QVERIFY2(t["kernel"].toString().contains("_convnchwc"), qPrintable(t["kernel"].toString()));
    QVERIFY(t["group"].toInt(-1) >= 0);
    QVERIFY(t["max_abs"].toDouble(-1) >= 0);
    QVERIFY(t["expected_error"].toDouble() > 0);
    QCOMPARE(t["verdict"].toString(), QString("within rounding"));
    QCOMPARE(t["outputs_identical"].toBool(), true);
    QVERIFY(o["passed"].toBool());
    // The tap is no compare row: compare's own rows are kernel boundaries only.
    for (const auto& row : o["tensors"].toArray())
      QVERIFY(row.toObject()["value"].toString() != kBn1);
  }

  // An error planted upstream makes the tap beyond rounding: exit 1.
  void tapBeyondRoundingFailsTheRun() {
    auto r = runCli({"compare", kResnet, "--tap", kBn2, "--perturb", "k0=1e-2"});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.out.contains("FAIL: tap " + kBn2), qPrintable(r.out));
  }

  void badNameIsOneSentence_data() {
    QTest::addColumn<QString>("tap");
    QTest::addColumn<QString>("says");
    QTest::newRow("no such tensor") << "nope"
                                    << "no tensor named 'nope' in the model";
    QTest::newRow("kernel boundary") << "y"
                                     << "kernel-boundary tensor";
  }

  void badNameIsOneSentence() {
    QFETCH(QString, tap);
    QFETCH(QString, says);
    auto r = runCli({"compare", kResnet, "--tap", tap});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains(says), qPrintable(r.err));
    QCOMPARE(r.err.trimmed().count('\n'), 0);
    QVERIFY(r.out.isEmpty());
  }
};

QTEST_GUILESS_MAIN(CliTapTest)
#include "cli_tap_test.moc"
