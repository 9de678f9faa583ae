// Pass diffs: the line diff rebuilds both texts and finds a minimal edit on
// small cases, stays bounded on unrelated texts, and the graph diff of a real
// pass agrees with the pass's own statistics (simplify's conv-bn-fold count is
// the BatchNorms removed, each named with the Conv that now holds it).
// tests/cli/cli_diff_test.cpp checks the CLI prints the same.
#include "session/pass_diff.h"

#include <QtTest>
#include <random>

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
