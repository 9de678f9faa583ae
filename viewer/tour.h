// The guided tour (Help > Tour): its chapters are read from docs/tour.md,
// compiled into the app as a resource, so the document and the menu cannot
// drift. Each chapter of the document opens with a line
//   <!-- tour: sample=resnet_bottleneck.onnx; pass=layout; select=NAME; view=diff -->
// saying which bundled sample to open (and `shape=x=1x8x64` for dynamic dims),
// which pass to show, which op to select and which view to bring forward
// (graph, diff, code, inspector, compare). The panel shows the chapter's first
// paragraph and its "What to look for" paragraph.
#pragma once

#include <QList>
#include <QString>
#include <QWidget>

class QLabel;
class QPushButton;
class QTextBrowser;

namespace fuselens::viewer {

struct TourChapter {
  QString title;   // "3. Layout: NCHW to NCHWc"
  QString sample;  // a file of samples/
  QString shape;   // the input shapes box ("x=1x8x64"), or empty
  QString pass;    // a snapshot as fuselens-cli diff names it ("layout", "import", "-1": the last)
  QString select;  // an op name
  QString view;    // graph | diff | side (the diff side by side) | code | inspector | compare
  QString precision;  // Pipeline > Precision for the chapter ("f16"), or empty: f32
  QString text;       // markdown for the panel
};

// Chapters of a tour document; a chapter heading without its tour line is skipped.
QList<TourChapter> parseTour(const QString& markdown);
// The chapters of the bundled docs/tour.md.
QList<TourChapter> tourChapters();
// Where the bundled samples are: $FUSELENS_SAMPLES_DIR, else the checkout's samples/.
QString samplesDir();

class TourPanel : public QWidget {
  Q_OBJECT

 public:
  explicit TourPanel(QWidget* parent = nullptr);
  void showChapter(int index, const TourChapter& chapter, int count);
  QString title() const;
  QString text() const;

 signals:
  void chapterRequested(int index);

 private:
  int index_ = -1;
  QLabel* title_;
  QTextBrowser* text_;
  QPushButton* prev_;
  QPushButton* next_;
};

}  // namespace fuselens::viewer
