#include "viewer/pass_diff_pane.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QSplitter>
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
                    : l.startsWith("< ") ? Kind::MovedOut
                    : l.startsWith("> ") ? Kind::MovedIn
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
    case Kind::MovedOut:
    case Kind::MovedIn:
      return QColor(210, 226, 250);
    case Kind::Same:
      break;
  }
  return {};
}

// A side-by-side row's colour on one side: the unified view's colours, so a
// removed, added, changed or moved line looks the same in both views.
QColor rowBackground(const DiffRow& r, bool left) {
  using R = DiffRow::Kind;
  if (r.moved) return background(Kind::MovedIn);
  switch (r.kind) {
    case R::Changed:
      return background(left ? Kind::ChangedOld : Kind::ChangedNew);
    case R::Removed:
      return left ? background(Kind::Removed) : QColor(240, 240, 240);
    case R::Added:
      return left ? QColor(240, 240, 240) : background(Kind::Added);
    case R::MovedOut:
      return left ? background(Kind::MovedOut) : QColor(240, 240, 240);
    case R::MovedIn:
      return left ? QColor(240, 240, 240) : background(Kind::MovedIn);
    case R::Folded:
      return background(Kind::Folded);
    case R::Same:
      break;
  }
  return {};
}

QString rowText(const DiffRow& r, bool left) {
  if (r.kind == DiffRow::Kind::Folded)
    return QStringLiteral("@@ %1 unchanged lines @@").arg(r.folded);
  const size_t n = left ? r.leftLine : r.rightLine;
  const std::string& text = left ? r.left : r.right;
  // A moved line's number on its empty side says where it went.
  if (text.empty() && n)
    return QStringLiteral("      (%1 line %2)").arg(left ? "from" : "to").arg(n);
  return QStringLiteral("%1 %2")
      .arg(n ? QString::number(n) : QString(), 5)
      .arg(QString::fromStdString(text));
}

QPlainTextEdit* codeView(QWidget* parent) {
  auto* e = new QPlainTextEdit(parent);
  e->setReadOnly(true);
  e->setLineWrapMode(QPlainTextEdit::NoWrap);
  e->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  return e;
}

void fill(QPlainTextEdit* view, const std::vector<DiffRow>& rows, bool left) {
  QStringList lines;
  lines.reserve(qsizetype(rows.size()));
  for (const DiffRow& r : rows) lines << rowText(r, left);
  view->setPlainText(lines.join('\n'));
  QList<QTextEdit::ExtraSelection> marks;
  QTextBlock block = view->document()->firstBlock();
  for (size_t i = 0; i < rows.size() && block.isValid(); ++i, block = block.next()) {
    const QColor c = rowBackground(rows[i], left);
    if (!c.isValid()) continue;
    QTextEdit::ExtraSelection sel;
    sel.cursor = QTextCursor(block);
    sel.format.setBackground(c);
    sel.format.setProperty(QTextFormat::FullWidthSelection, true);
    marks << sel;
  }
  view->setExtraSelections(marks);
}

}  // namespace

PassDiffPane::PassDiffPane(QWidget* parent)
    : QWidget(parent),
      a_(new QComboBox(this)),
      b_(new QComboBox(this)),
      summary_(new QLabel(this)),
      text_(codeView(this)),
      sideBySide_(new QCheckBox(tr("Side by side"), this)),
      split_(new QSplitter(Qt::Horizontal, this)),
      left_(codeView(split_)),
      right_(codeView(split_)) {
  a_->setObjectName("diffA");
  b_->setObjectName("diffB");
  a_->setToolTip(tr("A: the older snapshot"));
  b_->setToolTip(tr("B: the newer snapshot"));
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  sideBySide_->setObjectName("diffSideBySide");
  sideBySide_->setToolTip(tr("A and B in two columns, a node's old and new line on one row"));
  left_->setObjectName("diffLeft");
  right_->setObjectName("diffRight");
  split_->addWidget(left_);
  split_->addWidget(right_);
  split_->hide();
  // The columns scroll as one.
  for (auto [from, to] : {std::pair{left_, right_}, std::pair{right_, left_}}) {
    connect(from->verticalScrollBar(), &QScrollBar::valueChanged, to->verticalScrollBar(),
            &QScrollBar::setValue);
    connect(from->horizontalScrollBar(), &QScrollBar::valueChanged, to->horizontalScrollBar(),
            &QScrollBar::setValue);
  }
  connect(sideBySide_, &QCheckBox::toggled, this, &PassDiffPane::setSideBySide);
  text_->setPlaceholderText(tr("Select a pass to see what it changed."));
  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(tr("A:"), this));
  bar->addWidget(a_, 1);
  bar->addWidget(new QLabel(tr("B:"), this));
  bar->addWidget(b_, 1);
  bar->addWidget(sideBySide_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addLayout(bar);
  layout->addWidget(summary_);
  layout->addWidget(text_, 1);
  layout->addWidget(split_, 1);
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
bool PassDiffPane::sideBySide() const { return sideBySide_->isChecked(); }

void PassDiffPane::setSideBySide(bool on) {
  if (sideBySide_->isChecked() != on) {
    sideBySide_->setChecked(on);  // toggled calls back here
    return;
  }
  text_->setVisible(!on);
  split_->setVisible(on);
  refresh();
}

// In side-by-side rows a line of B stands on the right of an Added, MovedIn
// or Changed row, a line of A on the left of a Removed, MovedOut or Changed one.
int PassDiffPane::addedLines() const {
  if (sideBySide())
    return int(std::count_if(rows_.begin(), rows_.end(), [](const DiffRow& r) {
      return r.kind != DiffRow::Kind::Same && r.kind != DiffRow::Kind::Folded && !r.right.empty();
    }));
  return int(std::count_if(kinds_.begin(), kinds_.end(), [](Kind k) {
    return k == Kind::Added || k == Kind::ChangedNew || k == Kind::MovedIn;
  }));
}

int PassDiffPane::removedLines() const {
  if (sideBySide())
    return int(std::count_if(rows_.begin(), rows_.end(), [](const DiffRow& r) {
      return r.kind != DiffRow::Kind::Same && r.kind != DiffRow::Kind::Folded && !r.left.empty();
    }));
  return int(std::count_if(kinds_.begin(), kinds_.end(), [](Kind k) {
    return k == Kind::Removed || k == Kind::ChangedOld || k == Kind::MovedOut;
  }));
}

void PassDiffPane::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (stale_) refresh();
}

void PassDiffPane::refresh() {
  stale_ = !isVisible();
  if (stale_) return;
  kinds_.clear();
  rows_.clear();
  text_->setExtraSelections({});
  for (QPlainTextEdit* e : {left_, right_}) e->clear();
  const int a = snapshotA(), b = snapshotB();
  if (!session_ || a < 0 || b < 0) {
    text_->clear();
    summary_->clear();
    return;
  }
  const auto& snaps = session_->snapshots();
  const PassDiff d = diffPass(snaps[size_t(a)], snaps[size_t(b)]);
  summary_->setText(QString::fromStdString(d.summary()));
  if (sideBySide()) {
    showRows(d);
    return;
  }
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

void PassDiffPane::showRows(const PassDiff& d) {
  rows_ = fuselens::sideBySide(d.lines);
  text_->clear();
  fill(left_, rows_, true);
  fill(right_, rows_, false);
}

}  // namespace fuselens::viewer
