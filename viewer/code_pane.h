// The code dock: the generated code of the final graph in five tabs (loop IR,
// LLVM IR, assembly, CUDA C, PTX). The pane computes nothing: it asks for a tab's text
// (codeRequested) and the window produces it on its worker through
// Session::codeText, then hands it back with setCode. Selecting a node scrolls
// every tab to the kernel that runs it; Save writes the current tab to a file.
#pragma once

#include <QString>
#include <QWidget>
#include <array>

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
  void setCode(int tab, const QString& text, bool failed = false);
  // Asks for the current tab's text when it has none and none is on its way.
  void ensureCurrent();
  // Scrolls every filled tab to the first line naming `kernel` ("k3_fused_...").
  void showKernel(const QString& kernel);
  int currentTab() const;
  void setCurrentTab(int tab);
  QString text(int tab) const;
  bool hasCode(int tab) const { return filled_[size_t(tab)]; }
  // The file a Save of the tab suggests: "model.ll", "model.cu", ...
  static QString suggestedFileName(int tab, const QString& base);

 signals:
  void codeRequested(int tab);

 private:
  void save();

  QTabWidget* tabs_;
  std::array<QPlainTextEdit*, TabCount> edits_{};
  std::array<bool, TabCount> filled_{};
  std::array<bool, TabCount> requested_{};
  QLabel* status_;
  QPushButton* saveButton_;
  QString kernel_;
};

}  // namespace fuselens::viewer
