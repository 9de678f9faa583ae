#include "viewer/code_pane.h"

#include <QFileDialog>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTabWidget>
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
    tabs_->addTab(e, names[t]);
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

void CodePane::setCode(int tab, const QString& text, bool failed) {
  if (tab < 0 || tab >= TabCount) return;
  requested_[size_t(tab)] = false;
  filled_[size_t(tab)] = !failed;
  QPlainTextEdit* e = edits_[size_t(tab)];
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
  for (QPlainTextEdit* e : edits_) {
    QTextCursor found = e->document()->find(kernel);
    if (found.isNull()) continue;
    e->setTextCursor(found);
    e->centerCursor();
  }
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
