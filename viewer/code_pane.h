// The code dock: the generated code of the final graph in five tabs (loop IR,
// LLVM IR, assembly, CUDA C, PTX). The pane computes nothing: it asks for a tab's text
// (codeRequested) and the window produces it on its worker through
// Session::annotatedCode, then hands it back with setCode and the kernels' line
// spans (session/provenance.h). Selecting a node scrolls every tab to the
// kernel that runs it and marks its lines; clicking a line of a kernel emits
// the ops it came from (originsPicked). Save writes the current tab to a file.
#pragma once

#include <QPair>
#include <QString>
#include <QStringList>
#include <QWidget>
#include <array>
#include <vector>

#include "session/provenance.h"

class QLabel;
class QPlainTextEdit;
class QPushButton;
class QTabWidget;

namespace fuselens::viewer {

class CodePane : public QWidget {
  Q_OBJECT
 public:
  enum Tab { LoopIr, LlvmIr, Asm, CudaC, Ptx, TabCount };

  explicit CodePane(QWidget* parent = nullptr);
  // Drops every tab's text (a new compile is coming); the current tab asks again.
  void invalidate();
  void setCode(int tab, const QString& text, bool failed = false, std::vector<CodeSpan> spans = {});
  // Asks for the current tab's text when it has none and none is on its way.
  void ensureCurrent();
  // Scrolls every filled tab to `kernel` ("k3_fused_...") and marks its lines
  // (its span, or the first line naming it where the tab has no spans).
  void showKernel(const QString& kernel);
  // The lines marked in `tab` (first, last; -1, -1 when none).
  QPair<int, int> markedLines(int tab) const;
  // What a click on `line` of `tab` does: emits originsPicked for the kernel
  // whose span holds it; false outside every kernel.
  bool pickLine(int tab, int line);
  const std::vector<CodeSpan>& spans(int tab) const { return spans_[size_t(tab)]; }
  int currentTab() const;
  void setCurrentTab(int tab);
  QString text(int tab) const;
  bool hasCode(int tab) const { return filled_[size_t(tab)]; }
  // The file a Save of the tab suggests: "model.ll", "model.cu", ...
  static QString suggestedFileName(int tab, const QString& base);

 signals:
  void codeRequested(int tab);
  // A line of `kernel` was clicked: `ops` are the optimized graph's ops it runs.
  void originsPicked(const QStringList& ops, const QString& kernel);

 private:
  void save();

  QTabWidget* tabs_;
  std::array<QPlainTextEdit*, TabCount> edits_{};
  std::array<bool, TabCount> filled_{};
  std::array<bool, TabCount> requested_{};
  std::array<std::vector<CodeSpan>, TabCount> spans_;
  std::array<QPair<int, int>, TabCount> marked_{};
  bool moving_ = false;  // the pane moves a cursor itself: not a user's click
  QLabel* status_;
  QPushButton* saveButton_;
  QString kernel_;
};

}  // namespace fuselens::viewer
