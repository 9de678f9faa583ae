// `fuselens-cli render`: the graph view as well-formed SVG (parsed here) and
// as PNG (checked by its signature), a scope drawn alone, and one sentence
// with exit status 2 for a scope, snapshot or file type that does not exist.
#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <QtTest>

#include "tests/support/cli_runner.h"

namespace {

using Result = fuselens::test::CliResult;

Result cli(const QStringList& args) { return fuselens::test::runCli(args, 120000); }

const QString kModel = "tests/cli/data/scoped_bert_2layer.onnx";

// Counts the elements named `name`; -1 when the document is not well formed.
int countElements(const QString& path, const QString& name) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return -1;
  QXmlStreamReader xml(&f);
  int n = 0;
  while (!xml.atEnd())
    if (xml.readNext() == QXmlStreamReader::StartElement && xml.name() == name) ++n;
  return xml.hasError() ? -1 : n;
}

}  // namespace

class CliRenderTest : public QObject {
  Q_OBJECT
 private slots:
  void svgIsWellFormed() {
    QTemporaryDir dir;
    const QString out = dir.filePath("graph.svg");
    Result r = cli({"render", kModel, "-o", out});
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.out.contains("boxes") && r.out.contains("edges"), qPrintable(r.out));
    QVERIFY(countElements(out, "svg") == 1);
    QVERIFY(countElements(out, "rect") > 10);
    QVERIFY(countElements(out, "path") > 10);
  }

  void depthAndScope() {
    QTemporaryDir dir;
    const QString shallow = dir.filePath("d1.svg"), scope = dir.filePath("scope.svg");
    Result r = cli({"render", kModel, "--expand-depth", "1", "--after", "0", "-o", shallow});
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.out.contains("after import"), qPrintable(r.out));
    r = cli({"render", kModel, "--scope", "encoder/layer.1", "-o", scope});
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    QVERIFY(countElements(scope, "svg") == 1);
    QFile f(scope);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray text = f.readAll();
    QVERIFY(text.contains("/encoder/layer.1/attention"));
    QVERIFY(text.contains("<title>/encoder/layer.1/"));
    QVERIFY(!text.contains("<title>/encoder/layer.0/"));  // ops of other scopes are not drawn
  }

  // --time profiles the compiled model and badges collapsed scopes with their
  // kernels' time (" ms" or " us" on a box's badge line).
  void kernelTimesOnCollapsedScopes() {
    QTemporaryDir dir;
    const QString out = dir.filePath("time.svg");
    Result r = cli({"render", kModel, "--expand-depth", "1", "--time", "--runs", "2", "-o", out});
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    QVERIFY(countElements(out, "svg") == 1);
    QFile f(out);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(f.readAll());
    QVERIFY2(text.contains(QRegularExpression(">[^<]*\\d+(\\.\\d+)? (ms|us)<")),
             qPrintable(text.left(2000)));
  }

  // Inside an open scope, each fused cluster says its kernels' time after its
  // label, and an op that is a kernel of its own carries a time chip.
  void kernelTimesOnOpsAndClusters() {
    QTemporaryDir dir;
    const QString out = dir.filePath("ops.svg");
    Result r =
        cli({"render", kModel, "--scope", "encoder/layer.0", "--time", "--runs", "2", "-o", out});
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    QVERIFY(countElements(out, "svg") == 1);
    QFile f(out);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(f.readAll());
    const QString time = "\\d+(\\.\\d+)? (us|ms)";
    QVERIFY2(text.contains(QRegularExpression(">group \\d+ \\([^)]*\\)  " + time + "<")),
             qPrintable(text.left(2000)));
    QVERIFY2(text.contains(QRegularExpression("fill=\"#78350f\">" + time + "<")),
             qPrintable(text.left(2000)));
  }

  // --diff marks the ops the snapshot's pass added (green) or changed
  // (violet) with a thick border, as the window's diff mode does.
  void diffMarksThePass() {
    QTemporaryDir dir;
    const QString out = dir.filePath("diff.svg");
    Result r =
        cli({"render", "samples/resnet_bottleneck.onnx", "--after", "layout", "--diff", "-o", out});
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    QVERIFY(countElements(out, "svg") == 1);
    QFile f(out);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(f.readAll());
    QVERIFY(text.contains("changes against dce"));
    QCOMPARE(int(text.count("stroke=\"#16a34a\" stroke-width=\"3.0\"")), 2);  // ToNCHWc, FromNCHWc
    QVERIFY(text.count("stroke=\"#9333ea\" stroke-width=\"3.0\"") >=
            3);  // the Convs became ConvNCHWc
  }

  void pngHasTheSignature() {
    QTemporaryDir dir;
    const QString out = dir.filePath("graph.png");
    Result r = cli({"render", kModel, "-o", out});
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    QFile f(out);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.read(8), QByteArray("\x89PNG\r\n\x1a\n", 8));
  }

  // A dot that dies on every request takes nothing down: each scope falls back
  // to the layered layout, and the output says so.
  void deadDotFallsBack() {
    QTemporaryDir dir;
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("FUSELENS_DOT", "/bin/false");
    p.setProcessEnvironment(env);
    p.setWorkingDirectory(QString::fromStdString(fuselens::test::sourcePath()));
    p.start(QString::fromStdString(fuselens::test::cliPath()),
            {"render", kModel, "-o", dir.filePath("g.svg")});
    QVERIFY(p.waitForFinished(120000));
    const QString out = QString::fromUtf8(p.readAllStandardOutput());
    QCOMPARE(p.exitCode(), 0);
    QVERIFY2(out.contains("note: (top): simple layered layout (dot crashed)"), qPrintable(out));
    QVERIFY(countElements(dir.filePath("g.svg"), "svg") == 1);
  }

  void badRequestsAreOneSentence_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("says");
    QTest::newRow("unknown scope") << QStringList{"--scope", "/decoder"}
                                   << "the graph has no scope '/decoder'; its top scopes are";
    QTest::newRow("unknown snapshot")
        << QStringList{"--after", "no-such-pass"} << "no snapshot is named 'no-such-pass'";
    QTest::newRow("file type") << QStringList{"-o", "graph.jpg"}
                               << "the output must end in .svg or .png";
  }
  void badRequestsAreOneSentence() {
    QFETCH(QStringList, args);
    QFETCH(QString, says);
    QTemporaryDir dir;
    QStringList all = {"render", kModel};
    all << args;
    if (!args.contains("-o")) all << "-o" << dir.filePath("g.svg");
    Result r = cli(all);
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains(says), qPrintable(r.err));
    QCOMPARE(r.err.count('\n'), 1);
  }
};

QTEST_APPLESS_MAIN(CliRenderTest)
#include "cli_render_test.moc"
