// Provenance in the GUI, both ways, on samples/mlp.onnx: selecting a node of
// the final graph marks its kernel's lines in the code dock (the span
// session/provenance.h found, its `// from:` line first), and clicking a line
// of a kernel rings the ops it came from in the graph.
#include <QDockWidget>
#include <QStandardPaths>
#include <QtTest>

#include "session/session.h"
#include "tests/gui/main_window_util.h"
#include "tests/support/test_paths.h"
#include "viewer/code_pane.h"
#include "viewer/graph_items.h"
#include "viewer/graph_view.h"
#include "viewer/main_window.h"

using namespace fuselens;
using namespace fuselens::viewer;

namespace {
constexpr int kTimeoutMs = fuselens::test::kWindowTimeoutMs;
using fuselens::test::settled;

QStringList ringed(const GraphView* v) {
  QStringList names;
  for (NodeItem* n : v->nodeItems())
    if (n->isHighlighted()) names << n->name();
  names.sort();
  return names;
}
}  // namespace

class CodeProvenanceTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void nodeToLinesAndBack() {
    MainWindow w;
    w.setModalErrors(false);
    w.show();
    w.openFile(QString::fromStdString(test::sourcePath("/samples/mlp.onnx")));
    QTRY_VERIFY_WITH_TIMEOUT(settled(w) && w.session() && w.session()->lastReport(), kTimeoutMs);
    CodePane* pane = w.codePane();
    w.codeDock()->show();
    QTRY_VERIFY_WITH_TIMEOUT(pane->hasCode(CodePane::LoopIr) && settled(w), kTimeoutMs);
    const auto& spans = pane->spans(CodePane::LoopIr);
    QCOMPARE(spans.size(), w.session()->compiled()->kernels().size());
    const QStringList lines = pane->text(CodePane::LoopIr).split('\n');
    for (const CodeSpan& s : spans)
      QVERIFY2(lines[s.firstLine].startsWith("// from: "), qPrintable(lines[s.firstLine]));

    // Node -> lines: select the op that the second kernel runs.
    const CodeSpan& second = spans[1];
    NodeItem* item = w.graphView()->nodeNamed(QString::fromStdString(second.ops.front()));
    QVERIFY2(item, second.ops.front().c_str());
    w.graphView()->selectAndCenter(item);
    QCOMPARE(pane->markedLines(CodePane::LoopIr), qMakePair(second.firstLine, second.lastLine));

    // Line -> nodes: a line inside the first kernel's loop nest.
    const CodeSpan& first = spans[0];
    QSignalSpy picked(pane, &CodePane::originsPicked);
    QVERIFY(pane->pickLine(CodePane::LoopIr, first.firstLine + 3));
    QCOMPARE(picked.size(), 1);
    QStringList expected;
    for (const std::string& op : first.ops) expected << QString::fromStdString(op);
    expected.sort();
    QTRY_COMPARE_WITH_TIMEOUT(ringed(w.graphView()), expected, kTimeoutMs);
    QVERIFY(!pane->pickLine(CodePane::LoopIr, first.lastLine + 1));  // between kernels
  }
};

QTEST_MAIN(CodeProvenanceTest)
#include "code_provenance_test.moc"
