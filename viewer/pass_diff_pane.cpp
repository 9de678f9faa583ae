#include "viewer/pass_diff_pane.h"

#include <QComboBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QTextBlock>
#include <QVBoxLayout>
#include <algorithm>

#include "session/pass_diff.h"
#include "session/session.h"

namespace fuselens::viewer {
namespace {

using Kind = PassDiffPane::LineKind;

// The unified text's prefixes ("+ ", "- ", "  ", "@@ N unchanged lines @@"),
// with removed-then-added runs marked as changed pairs.
std::vector<Kind> classify(const QStringList& lines) {
  std::vector<Kind> kinds;
  kinds.reserve(size_t(lines.size()));
  for (const QString& l : lines)
    kinds.push_back(l.startsWith("+ ")   ? Kind::Added
                    : l.startsWith("- ") ? Kind::Removed
                    : l.startsWith("@@") ? Kind::Folded
                                         : Kind::Same);
  for (size_t i = 0; i < kinds.size();) {
    if (kinds[i] != Kind::Removed) {
      ++i;
      continue;
    }
    size_t r = i;
    while (r < kinds.size() && kinds[r] == Kind::Removed) ++r;
    size_t a = r;
    while (a < kinds.size() && kinds[a] == Kind::Added) ++a;
    if (a > r) {
      std::fill(kinds.begin() + long(i), kinds.begin() + long(r), Kind::ChangedOld);
      std::fill(kinds.begin() + long(r), kinds.begin() + long(a), Kind::ChangedNew);
    }
    i = a;
  }
  return kinds;
}

QColor background(Kind k) {
  switch (k) {
    case Kind::Added:
      return QColor(210, 245, 210);
    case Kind::Removed:
      return QColor(250, 212, 212);
    case Kind::ChangedOld:
      return QColor(250, 226, 190);
    case Kind::ChangedNew:
      return QColor(255, 243, 196);
    case Kind::Folded:
      return QColor(232, 236, 244);
    case Kind::Same:
      break;
  }
  return {};
}

}  // namespace

PassDiffPane::PassDiffPane(QWidget* parent)
    : QWidget(parent),
      a_(new QComboBox(this)),
      b_(new QComboBox(this)),
      summary_(new QLabel(this)),
      text_(new QPlainTextEdit(this)) {
  a_->setObjectName("diffA");
  b_->setObjectName("diffB");
  a_->setToolTip(tr("A: the older snapshot"));
  b_->setToolTip(tr("B: the newer snapshot"));
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  text_->setReadOnly(true);
  text_->setLineWrapMode(QPlainTextEdit::NoWrap);
  text_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  text_->setPlaceholderText(tr("Select a pass to see what it changed."));
  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(tr("A:"), this));
  bar->addWidget(a_, 1);
  bar->addWidget(new QLabel(tr("B:"), this));
  bar->addWidget(b_, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addLayout(bar);
  layout->addWidget(summary_);
  layout->addWidget(text_, 1);
  for (QComboBox* box : {a_, b_}) {
    connect(box, &QComboBox::currentIndexChanged, this, &PassDiffPane::refresh);
    connect(box, &QComboBox::activated, this,
            [this] { emit pairPicked(snapshotA(), snapshotB()); });
  }
}

void PassDiffPane::setSession(const Session* session) {
  session_ = nullptr;  // no refresh while the boxes refill
  for (QComboBox* box : {a_, b_}) box->clear();
  if (session) {
    const auto& snaps = session->snapshots();
    for (size_t i = 0; i < snaps.size(); ++i)
      for (QComboBox* box : {a_, b_})
        box->addItem(QStringLiteral("%1 %2").arg(i).arg(QString::fromStdString(snaps[i].label)));
  }
  session_ = session;
  refresh();
}

void PassDiffPane::showPass(int row) { showPair(std::max(row - 1, 0), row); }

void PassDiffPane::showPair(int a, int b) {
  const QSignalBlocker block(a_);  // one refresh for both boxes
  a_->setCurrentIndex(a);
  b_->setCurrentIndex(b);
  refresh();
}

int PassDiffPane::snapshotA() const { return a_->currentIndex(); }
int PassDiffPane::snapshotB() const { return b_->currentIndex(); }
QString PassDiffPane::summary() const { return summary_->text(); }

int PassDiffPane::addedLines() const {
  return int(std::count_if(kinds_.begin(), kinds_.end(),
                           [](Kind k) { return k == Kind::Added || k == Kind::ChangedNew; }));
}

int PassDiffPane::removedLines() const {
  return int(std::count_if(kinds_.begin(), kinds_.end(),
                           [](Kind k) { return k == Kind::Removed || k == Kind::ChangedOld; }));
}

void PassDiffPane::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (stale_) refresh();
}

void PassDiffPane::refresh() {
  stale_ = !isVisible();
  if (stale_) return;
  kinds_.clear();
  text_->setExtraSelections({});
  const int a = snapshotA(), b = snapshotB();
  if (!session_ || a < 0 || b < 0) {
    text_->clear();
    summary_->clear();
    return;
  }
  const auto& snaps = session_->snapshots();
  const PassDiff d = diffPass(snaps[size_t(a)], snaps[size_t(b)]);
  summary_->setText(QString::fromStdString(d.summary()));
  QString unified = QString::fromStdString(d.unifiedText());
  if (unified.endsWith('\n')) unified.chop(1);
  if (unified.isEmpty()) {
    text_->clear();
    return;
  }
  const QStringList lines = unified.split('\n');
  kinds_ = classify(lines);
  text_->setPlainText(unified);
  QList<QTextEdit::ExtraSelection> marks;
  QTextBlock block = text_->document()->firstBlock();
  for (size_t i = 0; i < kinds_.size() && block.isValid(); ++i, block = block.next()) {
    if (kinds_[i] == Kind::Same) continue;
    QTextEdit::ExtraSelection sel;
    sel.cursor = QTextCursor(block);
    sel.format.setBackground(background(kinds_[i]));
    sel.format.setProperty(QTextFormat::FullWidthSelection, true);
    marks << sel;
  }
  text_->setExtraSelections(marks);
}

}  // namespace fuselens::viewer
