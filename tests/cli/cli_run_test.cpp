// `fuselens-cli run` as a user runs it on a model with a symbolic batch dim:
// --dim binds the dim for --random-inputs, explicit inputs are checked against
// the bound dim, and a malformed --dim is one sentence with exit status 2.
#include <QTemporaryDir>
#include <QtTest>

#include "core/io/npy.h"
#include "tests/support/cli_runner.h"

namespace {

using Result = fuselens::test::CliResult;

Result cli(const QStringList& args) { return fuselens::test::runCli(args, 120000); }

const QString kModel = "tests/fixtures/dyn_batch/model.onnx";
const QString kInput = "tests/fixtures/dyn_batch/input_x.npy";

}  // namespace

class CliRunTest : public QObject {
  Q_OBJECT
 private slots:
  void dimBindsRandomInputs() {
    QTemporaryDir out;
    Result r =
        cli({"run", kModel, "--random-inputs", "--dim", "batch=5", "--output-dir", out.path()});
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    auto y = fuselens::readNpy((out.path() + "/y.npy").toStdString());
    QVERIFY2(y.isOk(), y.message().c_str());
    QCOMPARE(y->shape, (std::vector<int64_t>{5, 4}));
  }

  // Without --dim, the compiled engine and compare take the dynamic dims from
  // the tensors given (compiling needs static shapes).
  void compiledRunTakesDimsFromInputs() {
    QTemporaryDir out;
    Result r = cli(
        {"run", kModel, "--engine", "cpu", "--input", "x=" + kInput, "--output-dir", out.path()});
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    auto y = fuselens::readNpy((out.path() + "/y.npy").toStdString());
    QVERIFY2(y.isOk(), y.message().c_str());
    QCOMPARE(y->shape, (std::vector<int64_t>{3, 4}));
    r = cli({"compare", kModel, "--input", "x=" + kInput});
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    QVERIFY(r.out.contains("PASS"));
    // --random-inputs fills only the inputs not given, so a given dynamic one is fine.
    r = cli({"compare", kModel, "--input", "x=" + kInput, "--random-inputs"});
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
  }

  void inputOfTheWrongRankIsOneSentence() {
    QTemporaryDir dir;
    const QString path = dir.filePath("x3.npy");
    QVERIFY(fuselens::writeNpy(path.toStdString(),
                               fuselens::TensorData(fuselens::DType::F32, {2, 3, 8}))
                .isOk());
    Result r = cli({"compare", kModel, "--input", "x=" + path});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("input 'x'") && r.err.contains("rank 3"), qPrintable(r.err));
    QCOMPARE(r.err.count('\n'), 1);
  }

  void explicitInputMustMatchBoundDim() {
    QTemporaryDir out;
    Result r = cli(
        {"run", kModel, "--input", "x=" + kInput, "--dim", "batch=4", "--output-dir", out.path()});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("input 'x': has shape [3,8] but the model expects f32[4,8]"),
             qPrintable(r.err));
  }

  void malformedDimIsOneSentence() {
    QTemporaryDir out;
    Result r = cli({"run", kModel, "--dim", "batch", "--output-dir", out.path()});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("--dim batch: expected name=value"), qPrintable(r.err));
  }
};

QTEST_GUILESS_MAIN(CliRunTest)
#include "cli_run_test.moc"
