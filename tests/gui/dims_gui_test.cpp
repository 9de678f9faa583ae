// Opening a model with an unbound dim in the main window: the dims prompt is
// asked once with the suggestion, the answer is bound and the model compiles
// and compares; Cancel leaves the model unopened with a status line; the
// window remembers the answer for the same model, and a saved session reopens
// with it without asking, as does opening the model with a session saved beside
// it. The Buckets dock shows the bound value.
#include <QFile>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QtTest>

#include "session/session.h"
#include "tests/gui/main_window_util.h"
#include "tests/support/test_paths.h"
#include "viewer/bucket_panel.h"
#include "viewer/main_window.h"

using namespace fuselens;
using namespace fuselens::viewer;

namespace {
constexpr int kTimeoutMs = fuselens::test::kWindowTimeoutMs;
const QString kModel = QString::fromStdString(
    fuselens::test::sourcePath("/tests/cli/data/dyn_transformer/model.onnx"));
using fuselens::test::settled;

// A prompt that answers `seq` and records what it was asked.
struct Prompt {
  int calls = 0;
  std::vector<DimSuggestion> asked;
  std::optional<std::map<std::string, int64_t>> answer;
  DimsPrompt hook() {
    return [this](const QString&, const std::vector<DimSuggestion>& dims) {
      ++calls;
      asked = dims;
      return answer;
    };
  }
};

std::vector<int64_t> inputShape(const MainWindow& w) {
  const Graph& g = w.session()->original();
  return g.value(g.inputs().front()).type.staticShape().value_or(std::vector<int64_t>{});
}
}  // namespace

class DimsGuiTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QVERIFY(cache_.isValid());
    qputenv("XDG_CACHE_HOME", cache_.path().toUtf8());
  }

  void askedDimsAreBoundAndRemembered() {
    Prompt prompt;
    prompt.answer = std::map<std::string, int64_t>{{"seq", 6}};
    MainWindow w;
    w.setModalErrors(false);
    w.setDimsPrompt(prompt.hook());
    w.show();
    w.openFile(kModel);
    QTRY_VERIFY_WITH_TIMEOUT(settled(w) && w.session() && w.session()->lastReport(), kTimeoutMs);
    QCOMPARE(prompt.calls, 1);
    QCOMPARE(prompt.asked.size(), size_t(1));
    QCOMPARE(prompt.asked[0].name, std::string("seq"));
    QCOMPARE(prompt.asked[0].value, int64_t(128));
    QCOMPARE(inputShape(w), (std::vector<int64_t>{1, 6, 16}));
    QVERIFY2(w.compareText().contains("within rounding"), qPrintable(w.compareText()));
    QVERIFY2(w.bucketPanel()->dimsText().contains("seq (x[1]) = 6"),
             qPrintable(w.bucketPanel()->dimsText()));
    // The same model again: this window knows the answer.
    w.openFile(kModel);
    QTRY_VERIFY_WITH_TIMEOUT(settled(w) && w.session()->lastReport(), kTimeoutMs);
    QCOMPARE(prompt.calls, 1);
    QCOMPARE(inputShape(w), (std::vector<int64_t>{1, 6, 16}));

    // Saved and reopened in a fresh window: no question, the same shape.
    QTemporaryDir dir;
    const QString file = dir.filePath("dyn.fuselens.json");
    QSignalSpy saved(&w, &MainWindow::sessionSaved);
    w.saveSession(file);
    QVERIFY(saved.wait(kTimeoutMs));
    Prompt second;
    MainWindow w2;
    w2.setModalErrors(false);
    w2.setDimsPrompt(second.hook());
    w2.show();
    w2.openSession(file);
    QTRY_VERIFY_WITH_TIMEOUT(settled(w2) && w2.session() && w2.session()->lastReport(), kTimeoutMs);
    QCOMPARE(second.calls, 0);
    QCOMPARE(inputShape(w2), (std::vector<int64_t>{1, 6, 16}));
    QVERIFY2(w2.bucketPanel()->dimsText().contains("seq (x[1]) = 6"),
             qPrintable(w2.bucketPanel()->dimsText()));
  }

  // A session saved where Save Session suggests it answers for the model in
  // any later window: opening the model itself asks nothing.
  void sessionBesideTheModelAnswers() {
    QTemporaryDir dir;
    const QString model = dir.filePath("bert.onnx");
    QVERIFY(QFile::copy(kModel, model));
    Prompt prompt;
    prompt.answer = std::map<std::string, int64_t>{{"seq", 9}};
    {
      MainWindow w;
      w.setModalErrors(false);
      w.setDimsPrompt(prompt.hook());
      w.openFile(model);
      QTRY_VERIFY_WITH_TIMEOUT(settled(w) && w.session() && w.session()->lastReport(), kTimeoutMs);
      QSignalSpy saved(&w, &MainWindow::sessionSaved);
      w.saveSession(dir.filePath("bert.fuselens.json"));
      QVERIFY(saved.wait(kTimeoutMs));
    }
    MainWindow w;
    w.setModalErrors(false);
    w.setDimsPrompt(prompt.hook());
    w.openFile(model);
    QTRY_VERIFY_WITH_TIMEOUT(settled(w) && w.session() && w.session()->lastReport(), kTimeoutMs);
    QCOMPARE(prompt.calls, 1);  // the first window's question only
    QCOMPARE(inputShape(w), (std::vector<int64_t>{1, 9, 16}));
    QVERIFY2(w.statusBar()->currentMessage().contains("bert.fuselens.json: seq=9"),
             qPrintable(w.statusBar()->currentMessage()));
  }

  // A session saved while the dims were unbound (no one was asked) asks on restore.
  void sessionSavedUnboundAsksOnRestore() {
    QTemporaryDir dir;
    const QString file = dir.filePath("unbound.fuselens.json");
    {
      MainWindow w;  // no prompt and no modal dialogs: the dims stay symbolic
      w.setModalErrors(false);
      w.openFile(kModel);
      QTRY_VERIFY_WITH_TIMEOUT(settled(w) && w.session(), kTimeoutMs);
      QVERIFY(inputShape(w).empty());
      QSignalSpy saved(&w, &MainWindow::sessionSaved);
      w.saveSession(file);
      QVERIFY(saved.wait(kTimeoutMs));
    }
    Prompt prompt;
    prompt.answer = std::map<std::string, int64_t>{{"seq", 4}};
    MainWindow w;
    w.setModalErrors(false);
    w.setDimsPrompt(prompt.hook());
    w.openSession(file);
    QTRY_VERIFY_WITH_TIMEOUT(settled(w) && w.session() && w.session()->lastReport(), kTimeoutMs);
    QCOMPARE(prompt.calls, 1);
    QCOMPARE(inputShape(w), (std::vector<int64_t>{1, 4, 16}));
  }

  void cancelLeavesTheModelUnopened() {
    Prompt prompt;  // no answer: Cancel
    MainWindow w;
    w.setModalErrors(false);
    w.setDimsPrompt(prompt.hook());
    w.show();
    w.openFile(kModel);
    QTRY_VERIFY_WITH_TIMEOUT(settled(w) && prompt.calls == 1, kTimeoutMs);
    QVERIFY(!w.session());
    QVERIFY2(w.statusBar()->currentMessage().contains("model.onnx was not opened"),
             qPrintable(w.statusBar()->currentMessage()));
    QVERIFY(w.statusBar()->currentMessage().contains("seq"));
  }

  // A static model asks nothing.
  void staticModelAsksNothing() {
    Prompt prompt;
    MainWindow w;
    w.setModalErrors(false);
    w.setDimsPrompt(prompt.hook());
    w.show();
    w.openFile(
        QString::fromStdString(fuselens::test::sourcePath("/tests/cli/data/small_cnn/model.onnx")));
    QTRY_VERIFY_WITH_TIMEOUT(settled(w) && w.session() && w.session()->lastReport(), kTimeoutMs);
    QCOMPARE(prompt.calls, 0);
    QVERIFY(w.bucketPanel()->dimsText().contains("no symbolic dims"));
  }

 private:
  QTemporaryDir cache_;
};

QTEST_MAIN(DimsGuiTest)
#include "dims_gui_test.moc"
