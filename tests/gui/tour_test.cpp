// Help > Tour, offscreen: the menu lists docs/tour.md's chapters (compiled
// in, so the two cannot drift), and each entry opens its sample at its pass,
// with its view forward, its op selected and its text in the tour panel.
#include "viewer/tour.h"

#include <QAction>
#include <QDockWidget>
#include <QFile>
#include <QGraphicsScene>
#include <QMenu>
#include <QStandardPaths>
#include <QTabWidget>
#include <QtTest>

#include "session/pipeline_choice.h"
#include "session/session.h"
#include "tests/support/test_paths.h"
#include "viewer/code_pane.h"
#include "viewer/graph_items.h"
#include "viewer/graph_view.h"
#include "viewer/main_window.h"
#include "viewer/pass_diff_pane.h"
#include "viewer/pass_list.h"
#include "viewer/precision_menu.h"

using namespace fuselens;
using namespace fuselens::viewer;

namespace {
constexpr int kTimeoutMs = 180000;

QString selectedOp(const GraphView* v) {
  for (QGraphicsItem* item : v->scene()->selectedItems())
    if (auto* n = qgraphicsitem_cast<NodeItem*>(item)) return n->name();
  return {};
}
}  // namespace

class TourTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void theMenuIsTheDocument() {
    QFile doc(QString::fromStdString(test::sourcePath("/docs/tour.md")));
    QVERIFY(doc.open(QIODevice::ReadOnly));
    const auto fromDoc = parseTour(QString::fromUtf8(doc.readAll()));
    const auto built = tourChapters();
    QCOMPARE(built.size(), fromDoc.size());
    QVERIFY(built.size() >= 6);
    MainWindow w;
    auto* menu = w.findChild<QMenu*>("tourMenu");
    QVERIFY(menu);
    QCOMPARE(menu->actions().size(), built.size());
    for (int i = 0; i < built.size(); ++i) {
      QCOMPARE(menu->actions()[i]->text(), fromDoc[i].title);
      QVERIFY2(QFile::exists(samplesDir() + "/" + built[i].sample), qPrintable(built[i].sample));
      QVERIFY(built[i].text.contains("What to look for"));
    }
  }

  void parsesTheTourLine() {
    const auto chapters = parseTour(
        "# T\n\n## 1. One\n\n<!-- tour: sample=a.onnx; shape=x=1x8; pass=dce; select=/n; "
        "view=diff; precision=f16 -->\n\nIntro text.\n\n```sh\n## not a heading\n```\n\n**What to "
        "look for.** "
        "This.\n\nMore.\n\n## 2. No tour line\n\nText.\n");
    QCOMPARE(chapters.size(), 1);
    const TourChapter& c = chapters[0];
    QCOMPARE(c.title, QString("1. One"));
    QCOMPARE(c.sample, QString("a.onnx"));
    QCOMPARE(c.shape, QString("x=1x8"));
    QCOMPARE(c.pass, QString("dce"));
    QCOMPARE(c.select, QString("/n"));
    QCOMPARE(c.view, QString("diff"));
    QCOMPARE(c.precision, QString("f16"));
    QCOMPARE(c.text, QString("Intro text.\n\n**What to look for.** This."));
  }

  void menuOpensEachChapter_data() {
    QTest::addColumn<int>("index");
    const auto chapters = tourChapters();
    for (int i = 0; i < chapters.size(); ++i) QTest::newRow(qPrintable(chapters[i].title)) << i;
  }

  void menuOpensEachChapter() {
    QFETCH(int, index);
    const TourChapter c = tourChapters()[index];
    MainWindow w;
    w.setModalErrors(false);
    QSignalSpy errors(&w, &MainWindow::errorShown);
    QSignalSpy shown(&w, &MainWindow::tourChapterShown);
    w.show();
    w.findChild<QMenu*>("tourMenu")->actions()[index]->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty() || !errors.isEmpty(), kTimeoutMs);
    QVERIFY2(errors.isEmpty(), qPrintable(errors.value(0).value(0).toString()));
    QCOMPARE(shown.first().first().toInt(), index);
    QVERIFY(w.tourDock()->isVisible());
    QCOMPARE(w.tourPanel()->title(), c.title);

    const auto& snaps = w.session()->snapshots();
    const int row = w.passList()->currentSnapshot();
    if (c.pass == "-1")
      QCOMPARE(row, int(snaps.size()) - 1);
    else
      QVERIFY2(QString::fromStdString(snaps[size_t(row)].label).startsWith(c.pass),
               snaps[size_t(row)].label.c_str());
    QTRY_COMPARE_WITH_TIMEOUT(selectedOp(w.graphView()), c.select, kTimeoutMs);
    if (c.view == "diff") {
      QCOMPARE(w.irTabs()->currentIndex(), 1);
      QVERIFY(!w.diffPane()->lineKinds().empty());
    }
    if (c.view == "code") {
      QVERIFY(w.codeDock()->isVisible());
      QVERIFY(w.codePane()->hasCode(CodePane::LoopIr));
      QVERIFY(w.codePane()->markedLines(CodePane::LoopIr).first >= 0);
    }
    if (c.view == "compare") QVERIFY(w.graphView()->isHeatVisible());
    const QString precision = c.precision.isEmpty() ? "f32" : c.precision;
    QCOMPARE(QString::fromStdString(precisionOf(w.session()->pipeline())), precision);
    auto* menu = w.findChild<QMenu*>("precisionMenu");
    QVERIFY(menu);
    QVERIFY(precisionItem(menu, precision)->isChecked());
  }
};

QTEST_MAIN(TourTest)
#include "tour_test.moc"
