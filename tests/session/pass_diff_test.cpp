// Pass diffs: the line diff rebuilds both texts and finds a minimal edit on
// small cases, stays bounded on unrelated texts, and the graph diff of a real
// pass agrees with the pass's own statistics (simplify's conv-bn-fold count is
// the BatchNorms removed, each named with the Conv that now holds it).
// tests/cli/cli_diff_test.cpp checks the CLI prints the same.
#include "session/pass_diff.h"

#include <QtTest>
#include <random>

#include "session/diff_align.h"
#include "session/pipeline_choice.h"
#include "session/session.h"
#include "tests/support/test_paths.h"

using namespace fuselens;

namespace {

std::string join(const std::vector<DiffLine>& lines, DiffLine::Kind skip) {
  std::string s;
  for (const DiffLine& l : lines)
    if (l.kind != skip) s += l.text + "\n";
  return s;
}

size_t edits(const std::vector<DiffLine>& lines) {
  size_t n = 0;
  for (const DiffLine& l : lines) n += l.kind != DiffLine::Kind::Same;
  return n;
}

}  // namespace

class PassDiffTest : public QObject {
  Q_OBJECT

 private slots:
  void smallDiffIsMinimal() {
    auto d = diffLines("a\nb\nc\n", "a\nx\nc\n");
    QCOMPARE(d.size(), size_t(4));
    QCOMPARE(int(d[1].kind), int(DiffLine::Kind::Removed));
    QCOMPARE(d[1].text, std::string("b"));
    QCOMPARE(int(d[2].kind), int(DiffLine::Kind::Added));
    QCOMPARE(edits(diffLines("x\ny\n", "x\ny\n")), size_t(0));
    QCOMPARE(edits(diffLines("", "a\nb\n")), size_t(2));
    QCOMPARE(edits(diffLines("a\nb\nc\nd\n", "b\nc\nd\ne\n")), size_t(2));
  }

  // Random texts over a small alphabet: the script always rebuilds both sides.
  void scriptRebuildsBothTexts() {
    std::mt19937 rng(7);
    for (int round = 0; round < 200; ++round) {
      std::string a, b;
      for (int i = int(rng() % 30); i > 0; --i) a += std::string(1, char('a' + rng() % 4)) + "\n";
      for (int i = int(rng() % 30); i > 0; --i) b += std::string(1, char('a' + rng() % 4)) + "\n";
      auto d = diffLines(a, b);
      QCOMPARE(join(d, DiffLine::Kind::Added), a);
      QCOMPARE(join(d, DiffLine::Kind::Removed), b);
    }
  }

  void unrelatedTextsStayBounded() {
    std::string a, b;
    for (int i = 0; i < 3000; ++i)
      a += "a" + std::to_string(i) + "\n", b += "b" + std::to_string(i) + "\n";
    auto d = diffLines(a, b, 100);  // past the edit limit: removed, then added
    QCOMPARE(edits(d), size_t(6000));
    QCOMPARE(join(d, DiffLine::Kind::Added), a);
    QCOMPARE(join(d, DiffLine::Kind::Removed), b);
  }

  void simplifyDiffMatchesItsStatistics() {
    Session s;
    QVERIFY(s.open(test::sourcePath("/samples/resnet_bottleneck.onnx")).isOk());
    QVERIFY(s.optimize(defaultPipelineText()).isOk());
    auto i = findSnapshot(s.snapshots(), "simplify");
    QVERIFY(i.isOk());
    const Snapshot& snap = s.snapshots()[*i];
    PassDiff d = diffPass(s.snapshots()[*i - 1], snap);
    QCOMPARE(int64_t(d.removed.size()), snap.record.stats.at("conv-bn-fold"));
    for (const NodeChange& c : d.removed) {
      QCOMPARE(c.op, std::string("BatchNormalization"));
      QVERIFY2(c.into.find("/conv/Conv") != std::string::npos, c.into.c_str());
    }
    QCOMPARE(d.changed.size(), size_t(3));  // each Conv takes the folded weights
    QVERIFY(d.added.empty());
    QCOMPARE(d.summary().substr(0, 16), std::string("cse -> simplify:"));
  }

  void originsNameTheLine() {
    QCOMPARE(lineOrigin(R"(  %"/a/Relu_output_0" = Relu(%x) : f32[2] loc("/a/Relu"))"),
             std::string("/a/Relu"));
    QCOMPARE(lineOrigin("    %w = Constant : f32[2] dense<...>"), std::string("%w"));
    QCOMPARE(lineOrigin("  return %y"), std::string());
    QCOMPARE(lineOrigin("}"), std::string());
  }

