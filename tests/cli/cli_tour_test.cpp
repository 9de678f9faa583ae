// Every fuselens-cli command in docs/tour.md runs as written, from the
// checkout's root: each line of a ```sh block that starts with
// `build/app/fuselens-cli` must exit 0, or 1 where the line ends with
// `# exits 1` (a compare that finds divergence). Every chapter has one.
#include <QFile>
#include <QtTest>

#include "tests/support/cli_runner.h"

using namespace fuselens;

namespace {

const QString kPrefix = "build/app/fuselens-cli ";

// Splits a command line as sh would for the words the tour uses: spaces
// separate, single and double quotes group.
QStringList shellWords(const QString& line) {
  QStringList words;
  QString word;
  bool inWord = false;
  QChar quote;
  for (QChar c : line) {
    if (!quote.isNull()) {
      if (c == quote)
        quote = QChar();
      else
        word += c;
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      inWord = true;
    } else if (c.isSpace()) {
      if (inWord) words << word;
      word.clear();
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) words << word;
  return words;
}

struct TourCommand {
  QString chapter, line;
  QStringList args;
  int expectedCode = 0;
};

QList<TourCommand> tourCommands(QStringList* chapters) {
  QFile f(QString::fromStdString(test::sourcePath("/docs/tour.md")));
  if (!f.open(QIODevice::ReadOnly)) return {};
  QList<TourCommand> commands;
  QString chapter;
  bool inSh = false;
  for (const QString& raw : QString::fromUtf8(f.readAll()).split('\n')) {
    if (raw.startsWith("## ")) *chapters << (chapter = raw.mid(3));
    if (raw.startsWith("```")) {
      inSh = !inSh && raw.trimmed() == "```sh";
      continue;
    }
    if (!inSh || !raw.startsWith(kPrefix)) continue;
    TourCommand c{chapter, raw, {}, 0};
    QString line = raw.mid(kPrefix.size());
    if (const qsizetype hash = line.indexOf("  # "); hash >= 0) {
      c.expectedCode = line.mid(hash).contains("exits 1") ? 1 : 0;
      line.truncate(hash);
    }
    c.args = shellWords(line);
    commands << c;
  }
  return commands;
}

}  // namespace

class CliTourTest : public QObject {
  Q_OBJECT

 private slots:
  void everyChapterHasCommands() {
    QStringList chapters;
    const auto commands = tourCommands(&chapters);
    QVERIFY2(chapters.size() >= 6, "docs/tour.md has a chapter per idea");
    for (const QString& ch : chapters) {
      bool found = false;
      for (const TourCommand& c : commands) found |= c.chapter == ch;
      QVERIFY2(found, qPrintable("no fuselens-cli command in chapter " + ch));
    }
    QVERIFY(std::any_of(commands.begin(), commands.end(),
                        [](const TourCommand& c) { return c.expectedCode == 1; }));
  }

  void commandRunsAsWritten_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("expected");
    QStringList chapters;
    for (const TourCommand& c : tourCommands(&chapters))
      QTest::newRow(qPrintable(c.line)) << c.args << c.expectedCode;
  }

  void commandRunsAsWritten() {
    QFETCH(QStringList, args);
    QFETCH(int, expected);
    const test::CliResult r = test::runCli(args);
    QVERIFY2(
        r.code == expected,
        qPrintable(
            QString("exit %1, expected %2\n%3").arg(r.code).arg(expected).arg(r.err.right(2000))));
    QVERIFY(!r.out.isEmpty() || args.contains("-o"));
  }

  void shellWordsAsShSplitsThem() {
    QCOMPARE(shellWords("compile m.onnx --passes 'a,b{x=1}'  -o \"o u t\""),
             QStringList({"compile", "m.onnx", "--passes", "a,b{x=1}", "-o", "o u t"}));
  }
};

QTEST_GUILESS_MAIN(CliTourTest)
#include "cli_tour_test.moc"
