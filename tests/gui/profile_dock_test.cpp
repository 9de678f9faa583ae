// The profile dock on samples/mlp.onnx: Profile runs Session::profile on the
// worker, the table holds one row per kernel sorted slowest first, its header
// is the CLI's (ProfileReport::header), picking a row selects the node the
// kernel runs, the graph view takes the kernel times (collapsed scopes badge
// their sum, drawn ops and clusters show their own), and a new pipeline
// clears the stale profile.
#include <QDockWidget>
#include <QPushButton>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTableWidget>
#include <QtTest>

#include "session/session.h"
#include "tests/gui/main_window_util.h"
#include "tests/support/test_paths.h"
#include "viewer/graph_items.h"
#include "viewer/graph_view.h"
#include "viewer/kernel_time_item.h"
#include "viewer/main_window.h"
#include "viewer/profile_panel.h"

using namespace fuselens;
using namespace fuselens::viewer;

namespace {
constexpr int kTimeoutMs = fuselens::test::kWindowTimeoutMs;
using fuselens::test::settled;
}  // namespace

class ProfileDockTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void profileFillsTheTableAndPicksNodes() {
    MainWindow w;
    w.setModalErrors(false);
    w.show();
    w.openFile(QString::fromStdString(fuselens::test::sourcePath("/samples/mlp.onnx")));
    QTRY_VERIFY_WITH_TIMEOUT(settled(w), kTimeoutMs);
    ProfilePanel* panel = w.profilePanel();
    QCOMPARE(panel->table()->rowCount(), 0);
    panel->runButton()->click();
    QTRY_VERIFY_WITH_TIMEOUT(!w.isBusy() && w.session()->lastProfile().has_value(), kTimeoutMs);
    QVERIFY(w.profileDock()->isVisible());

    const ProfileReport& rep = *w.session()->lastProfile();
    QCOMPARE(panel->table()->rowCount(), int(rep.kernels.size()));
    QCOMPARE(panel->headerText(), QString::fromStdString(rep.header()).trimmed());
    for (int r = 1; r < panel->table()->rowCount(); ++r)  // slowest first
      QVERIFY(panel->table()->item(r - 1, 0)->data(Qt::UserRole).toDouble() >=
              panel->table()->item(r, 0)->data(Qt::UserRole).toDouble());

    // The row of the first kernel selects the node that runs it.
    const KernelInfo& k = w.session()->compiled()->kernels().front();
    const Graph& g = w.session()->finalGraph();
    const QString value = QString::fromStdString(g.value(k.outputs[0]).name);
    int row = -1;
    for (int r = 0; r < panel->table()->rowCount(); ++r)
      if (panel->table()->item(r, 6)->text() == QString::fromStdString(k.name)) row = r;
    QVERIFY(row >= 0);
    panel->table()->selectRow(row);
    const QList<NodeItem*> selected = fuselens::test::selectedNodes(*w.graphView());
    QCOMPARE(selected.size(), 1);
    QVERIFY(selected.front()->produces(value));
    // The graph knows each kernel's time by the value it writes first.
    QVERIFY(w.graphView()->hasKernelTimes());
    QCOMPARE(w.session()->kernelSecondsByValue().count(g.value(k.outputs[0]).name), size_t(1));
    // Drawn ops and fused clusters show their kernels' own time on a chip.
    const QList<KernelTimeItem*> chips = kernelTimeItems(*w.graphView()->scene());
    QVERIFY(!chips.isEmpty());
    for (KernelTimeItem* chip : chips) {
      QVERIFY2(chip->text().contains(QRegularExpression("^\\d+(\\.\\d+)? (us|ms|s)$")),
               qPrintable(chip->text()));
      QVERIFY(qgraphicsitem_cast<NodeItem*>(chip->parentItem()) ||
              qgraphicsitem_cast<ClusterItem*>(chip->parentItem()));
    }
    // The first kernel's chip sits on its op, or on its op's cluster.
    QGraphicsItem* holder = selected.front();
    if (selected.front()->group() >= 0)
      for (ClusterItem* c : w.graphView()->clusterItems())
        if (c->group() == selected.front()->group()) holder = c;
    QVERIFY(std::any_of(chips.begin(), chips.end(),
                        [&](KernelTimeItem* c) { return c->parentItem() == holder; }));

    w.runPipeline();  // a new compile makes the profile stale
    QTRY_VERIFY_WITH_TIMEOUT(settled(w), kTimeoutMs);
    QVERIFY(!w.session()->lastProfile().has_value());
    QCOMPARE(panel->table()->rowCount(), 0);
    QVERIFY(!w.graphView()->hasKernelTimes());
    QVERIFY(kernelTimeItems(*w.graphView()->scene()).isEmpty());
  }
};

QTEST_MAIN(ProfileDockTest)
#include "profile_dock_test.moc"
