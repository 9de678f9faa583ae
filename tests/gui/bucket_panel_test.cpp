// The Buckets dock on the transformer fixture with symbolic `seq`: it says
// which bucket the bound value falls in, a short sweep fills one row per
// bucket equal to the session's SweepReport grouped by bucket, with the CLI's
// summary words; a bad range is the CLI's sentence; Cancel stops a sweep.
#include "viewer/bucket_panel.h"

#include <QAbstractItemModelTester>
#include <QStandardItemModel>
#include <QTemporaryDir>
#include <QtTest>

#include "session/session.h"
#include "session/sweep_buckets.h"
#include "tests/support/test_paths.h"

using namespace fuselens;
using namespace fuselens::viewer;

namespace {
constexpr int kTimeoutMs = 240000;
const std::string kModel = test::sourcePath("/tests/cli/data/dyn_transformer/model.onnx");

std::vector<DimSuggestion> modelDims() {
  Session s;
  Status st = s.open(kModel);
  if (!st) qFatal("%s", st.message().c_str());
  return suggestDims(s.original());
}
}  // namespace

class BucketPanelTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QVERIFY(cache_.isValid());
    qputenv("XDG_CACHE_HOME", cache_.path().toUtf8());
  }

  void showsTheBucketOfTheBoundValue_data() {
    QTest::addColumn<QString>("policy");
    QTest::addColumn<QString>("expected");
    QTest::newRow("pow2") << "pow2"
                          << "seq (x[1]) = 100, in bucket 128";
    QTest::newRow("list with dim") << "seq=32,64,128,256"
                                   << "in bucket 128";
    QTest::newRow("step") << "step:48"
                          << "in bucket 144";
    QTest::newRow("too small") << "seq=32,64"
                               << "beyond the largest bucket 64";
    QTest::newRow("other dim") << "width=8"
                               << "buckets are for the swept dim 'seq'";
  }

  void showsTheBucketOfTheBoundValue() {
    QFETCH(QString, policy);
    QFETCH(QString, expected);
    BucketPanel panel;
    panel.setModel(QString::fromStdString(kModel), modelDims(), {{"seq", 100}});
    panel.setSweep("seq=1,2");
    panel.setBuckets(policy);
    QVERIFY2(panel.dimsText().contains(expected), qPrintable(panel.dimsText()));
  }

  void sweepRowsAreTheReportsBuckets() {
    BucketPanel panel;
    QAbstractItemModelTester tester(panel.model());
    panel.setModel(QString::fromStdString(kModel), modelDims(), {{"seq", 5}});
    panel.setBuckets("seq=4,8");
    panel.setSweep("seq=2,3,5");
    QSignalSpy done(&panel, &BucketPanel::sweepFinished);
    panel.startSweep();
    QVERIFY(panel.isRunning());
    QVERIFY(done.wait(kTimeoutMs));
    QVERIFY2(panel.report(), qPrintable(panel.statusText()));
    const std::vector<BucketRow> rows = bucketRows(*panel.report());
    QCOMPARE(rows.size(), size_t(2));
    QCOMPARE(panel.model()->rowCount(), 2);
    for (int r = 0; r < 2; ++r) {
      auto text = [&](int c) { return panel.model()->item(r, c)->text(); };
      QCOMPARE(text(BucketPanel::Bucket), QString::number(rows[r].bucket));
      QCOMPARE(text(BucketPanel::Runs), QString::number(rows[r].runs));
      QCOMPARE(text(BucketPanel::Compiles), QString::number(rows[r].compiles));
      QCOMPARE(text(BucketPanel::CacheHits), QString::number(rows[r].cacheHits));
      QCOMPARE(text(BucketPanel::Match), QString::fromStdString(rows[r].verdict));
      QCOMPARE(panel.model()->item(r, 0)->toolTip(), QString::fromStdString(rows[r].str()));
    }
    QCOMPARE(panel.model()->item(0, BucketPanel::Runs)->text(), QString("2"));  // 2 and 3
    QVERIFY(panel.model()->item(0, BucketPanel::Match)->text().startsWith("within rounding"));
    QVERIFY(panel.statusText().startsWith(QString::fromStdString(panel.report()->summary())));
    QVERIFY(panel.statusText().contains("all match eager"));
  }

  // The Symbolic kernels box is the CLI's --dynamic: unpadded runs, the
  // bucket policy set aside, and the summary's words about symbolic kernels.
  void symbolicKernelsBoxIsDynamic() {
    BucketPanel panel;
    panel.setModel(QString::fromStdString(kModel), modelDims(), {{"seq", 5}});
    panel.setBuckets("seq=4,8");
    panel.setSymbolic(true);
    panel.setSweep("seq=2,5");
    QSignalSpy done(&panel, &BucketPanel::sweepFinished);
    panel.startSweep();
    QVERIFY(done.wait(kTimeoutMs));
    QVERIFY2(panel.report(), qPrintable(panel.statusText()));
    QCOMPARE(panel.report()->mode(), std::string("symbolic"));
    QCOMPARE(panel.report()->paddingWaste, 0.0);
    QVERIFY(panel.report()->symbolicKernels > 0);
    QCOMPARE(panel.model()->rowCount(), 2);  // one row per length
    QVERIFY2(panel.statusText().contains("symbolic kernel"), qPrintable(panel.statusText()));
    QVERIFY(panel.statusText().contains("all match eager"));
  }

  void badRangeIsTheCliSentence() {
    BucketPanel panel;
    panel.setModel(QString::fromStdString(kModel), modelDims(), {{"seq", 5}});
    panel.setSweep("seq=5:1:1");
    QSignalSpy done(&panel, &BucketPanel::sweepFinished);
    panel.startSweep();
    QCOMPARE(done.count(), 1);
    QVERIFY2(panel.statusText().contains("stops before it starts"), qPrintable(panel.statusText()));
    QVERIFY(!panel.isRunning());
  }

  void cancelStopsTheSweep() {
    BucketPanel panel;
    panel.setModel(QString::fromStdString(kModel), modelDims(), {{"seq", 5}});
    panel.setBuckets("");
    panel.setSweep("seq=11,12,13,14,15,16");
    QSignalSpy done(&panel, &BucketPanel::sweepFinished);
    panel.startSweep();
    panel.cancel();
    QVERIFY(done.wait(kTimeoutMs));
    QCOMPARE(panel.statusText(), QString("sweep cancelled"));
    QVERIFY(!panel.report());
    QCOMPARE(panel.model()->rowCount(), 0);
  }

 private:
  QTemporaryDir cache_;
};

QTEST_MAIN(BucketPanelTest)
#include "bucket_panel_test.moc"
