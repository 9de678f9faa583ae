// The IR pane's Diff tab: the IR text of snapshot A against snapshot B, as the
// unified diff session/pass_diff computes for `fuselens-cli diff` (so both faces
// count the same lines). Added lines are green, removed red, and a removed run
// followed at once by an added run is a changed block (amber): the pass
// rewrote those lines in place. A line the pass moved (a node taken into a
// fused group's body, found by its origin) is blue where it was ("< ") and
// where it went ("> "). "Side by side" shows A and B in two columns that
// scroll together, a node's old and new line on one row (session/diff_align).
// Selecting a pass in the timeline shows it
// against the step before; the A and B boxes compare any two snapshots, and
// the window then shows B in the graph, diffed against A (pairPicked).
#pragma once

#include <QWidget>
#include <vector>

#include "session/diff_align.h"

class QCheckBox;
class QComboBox;
class QSplitter;
class QLabel;
class QPlainTextEdit;

namespace fuselens {
class Session;
}

namespace fuselens::viewer {

class PassDiffPane : public QWidget {
  Q_OBJECT

 public:
  // How a shown line differs: Changed lines are Removed/Added lines that stand
  // in a removed run followed at once by an added run.
  enum class LineKind { Same, Added, Removed, ChangedOld, ChangedNew, Folded, MovedOut, MovedIn };

  explicit PassDiffPane(QWidget* parent = nullptr);
  // Fills the A/B boxes from `session`'s snapshots; nullptr detaches (the
  // worker is rewriting them) and clears the text.
  void setSession(const Session* session);
  // The pass that made snapshot `row`: A = row - 1, B = row (row 0: both 0).
  void showPass(int row);
  void showPair(int a, int b);
  int snapshotA() const;
  int snapshotB() const;

  QPlainTextEdit* textView() const { return text_; }
  // The side-by-side columns, and the rows they show (empty when unified).
  void setSideBySide(bool on);
  bool sideBySide() const;
  QPlainTextEdit* leftView() const { return left_; }
  QPlainTextEdit* rightView() const { return right_; }
  const std::vector<DiffRow>& rows() const { return rows_; }
  QComboBox* boxA() const { return a_; }
  QComboBox* boxB() const { return b_; }
  QString summary() const;
  const std::vector<LineKind>& lineKinds() const { return kinds_; }
  // Lines of the shown diff that the newer snapshot added (Added + ChangedNew
  // + MovedIn) and the older one had (Removed + ChangedOld + MovedOut).
  int addedLines() const;
  int removedLines() const;

 signals:
  // The user picked snapshots A and B in the boxes (not showPass/showPair).
  void pairPicked(int a, int b);

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  // Diffs only while shown: printing and diffing two large graphs on every
  // timeline step would slow stepping for a tab nobody looks at.
  void refresh();
  void showRows(const PassDiff& d);
  bool stale_ = false;

  const Session* session_ = nullptr;
  QComboBox* a_;
  QComboBox* b_;
  QLabel* summary_;
  QPlainTextEdit* text_;
  QCheckBox* sideBySide_;
  QSplitter* split_;
  QPlainTextEdit* left_;
  QPlainTextEdit* right_;
  std::vector<LineKind> kinds_;
  std::vector<DiffRow> rows_;
};

}  // namespace fuselens::viewer
