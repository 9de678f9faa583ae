// The tensor dock over a real compare of two NCHWc-blocked convolutions:
// selecting a node shows its output with the stats lines the CLI prints
// (session/tensor_inspect.h), the table is the last two axes' slice, the
// compiled tensor is shown logical, the axes and side controls reshape the
// views, a compare row picks a tensor, and Save as .npy writes what is shown.
#include "viewer/tensor_inspector.h"

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QDockWidget>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include "core/io/npy.h"
#include "session/pipeline_choice.h"
#include "session/session.h"
#include "tests/gui/main_window_util.h"
#include "tests/support/test_paths.h"
#include "viewer/compare_model.h"
#include "viewer/compare_panel.h"
#include "viewer/tensor_slice_model.h"

using namespace fuselens;
using namespace fuselens::viewer;

namespace {
constexpr int kTimeoutMs = fuselens::test::kWindowTimeoutMs;
using fuselens::test::settled;

QString statsWords(const TensorData& t) {
  QStringList lines{QString::fromStdString(shapeText(t))};
  for (const std::string& l : statsLines(tensorStats(t))) lines << QString::fromStdString(l);
  return lines.join('\n');
}
}  // namespace

class TensorInspectorTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void followsTheSelectionAndSaves() {
    MainWindow w;
    w.setModalErrors(false);
    w.show();
    w.openFile(
        QString::fromStdString(fuselens::test::sourcePath("/tests/cli/data/two_convs/model.onnx")));
    QTRY_VERIFY_WITH_TIMEOUT(settled(w) && w.session() && w.session()->lastReport(), kTimeoutMs);
    TensorInspector* ins = w.tensorInspector();
    QVERIFY(w.tensorDock() != nullptr);

    QVERIFY(w.graphView()->selectProducerOf("r1"));
    QCOMPARE(ins->tensorName(), QString("r1"));
    auto t = w.session()->inspectTensor("r1");
    QVERIFY(t.isOk());
    const QString blocked = QString("NCHW%1c").arg(fuselens::hostLayoutBlock());
    QVERIFY2(ins->headerText().contains("compiled " + blocked + " shown as NCHW"),
             qPrintable(ins->headerText()));
    QVERIFY(!ins->statsPending());  // small: computed on the spot
    QCOMPARE(ins->statsText(), statsWords(*t->compiled));
    const std::vector<int64_t>& shape = t->compiled->shape;
    QCOMPARE(shape.size(), size_t(4));
    QCOMPARE(ins->sliceModel()->rowCount(), int(shape[2]));
    QCOMPARE(ins->sliceModel()->columnCount(), int(shape[3]));
    QCOMPARE(ins->image().size(), QSize(int(shape[3]), int(shape[2])));
    QAbstractItemModelTester tester(ins->sliceModel());
    // The first cell is element [0,0,0,0] of the logical tensor.
    QCOMPARE(ins->sliceModel()->index(0, 0).data(Qt::UserRole).toDouble(), t->compiled->at(0));

    ins->setSliceAxes(1, 3);  // channels down, width across
    QCOMPARE(ins->sliceModel()->rowCount(), int(shape[1]));
    QCOMPARE(ins->sliceModel()->columnCount(), int(shape[3]));

    ins->setSide(TensorSide::Error);
    auto err = sideTensor(*t, TensorSide::Error);
    QVERIFY(err.isOk());
    QCOMPARE(ins->statsText(), statsWords(**err));
    QVERIFY(ins->statsText().startsWith("f64["));
    QVERIFY(!ins->image().isNull());
    // Side by side: eager | compiled | error of the same slice in one row.
    const QSize one = ins->image().size();
    ins->setSideBySide(true);
    QCOMPARE(ins->image().height(), one.height());
    QVERIFY(ins->image().width() > 3 * one.width());
    ins->setSideBySide(false);
    QCOMPARE(ins->image().size(), one);

    QTemporaryDir dir;
    const QString path = dir.path() + "/r1_error.npy";
    Status st = ins->saveNpy(path);
    QVERIFY2(st.isOk(), st.message().c_str());
    auto back = readNpy(path.toStdString());
    QVERIFY(back.isOk());
    QCOMPARE(back->shape, shape);
    QVERIFY(back->bytes == (*err)->bytes);
    Status bad = ins->saveNpy(dir.path() + "/no/such/folder/x.npy");
    QVERIFY(!bad.isOk());

    // A compare row picks its tensor.
    ComparePanel* panel = w.comparePanel();
    int row = -1;
    for (int r = 0; r < panel->compareModel()->rowCount(); ++r)
      if (panel->compareModel()->index(r, 0).data().toString() == "y") row = r;
    QVERIFY(row >= 0);
    panel->table()->selectRow(row);
    QCOMPARE(ins->tensorName(), QString("y"));

    // A tensor inside a kernel has no error map: the sentence says why.
    ins->showTensor("c1");
    QVERIFY2(ins->statsText().contains("not a kernel boundary"), qPrintable(ins->statsText()));
    QVERIFY(!ins->saveButton()->isEnabled());
  }

  // Over a million elements the stats pass runs on the worker: the dock says
  // so, then shows the same words once statsShown fires.
  void largeTensorStatsOnTheWorker() {
    Graph g;
    const TensorType type = TensorType::of(DType::F32, {1100, 1000});
    ValueId x = g.addInput("x", type);
    g.addOutput(g.node(g.addNode("Relu", {x}, {{"y", type}})).outputs[0]);
    Session s;
    QVERIFY(s.open(std::move(g), "large-relu").isOk());
    QVERIFY(s.optimize("dce").isOk());
    QVERIFY(s.compare(*s.randomInputs(1), CompareOptions{}).isOk());
    TensorInspector ins;
    QSignalSpy shown(&ins, &TensorInspector::statsShown);
    ins.setSession(&s);
    ins.showTensor("y");
    QVERIFY(ins.statsPending());
    QVERIFY2(ins.statsText().contains("computing statistics of 1100000"),
             qPrintable(ins.statsText()));
    QVERIFY(shown.wait(60000));
    QVERIFY(!ins.statsPending());
    auto t = s.inspectTensor("y");
    QCOMPARE(ins.statsText(), statsWords(*t->compiled));
    QCOMPARE(ins.sliceModel()->rowCount(), 1100);  // lazy: rows are not formatted up front
  }
};

QTEST_MAIN(TensorInspectorTest)
#include "tensor_inspector_test.moc"
