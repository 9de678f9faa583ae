// Pass tests as before/expected text (tests/passes/cases/*.txt). Each case:
//
//   === case <name>
//   === pipeline <pipeline string>
//   <input IR>
//   === expect            the IR after the pipeline, or
//   === error             a substring of the pipeline's error
//   === decisions         optional: "<accepted|rejected> <rule> <ProducerOp> -> <ConsumerOp>" lines
//   === notes             optional: the passes' notes (the rewrite log), "where: rule: sentence"
//   === reasons           optional: each decision's full sentence, and " | hint: ..." when it has
//   one
//
// Every case that succeeds is also a meaning check: the eager interpreter
// gives the same outputs before and after the pipeline on seeded inputs, and
// every value of the result whose origin is set holds the tensor its origin
// holds in the input graph.
// FUSELENS_UPDATE_EXPECTED=1 rewrites the expect/decisions sections in place.
#include <QtTest>

#include "core/compare/compare.h"
#include "core/eager/interpreter.h"
#include "core/io/npy.h"
#include "core/ir/printer.h"
#include "passes/pass_manager.h"
#include "tests/support/test_paths.h"

using namespace fuselens;

namespace {

struct Case {
  QString name, pipeline, input, expect, error, decisions, notes, reasons;
  bool hasDecisions = false, hasNotes = false, hasReasons = false;
};

QList<Case> readCases(const QString& path) {
  QFile f(path);
  QList<Case> cases;
  if (!f.open(QIODevice::ReadOnly)) return cases;
  QString* section = nullptr;
  for (const QString& line : QString::fromUtf8(f.readAll()).split('\n')) {
    if (line.startsWith("=== case ")) {
      cases.append(Case{});
      cases.back().name = line.mid(9).trimmed();
      section = &cases.back().input;
    } else if (cases.isEmpty()) {
      continue;
    } else if (line.startsWith("=== pipeline")) {
      cases.back().pipeline = line.mid(12).trimmed();
    } else if (line.startsWith("=== expect")) {
      section = &cases.back().expect;
    } else if (line.startsWith("=== error")) {
      section = &cases.back().error;
    } else if (line.startsWith("=== decisions")) {
      cases.back().hasDecisions = true;
      section = &cases.back().decisions;
    } else if (line.startsWith("=== reasons")) {
      cases.back().hasReasons = true;
      section = &cases.back().reasons;
    } else if (line.startsWith("=== notes")) {
      cases.back().hasNotes = true;
      section = &cases.back().notes;
    } else if (section) {
      *section += line + "\n";
    }
  }
  for (Case& c : cases) {
    for (QString* s : {&c.input, &c.expect, &c.error, &c.decisions, &c.notes, &c.reasons})
      *s = s->trimmed();
  }
  return cases;
}

QString decisionLines(const std::vector<FusionDecision>& ds) {
  QStringList lines;
  for (const auto& d : ds)
    lines << QString("%1 %2 %3 -> %4")
                 .arg(d.accepted ? "accepted" : "rejected", QString::fromStdString(d.ruleId()),
                      QString::fromStdString(d.producerOp), QString::fromStdString(d.consumerOp));
  return lines.join('\n');
}

QString reasonLines(const std::vector<FusionDecision>& ds) {
  QStringList lines;
  for (const auto& d : ds)
    lines << QString::fromStdString(d.reason + (d.hint.empty() ? "" : " | hint: " + d.hint));
  return lines.join('\n');
}

QString noteLines(const PipelineResult& r) {
  QStringList lines;
  for (const Snapshot& s : r.snapshots)
    for (const Diagnostic& d : s.record.diagnostics)
      if (d.severity == Severity::Note) lines << QString::fromStdString(d.str());
  return lines.join('\n');
}

void writeCases(const QString& path, const QList<Case>& cases) {
  QString out;
  for (const Case& c : cases) {
    out += "=== case " + c.name + "\n=== pipeline " + c.pipeline + "\n" + c.input + "\n";
    if (!c.error.isEmpty())
      out += "=== error\n" + c.error + "\n";
    else
      out += "=== expect\n" + c.expect + "\n";
    if (c.hasDecisions) out += "=== decisions\n" + c.decisions + "\n";
    if (c.hasNotes) out += "=== notes\n" + c.notes + "\n";
    if (c.hasReasons) out += "=== reasons\n" + c.reasons + "\n";
    out += "\n";
  }
  QFile f(path);
  if (f.open(QIODevice::WriteOnly | QIODevice::Truncate)) f.write(out.trimmed().toUtf8() + "\n");
}

// Same outputs before and after, on seeded random inputs. A pipeline that
// stores tensors in f16/bf16 on purpose (reduce-precision) changes them by a
// few roundings of bf16 at most: `tol` is that much then, 1e-6 otherwise.
QString meaningCheck(const Graph& before, const Graph& after, Tolerance tol) {
  std::map<std::string, TensorData> inputs;
  for (size_t i = 0; i < before.inputs().size(); ++i) {
    const Value& v = before.value(before.inputs()[i]);
    if (!v.type.isStatic()) return {};  // a symbolic dim: no data to run it on here
    auto t = randomTensor(v.type, 1000 + i);
    if (!t) return QString::fromStdString(t.message());
    inputs[v.name] = *t;
  }
  auto a = runEager(before, inputs);
  if (!a) return {};  // the input graph cannot run eagerly (opaque ops): nothing to compare
  auto b = runEager(after, inputs);
  if (!b) return "the graph after the pass does not run: " + QString::fromStdString(b.message());
  for (size_t i = 0; i < before.outputs().size(); ++i) {
    TensorMetrics m =
        compareTensors(*a->find(before.outputs()[i]), *b->find(after.outputs()[i]), tol);
    if (!m.withinTolerance()) return QString("output %1 changed: max abs %2").arg(i).arg(m.maxAbs);
  }
  for (ValueId v : after.valueIds()) {  // origins: each names an equal tensor of the input graph
    const TensorData* now = b->find(v);
    const TensorData* then = a->find(after.value(v).origin);
    if (!now || !then) continue;
    // Layouts undone on both sides: a blocked value compares with its plain origin.
    TensorMetrics m = compareTensors(*then, before.value(after.value(v).origin).layout, *now,
                                     after.value(v).layout, tol);
    if (!m.withinTolerance())
      return QString("value %1 differs from its origin %2: max abs %3")
          .arg(QString::fromStdString(after.value(v).name),
               QString::fromStdString(before.value(after.value(v).origin).name))
          .arg(m.maxAbs);
  }
  return {};
}

}  // namespace

