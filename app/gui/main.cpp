// fuselens: the desktop app.
//   fuselens [model.onnx] [--pipeline STR] [--screenshot out.png] [--step N]
// With --screenshot it opens the model, runs the pipeline and the compare,
// shows snapshot N (default: the last), waits for the layout, saves the window
// as a PNG and exits; it works with QT_QPA_PLATFORM=offscreen.
#include <QApplication>
#include <QCommandLineParser>
#include <QTimer>
#include <cstdio>

#include "viewer/graph_view.h"
#include "viewer/main_window.h"

namespace {

using fuselens::viewer::MainWindow;

constexpr int kScreenshotTimeoutMs = 10 * 60 * 1000;

// Polls until the window is idle and laid out, then saves it and quits.
void takeScreenshotWhenIdle(MainWindow& w, const QString& out) {
  auto* poll = new QTimer(&w);
  QObject::connect(poll, &QTimer::timeout, &w, [&w, out, poll] {
    if (w.isBusy() || w.graphView()->isLayoutPending()) return;
    poll->stop();
    if (!w.session()) {
      std::fprintf(stderr, "fuselens: no model open, no screenshot taken\n");
      QCoreApplication::exit(1);
      return;
    }
    QCoreApplication::processEvents();
    if (!w.grab().save(out)) {
      std::fprintf(stderr, "fuselens: could not write %s\n", qPrintable(out));
      QCoreApplication::exit(1);
      return;
    }
    std::printf("%s\n", qPrintable(w.compareText()));
    QCoreApplication::exit(0);
  });
  poll->start(100);
  QTimer::singleShot(kScreenshotTimeoutMs, &w, [] {
    std::fprintf(stderr, "fuselens: timed out waiting for the pipeline\n");
    QCoreApplication::exit(3);
  });
}

}  // namespace

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setApplicationName("fuselens");

  QCommandLineParser parser;
  parser.setApplicationDescription("FuseLens: a graph-compiler explorer.");
  parser.addHelpOption();
  parser.addPositionalArgument("model", "The ONNX model to open.", "[model.onnx]");
  QCommandLineOption pipelineOpt("pipeline", "The pass pipeline to run.", "STR");
  QCommandLineOption shotOpt("screenshot", "Save the window to a PNG and exit.", "out.png");
  QCommandLineOption stepOpt("step", "The snapshot to show (default: the last).", "N");
  parser.addOptions({pipelineOpt, shotOpt, stepOpt});
  parser.process(app);

  const QStringList args = parser.positionalArguments();
  const QString model = args.isEmpty() ? QString() : args.first();
  const QString shot = parser.value(shotOpt);
  bool stepOk = true;
  const int step = parser.isSet(stepOpt) ? parser.value(stepOpt).toInt(&stepOk) : -1;
  if (!stepOk) {
    std::fprintf(stderr, "fuselens: --step takes a number\n");
    return 2;
  }
  if (!shot.isEmpty() && model.isEmpty()) {
    std::fprintf(stderr, "fuselens: --screenshot needs a model\n");
    return 2;
  }

  MainWindow w;
  if (parser.isSet(pipelineOpt)) w.setPipeline(parser.value(pipelineOpt));
  if (!shot.isEmpty()) {
    w.setModalErrors(false);
    QObject::connect(&w, &MainWindow::errorShown, &w, [](const QString& message) {
      std::fprintf(stderr, "fuselens: %s\n", qPrintable(message));
    });
    QObject::connect(&w, &MainWindow::pipelineFinished, &w, [&w, step] { w.selectSnapshot(step); });
  }
  w.show();
  if (!model.isEmpty()) w.openFile(model);
  if (!shot.isEmpty()) takeScreenshotWhenIdle(w, shot);
  return app.exec();
}
