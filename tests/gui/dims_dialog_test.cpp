// The unbound-dims dialog, driven directly: one value box per dim filled with
// its suggestion, edits come back from dims(), and the rows say which inputs
// use each dim and why the value was suggested.
#include "viewer/dims_dialog.h"

#include <QLabel>
#include <QSpinBox>
#include <QtTest>

using namespace fuselens;
using namespace fuselens::viewer;

class DimsDialogTest : public QObject {
  Q_OBJECT
 private slots:
  void boxesHoldTheSuggestions() {
    std::vector<DimSuggestion> dims = {
        {"batch", {{"input_ids", 0}, {"mask", 0}}, 1, "named like a batch size"},
        {"seq", {{"input_ids", 1}}, 128, "named like a sequence length"}};
    DimsDialog dialog("bert.onnx", dims);
    QVERIFY(dialog.valueBox("batch"));
    QVERIFY(!dialog.valueBox("width"));
    QCOMPARE(dialog.valueBox("seq")->value(), 128);
    QCOMPARE(dialog.dims(), (std::map<std::string, int64_t>{{"batch", 1}, {"seq", 128}}));
    dialog.valueBox("seq")->setValue(64);
    QCOMPARE(dialog.dims().at("seq"), int64_t(64));
    QStringList texts;
    for (QLabel* l : dialog.findChildren<QLabel*>()) texts << l->text();
    QVERIFY2(texts.contains("input_ids[0], mask[0]"), qPrintable(texts.join("|")));
    QVERIFY(texts.contains("named like a sequence length"));
    QVERIFY(texts.join(" ").contains("bert.onnx"));
  }
};

QTEST_MAIN(DimsDialogTest)
#include "dims_dialog_test.moc"
