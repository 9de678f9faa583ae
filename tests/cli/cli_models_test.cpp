// fuselens-cli on models written here with the ONNX protobuf API
// (tests/support/onnx_builder.h): a model with an attribute of the wrong kind
// exits 2 with one line on stderr naming the file, node, attribute and kinds;
// a Sum of 50,000 inputs runs through --engine cpu to what eager gives.
#include <QTemporaryDir>
#include <QtTest>

#include "core/io/npy.h"
#include "tests/support/cli_runner.h"
#include "tests/support/onnx_builder.h"

using namespace fuselens;
using namespace fuselens::test;

namespace {

QString writeModel(const QTemporaryDir& dir, const QString& name, const onnx::ModelProto& m) {
  QString path = dir.filePath(name);
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly)) return {};
  std::string bytes = bytesOf(m);
  f.write(bytes.data(), qint64(bytes.size()));
  return path;
}

}  // namespace

class CliModelsTest : public QObject {
  Q_OBJECT
 private slots:
  void wrongAttributeKindExitsTwoWithOneLine() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    auto m = oneNodeModel("Conv", {"x", "w"}, {1, 1, 3, 3}, {stringAttr("group", "1")});
    QString path = writeModel(dir, "bad.onnx", m);
    QVERIFY(!path.isEmpty());
    CliResult r = runCli({"run", path, "--random-inputs"});
    QCOMPARE(r.code, 2);
    QStringList lines = r.err.trimmed().split('\n');
    QCOMPARE(lines.size(), 1);
    QVERIFY2(lines[0].endsWith(path + ", node 'n1' (Conv, opset 17): attribute 'group' must be "
                                      "an INT, but the model gives a STRING"),
             qPrintable(r.err));
  }

  // The compiled path (--engine cpu) at 50,000 inputs gives what the eager
  // interpreter gives on the same seeded random inputs. The node is past
  // codegen/operand_limit.h, so the compiled executor runs it on its eager
  // kernel; what is checked is that the path imports, passes, plans and runs it.
  void sumOf50000InputsRunsOnTheCpuEngine() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    std::vector<std::string> names;
    for (int i = 0; i < 50000; ++i) names.push_back("x" + std::to_string(i));
    QString path = writeModel(dir, "sum.onnx", oneNodeModel("Sum", names, {2, 3}));
    std::map<QString, TensorData> outs;
    for (QString engine : {"cpu", "eager"}) {
      QElapsedTimer timer;
      timer.start();
      CliResult r = runCli({"run", path, "--engine", engine, "--random-inputs", "--seed", "5",
                            "--output-dir", dir.filePath(engine)});
      qInfo("fuselens-cli run --engine %s on a 50,000-input Sum: %lld ms", qPrintable(engine),
            (long long)timer.elapsed());
      QVERIFY2(r.code == 0, qPrintable(r.err.right(2000)));
      auto out = readNpy(dir.filePath(engine + "/y.npy").toStdString());
      QVERIFY2(out.isOk(), out.message().c_str());
      outs.emplace(engine, *out);
    }
    QCOMPARE(outs.at("cpu").shape, (std::vector<int64_t>{2, 3}));
    for (int64_t e = 0; e < 6; ++e) {
      double c = outs.at("cpu").at(e), x = outs.at("eager").at(e);
      QVERIFY2(std::abs(c - x) <= 1e-3 + 1e-4 * std::abs(x),
               qPrintable(QString("element %1: compiled %2, eager %3").arg(e).arg(c).arg(x)));
    }
  }
};

QTEST_GUILESS_MAIN(CliModelsTest)
#include "cli_models_test.moc"