  // A node moved into a group's body (more indentation) pairs as moved; one
  // rewritten in place pairs by origin as changed; lines no node owns stay
  // unpaired.
  void movesPairByTextThenOrigin() {
    auto d = diffLines("%a = A() loc(\"a\")\n%b = B() loc(\"b\")\n%c = C(%b) loc(\"c\")\n",
                       "%b = B2() loc(\"b\")\n%g = G() {\n  %a = A() loc(\"a\")\n}\n"
                       "%c = C(%b) loc(\"c\")\n");
    QCOMPARE(markMoves(d), size_t(1));
    size_t moved = 0, changed = 0, lone = 0;
    for (size_t i = 0; i < d.size(); ++i) {
      if (d[i].kind == DiffLine::Kind::Same) continue;
      if (d[i].partner < 0) {
        ++lone;
        continue;
      }
      QCOMPARE(size_t(d[size_t(d[i].partner)].partner), i);  // pairs are mutual
      (d[i].moved ? moved : changed) += 1;
    }
    QCOMPARE(moved, size_t(2));    // %a, both sides
    QCOMPARE(changed, size_t(2));  // %b, both sides
    QCOMPARE(lone, size_t(2));     // %g's header and closing brace
  }

  // Side-by-side rows hold every line of A on the left and of B on the
  // right, in order, whatever pairs they make.
  void sideBySideRebuildsBothTexts() {
    std::mt19937 rng(11);
    for (int round = 0; round < 200; ++round) {
      auto text = [&] {
        std::string t;
        for (int i = int(rng() % 25); i > 0; --i) {
          const char v = char('a' + rng() % 5);
          t += rng() % 3 ? "%" + std::string(1, v) + " = Op" + std::to_string(rng() % 2) + "()"
                         : std::string(rng() % 3, ' ') + "%" + std::string(1, v) + " = Op0()";
          t += "\n";
        }
        return t;
      };
      std::string a = text(), b = text();
      auto lines = diffLines(a, b);
      markMoves(lines);
      std::string left, right;
      for (const DiffRow& r : sideBySide(lines, 1000)) {
        QVERIFY(r.kind != DiffRow::Kind::Folded);
        if (r.kind != DiffRow::Kind::Added && r.kind != DiffRow::Kind::MovedIn)
          left += r.left + "\n";
        if (r.kind != DiffRow::Kind::Removed && r.kind != DiffRow::Kind::MovedOut)
          right += r.right + "\n";
      }
      QCOMPARE(left, a);
      QCOMPARE(right, b);
    }
  }

  // fuse-ops takes nodes into fused groups' bodies: the diff says moved, and
  // every moved pair is the same line indented anew.
  void fuseOpsMovesNodesIntoGroups() {
    Session s;
    QVERIFY(s.open(test::sourcePath("/samples/bert_layer.onnx")).isOk());
    QVERIFY(s.optimize(defaultPipelineText()).isOk());
    auto i = findSnapshot(s.snapshots(), "fuse-ops");
    QVERIFY(i.isOk());
    PassDiff d = diffPass(s.snapshots()[*i - 1], s.snapshots()[*i]);
    QVERIFY(d.movedLines >= d.removed.size() - 2);  // Fused lines re-nest, the rest move
    size_t pairs = 0;
    for (const DiffLine& l : d.lines)
      if (l.moved && l.kind == DiffLine::Kind::Added) {
        const std::string& from = d.lines[size_t(l.partner)].text;
        QCOMPARE(from.substr(from.find_first_not_of(' ')),
                 l.text.substr(l.text.find_first_not_of(' ')));
        ++pairs;
      }
    QCOMPARE(pairs, d.movedLines);
    QVERIFY(d.summary().find("(" + std::to_string(d.movedLines) + " moved)") != std::string::npos);
    const std::string text = sideBySideText(sideBySide(d.lines), 60);
    QVERIFY(text.find("m> ") != std::string::npos);
  }

  void snapshotsByNameOrNumber() {
    Session s;
    QVERIFY(s.open(test::sourcePath("/samples/mlp.onnx")).isOk());
    QVERIFY(s.optimize(defaultPipelineText()).isOk());
    auto f = findSnapshot(s.snapshots(), "fuse-ops");
    QVERIFY(f.isOk());
    QVERIFY(s.snapshots()[*f].label.rfind("fuse-ops{", 0) == 0);
    QCOMPARE(*findSnapshot(s.snapshots(), "0"), size_t(0));
    auto bad = findSnapshot(s.snapshots(), "no-such-pass");
    QVERIFY(!bad.isOk());
    QVERIFY(bad.message().find("0 import") != std::string::npos);
  }
};

QTEST_GUILESS_MAIN(PassDiffTest)
#include "pass_diff_test.moc"
