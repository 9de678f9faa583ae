// The graph's "Tap <tensor>" context menu on samples/mlp.onnx: an op inside a
// fused cluster offers one entry per tensor it makes (the group's own outputs
// disabled: compare has them), none outside a cluster; triggering one runs the
// tap compare on the worker and adds a row to the compare dock.
#include <QAction>
#include <QMenu>
#include <QtTest>
#include <memory>

#include "session/session.h"
#include "tests/gui/main_window_util.h"
#include "tests/support/test_paths.h"
#include "viewer/compare_model.h"
#include "viewer/compare_panel.h"

using namespace fuselens;
using namespace fuselens::viewer;

namespace {

NodeItem* producerOf(const GraphView& v, const QString& value) {
  for (NodeItem* n : v.nodeItems())
    if (n->produces(value)) return n;
  return nullptr;
}

QStringList texts(const QMenu& m) {
  QStringList out;
  for (QAction* a : m.actions()) out << a->text();
  return out;
}

}  // namespace

class TapMenuTest : public QObject {
  Q_OBJECT

 private slots:
  void tapFromTheContextMenu() {
    MainWindow w;
    w.setModalErrors(false);
    w.show();
    w.openFile(QString::fromStdString(fuselens::test::sourcePath("/samples/mlp.onnx")));
    QTRY_VERIFY_WITH_TIMEOUT(fuselens::test::settled(w), fuselens::test::kWindowTimeoutMs);
    GraphView* view = w.graphView();

    // Outside a cluster: no menu.
    NodeItem* softmax = producerOf(*view, "y");
    QVERIFY(softmax);
    QCOMPARE(softmax->group(), -1);
    QVERIFY(!view->contextMenuFor(softmax, &w));

    // The group's output: listed, disabled.
    NodeItem* tanh = producerOf(*view, "a2");
    QVERIFY(tanh && tanh->group() >= 0);
    std::unique_ptr<QMenu> outMenu(view->contextMenuFor(tanh, &w));
    QVERIFY(outMenu);
    QCOMPARE(outMenu->actions().size(), 1);
    QVERIFY(!outMenu->actions()[0]->isEnabled());

    // Inside the cluster: "Tap z2" runs the tap and adds its row.
    NodeItem* add = producerOf(*view, "z2");
    QVERIFY(add && add->group() >= 0);
    std::unique_ptr<QMenu> menu(view->contextMenuFor(add, &w));
    QVERIFY(menu);
    QCOMPARE(texts(*menu), QStringList{"Tap z2"});
    CompareModel* model = w.comparePanel()->compareModel();
    const int before = model->rowCount();
    menu->actions()[0]->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(fuselens::test::settled(w), fuselens::test::kWindowTimeoutMs);
    QVERIFY(w.session()->lastTaps());
    QCOMPARE(model->rowCount(), before + 1);
    const int row = before;
    QCOMPARE(model->index(row, CompareModel::TensorColumn).data().toString(), QString("z2"));
    QVERIFY(model->index(row, CompareModel::KernelColumn)
                .data()
                .toString()
                .startsWith("tap inside group"));
    QCOMPARE(model->index(row, CompareModel::StatusColumn).data().toString(),
             QString("within rounding"));
    QVERIFY(w.comparePanel()->summary().contains("PASS: 1 tap within rounding"));
  }
};

QTEST_MAIN(TapMenuTest)
#include "tap_menu_test.moc"