class PassCasesTest : public QObject {
  Q_OBJECT
 private slots:
  void cases_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<int>("index");
    QDir dir(QString::fromStdString(fuselens::test::sourcePath("/tests/passes/cases")));
    for (const QString& f : dir.entryList({"*.txt"}, QDir::Files, QDir::Name)) {
      auto cases = readCases(dir.filePath(f));
      for (int i = 0; i < cases.size(); ++i)
        QTest::newRow(qPrintable(f + ":" + cases[i].name)) << dir.filePath(f) << i;
    }
  }

  void cases() {
    QFETCH(QString, file);
    QFETCH(int, index);
    QList<Case> all = readCases(file);
    Case c = all[index];
    auto input = parseGraph(c.input.toStdString());
    QVERIFY2(input.isOk(), input.message().c_str());
    auto specs = parsePipeline(c.pipeline.toStdString());
    Expected<PipelineResult> result =
        specs ? runPipeline(*input, *specs) : Expected<PipelineResult>(specs.status());
    bool update = qEnvironmentVariableIsSet("FUSELENS_UPDATE_EXPECTED");
    if (!c.error.isEmpty()) {
      QVERIFY2(!result.isOk(), "the pipeline succeeded but the case expects an error");
      QVERIFY2(QString::fromStdString(result.message()).contains(c.error),
               result.message().c_str());
      return;
    }
    QVERIFY2(result.isOk(), result.message().c_str());
    const Graph& out = result->snapshots.back().graph();
    QString actual = QString::fromStdString(printGraph(out)).trimmed();
    QString decisions = decisionLines(result->decisions);
    if (update) {
      all[index].expect = actual;
      if (c.hasDecisions) all[index].decisions = decisions;
      if (c.hasNotes) all[index].notes = noteLines(*result);
      if (c.hasReasons) all[index].reasons = reasonLines(result->decisions);
      writeCases(file, all);
    }
    QCOMPARE(actual, c.expect);
    if (c.hasDecisions) QCOMPARE(decisions, c.decisions);
    if (c.hasNotes) QCOMPARE(noteLines(*result), c.notes);
    if (c.hasReasons) QCOMPARE(reasonLines(result->decisions), c.reasons);
    const bool reduced = c.pipeline.contains("reduce-precision");
    QString meaning =
        meaningCheck(*input, out, reduced ? Tolerance{2e-2, 2e-2} : Tolerance{1e-6, 1e-6});
    QVERIFY2(meaning.isEmpty(), qPrintable(meaning));
  }
};

QTEST_APPLESS_MAIN(PassCasesTest)
#include "pass_cases_test.moc"
