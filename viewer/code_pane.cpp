#include "viewer/code_pane.h"

#include <QFileDialog>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScopedValueRollback>
#include <QTabWidget>
#include <QTextBlock>
#include <QTextDocument>
#include <QVBoxLayout>

#include "core/support/atomic_file.h"

namespace fuselens::viewer {

CodePane::CodePane(QWidget* parent)
    : QWidget(parent),
      tabs_(new QTabWidget(this)),
      status_(new QLabel(this)),
      saveButton_(new QPushButton(tr("Save..."), this)) {
  const QString names[TabCount] = {tr("Loop IR"), tr("LLVM IR"), tr("Assembly"), tr("CUDA C"),
                                   tr("PTX")};
  for (int t = 0; t < TabCount; ++t) {
    auto* e = new QPlainTextEdit(this);
    e->setReadOnly(true);
    e->setLineWrapMode(QPlainTextEdit::NoWrap);
    e->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    e->setPlaceholderText(tr("Run the pipeline to generate code."));
    edits_[size_t(t)] = e;
    marked_[size_t(t)] = {-1, -1};
    tabs_->addTab(e, names[t]);
    connect(e, &QPlainTextEdit::cursorPositionChanged, this, [this, t, e] {
      if (!moving_) pickLine(t, e->textCursor().blockNumber());
    });
  }
  saveButton_->setObjectName("codeSaveButton");
  saveButton_->setToolTip(tr("Write the current tab to a file"));
  auto* bar = new QHBoxLayout;
  bar->addWidget(status_, 1);
  bar->addWidget(saveButton_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(bar);
  layout->addWidget(tabs_);
  connect(tabs_, &QTabWidget::currentChanged, this, [this] { ensureCurrent(); });
  connect(saveButton_, &QPushButton::clicked, this, &CodePane::save);
}

void CodePane::invalidate() {
  for (int t = 0; t < TabCount; ++t) {
    filled_[size_t(t)] = requested_[size_t(t)] = false;
    spans_[size_t(t)].clear();
    marked_[size_t(t)] = {-1, -1};
    const QScopedValueRollback<bool> quiet(moving_, true);
    edits_[size_t(t)]->clear();
  }
  status_->clear();
  if (isVisible()) ensureCurrent();
}

void CodePane::ensureCurrent() {
  const int t = tabs_->currentIndex();
  if (t < 0 || filled_[size_t(t)] || requested_[size_t(t)]) return;
  requested_[size_t(t)] = true;
  status_->setText(tr("generating..."));
  emit codeRequested(t);
}

void CodePane::setCode(int tab, const QString& text, bool failed, std::vector<CodeSpan> spans) {
  if (tab < 0 || tab >= TabCount) return;
  requested_[size_t(tab)] = false;
  filled_[size_t(tab)] = !failed;
  spans_[size_t(tab)] = std::move(spans);
  marked_[size_t(tab)] = {-1, -1};
  QPlainTextEdit* e = edits_[size_t(tab)];
  const QScopedValueRollback<bool> quiet(moving_, true);
  if (failed) {
    e->clear();
    e->setPlaceholderText(text);
  } else {
    e->setPlainText(text);
  }
  status_->setText(failed ? tr("not available") : tr("%1 lines").arg(e->blockCount()));
  if (!kernel_.isEmpty()) showKernel(kernel_);
}

void CodePane::showKernel(const QString& kernel) {
  kernel_ = kernel;
  if (kernel.isEmpty()) return;
  const QScopedValueRollback<bool> quiet(moving_, true);
  for (int t = 0; t < TabCount; ++t) {
    QPlainTextEdit* e = edits_[size_t(t)];
    int first = -1, last = -1;
    for (const CodeSpan& s : spans_[size_t(t)])
      if (QString::fromStdString(s.kernel) == kernel) {
        first = s.firstLine;
        last = s.lastLine;
      }
    if (first < 0) {
      const QTextCursor found = e->document()->find(kernel);
      if (found.isNull()) continue;
      first = last = found.blockNumber();
    }
    marked_[size_t(t)] = {first, last};
    QList<QTextEdit::ExtraSelection> marks;
    for (QTextBlock b = e->document()->findBlockByNumber(first);
         b.isValid() && b.blockNumber() <= last; b = b.next()) {
      QTextEdit::ExtraSelection sel;
      sel.cursor = QTextCursor(b);
      sel.format.setBackground(QColor(255, 246, 204));
      sel.format.setProperty(QTextFormat::FullWidthSelection, true);
      marks << sel;
    }
    e->setExtraSelections(marks);
    // The kernel's last line first, then its first: the whole span shows when it fits.
    e->setTextCursor(QTextCursor(e->document()->findBlockByNumber(last)));
    e->ensureCursorVisible();
    e->setTextCursor(QTextCursor(e->document()->findBlockByNumber(first)));
    e->ensureCursorVisible();
  }
}

QPair<int, int> CodePane::markedLines(int tab) const { return marked_[size_t(tab)]; }

bool CodePane::pickLine(int tab, int line) {
  for (const CodeSpan& s : spans_[size_t(tab)]) {
    if (line < s.firstLine || line > s.lastLine) continue;
    QStringList ops;
    for (const std::string& op : s.ops) ops << QString::fromStdString(op);
    emit originsPicked(ops, QString::fromStdString(s.kernel));
    return true;
  }
  return false;
}

int CodePane::currentTab() const { return tabs_->currentIndex(); }
void CodePane::setCurrentTab(int tab) { tabs_->setCurrentIndex(tab); }
QString CodePane::text(int tab) const { return edits_[size_t(tab)]->toPlainText(); }

QString CodePane::suggestedFileName(int tab, const QString& base) {
  static const char* ext[TabCount] = {".loops.txt", ".ll", ".s", ".cu", ".ptx"};
  return base + ext[tab];
}

void CodePane::save() {
  const int t = currentTab();
  if (t < 0 || !filled_[size_t(t)]) return;
  const QString file =
      QFileDialog::getSaveFileName(this, tr("Save code"), suggestedFileName(t, "model"));
  if (file.isEmpty()) return;
  if (Status s = writeFileAtomically(file.toStdString(), text(t).toStdString()); !s)
    QMessageBox::warning(this, tr("Save code"),
                         tr("Could not save: %1").arg(QString::fromStdString(s.message())));
}

}  // namespace fuselens::viewer
