#include "viewer/tour.h"

#include <QFile>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QRegularExpression>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace fuselens::viewer {
namespace {

// "sample=a.onnx; shape=x=1x8x64" -> the chapter's fields (a value may hold '=').
void readTourLine(const QString& line, TourChapter& c) {
  for (const QString& item : line.split(';', Qt::SkipEmptyParts)) {
    const qsizetype eq = item.indexOf('=');
    if (eq < 0) continue;
    const QString key = item.left(eq).trimmed(), value = item.mid(eq + 1).trimmed();
    if (key == "sample") c.sample = value;
    if (key == "shape") c.shape = value;
    if (key == "pass") c.pass = value;
    if (key == "select") c.select = value;
    if (key == "view") c.view = value;
    if (key == "precision") c.precision = value;
  }
}

// The first paragraph after the tour line and the "What to look for" one.
QString panelText(const QStringList& paragraphs) {
  QStringList picked;
  for (const QString& p : paragraphs) {
    if (p.startsWith("<!--") || p.startsWith("![") || p.startsWith("```")) continue;
    if (picked.isEmpty() || p.startsWith("**What to look for")) picked << p;
  }
  return picked.join("\n\n");
}

}  // namespace

QList<TourChapter> parseTour(const QString& markdown) {
  static const QRegularExpression tourLine(R"(^<!--\s*tour:(.*)-->\s*$)");
  QList<TourChapter> chapters;
  TourChapter current;
  bool hasLine = false;
  QStringList paragraphs;
  QString para;
  auto endParagraph = [&] {
    if (!para.trimmed().isEmpty()) paragraphs << para.trimmed();
    para.clear();
  };
  auto endChapter = [&] {
    endParagraph();
    if (hasLine && !current.sample.isEmpty()) {
      current.text = panelText(paragraphs);
      chapters << current;
    }
    current = TourChapter{};
    hasLine = false;
    paragraphs.clear();
  };
  bool fenced = false;
  for (const QString& line : markdown.split('\n')) {
    if (line.startsWith("```")) fenced = !fenced;
    if (!fenced && line.startsWith("## ")) {
      endChapter();
      current.title = line.mid(3).trimmed();
      continue;
    }
    if (const auto m = tourLine.match(line); m.hasMatch() && !current.title.isEmpty()) {
      readTourLine(m.captured(1), current);
      hasLine = true;
      continue;
    }
    if (!fenced && line.trimmed().isEmpty())
      endParagraph();
    else
      para += line + "\n";
  }
  endChapter();
  return chapters;
}

QList<TourChapter> tourChapters() {
  QFile f(":/docs/tour.md");
  if (!f.open(QIODevice::ReadOnly)) return {};
  return parseTour(QString::fromUtf8(f.readAll()));
}

QString samplesDir() {
  const QByteArray env = qgetenv("FUSELENS_SAMPLES_DIR");
  return env.isEmpty() ? QStringLiteral(FUSELENS_SAMPLES_DIR) : QString::fromLocal8Bit(env);
}

TourPanel::TourPanel(QWidget* parent)
    : QWidget(parent),
      title_(new QLabel(this)),
      text_(new QTextBrowser(this)),
      prev_(new QPushButton(tr("< Previous"), this)),
      next_(new QPushButton(tr("Next >"), this)) {
  QFont bold = title_->font();
  bold.setBold(true);
  title_->setFont(bold);
  title_->setWordWrap(true);
  text_->setOpenExternalLinks(false);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(prev_);
  buttons->addStretch(1);
  buttons->addWidget(next_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(title_);
  layout->addWidget(text_, 1);
  layout->addLayout(buttons);
  connect(prev_, &QPushButton::clicked, this, [this] { emit chapterRequested(index_ - 1); });
  connect(next_, &QPushButton::clicked, this, [this] { emit chapterRequested(index_ + 1); });
}

void TourPanel::showChapter(int index, const TourChapter& chapter, int count) {
  index_ = index;
  title_->setText(chapter.title);
  text_->setMarkdown(chapter.text);
  prev_->setEnabled(index > 0);
  next_->setEnabled(index + 1 < count);
}

QString TourPanel::title() const { return title_->text(); }
QString TourPanel::text() const { return text_->toPlainText(); }

}  // namespace fuselens::viewer
