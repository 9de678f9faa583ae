// fuselens: the desktop app.
//   fuselens [model.onnx | saved.fuselens.json] [--pipeline STR] [--screenshot out.png]
//            [--step N] [--heat] [--find TEXT] [--decision ROW] [--tour N]
//            [--dim NAME=N] [--sweep RANGE [--buckets POLICY | --dynamic]]
// With --screenshot it opens the model (or restores the session), runs the
// pipeline and the compare, shows snapshot N (default: the last), turns on the
// heat overlay, finds a node and picks a fusion inspector row if asked, waits
// for the layout, saves the window as a PNG, prints one line saying what the
// graph view drew ("drawn: 184 boxes (37 scopes collapsed), 212 edges, layout
// 140 ms, first paint 420 ms") and exits; it works with QT_QPA_PLATFORM=offscreen.
// A model with unbound dims takes them from --dim, and with --screenshot the
// suggested value for the rest (printed), instead of asking in the dims dialog.
// --sweep runs the Buckets dock's sweep before the screenshot, as the dock's Sweep does.
// --tour N opens chapter N of Help > Tour (docs/tour.md) instead of a model,
// as the menu does: docs/make_screenshots.sh draws the tour's images with it.
#include <QApplication>
#include <QCommandLineParser>
#include <QDockWidget>
#include <QTimer>
#include <cstdio>
#include <memory>

#include "session/requests.h"
#include "viewer/bucket_panel.h"
#include "viewer/dims_dialog.h"
#include "viewer/fusion_inspector.h"
#include "viewer/graph_view.h"
#include "viewer/main_window.h"

namespace {

using fuselens::viewer::MainWindow;
using Dims = std::map<std::string, int64_t>;

constexpr int kScreenshotTimeoutMs = 10 * 60 * 1000;

// What to show before the screenshot is taken, once the window is idle.
struct ShotSetup {
  QString find;
  int decisionRow = -1;
  QString sweep, buckets;
  bool dynamic = false;  // the dock's Symbolic kernels box
};

void prepareShot(MainWindow& w, const ShotSetup& setup) {
  if (!setup.find.isEmpty()) w.findNode(setup.find);
  if (setup.decisionRow >= 0) w.fusionInspector()->selectRow(setup.decisionRow);
  if (!setup.sweep.isEmpty()) {
    w.bucketDock()->show();
    w.bucketDock()->raise();
    w.bucketPanel()->setBuckets(setup.buckets);
    w.bucketPanel()->setSymbolic(setup.dynamic);
    w.bucketPanel()->setSweep(setup.sweep);
    w.bucketPanel()->startSweep();
  }
}

// Answers the dims dialog from --dim. For dims it leaves out: with
// --screenshot their suggestions (said on stderr), else the dialog, --dim's
// values filled in.
fuselens::viewer::DimsPrompt dimsFromFlags(const Dims& given, bool screenshot) {
  return [given, screenshot](const QString& model,
                             std::vector<fuselens::DimSuggestion> dims) -> std::optional<Dims> {
    Dims out;
    bool missing = false;
    for (fuselens::DimSuggestion& d : dims) {
      if (auto it = given.find(d.name); it != given.end()) {
        d.value = out[d.name] = it->second;
        d.reason = "from --dim";
        continue;
      }
      missing = true;
      out[d.name] = d.value;
      if (screenshot)
        std::fprintf(stderr, "fuselens: %s: bound %s=%lld (suggested: %s)\n", qPrintable(model),
                     d.name.c_str(), (long long)d.value, d.reason.c_str());
    }
    if (!missing || screenshot) return out;
    fuselens::viewer::DimsDialog dialog(model, dims);
    if (dialog.exec() != QDialog::Accepted) return std::nullopt;
    return dialog.dims();
  };
}

// Polls until the window is idle and laid out, prepares it, then saves it and quits.
void takeScreenshotWhenIdle(MainWindow& w, const QString& out, const ShotSetup& setup) {
  auto* poll = new QTimer(&w);
  auto prepared = std::make_shared<bool>(false);
  QObject::connect(poll, &QTimer::timeout, &w, [&w, out, poll, setup, prepared] {
    if (w.isBusy() || w.isTourPending() || w.graphView()->isLayoutPending() ||
        w.bucketPanel()->isRunning())
      return;
    if (!*prepared && w.session()) {
      *prepared = true;
      prepareShot(w, setup);
      return;  // one more tick for the view to settle
    }
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
    std::printf("%s\n", qPrintable(w.graphView()->drawnSummary()));
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
  QApplication::setOrganizationName("fuselens");

  QCommandLineParser parser;
  parser.setApplicationDescription("FuseLens: a graph-compiler explorer.");
  parser.addHelpOption();
  parser.addPositionalArgument("model", "The ONNX model or saved session to open.",
                               "[model.onnx | session.fuselens.json]");
  QCommandLineOption pipelineOpt("pipeline", "The pass pipeline to run.", "STR");
  QCommandLineOption shotOpt("screenshot", "Save the window to a PNG and exit.", "out.png");
  QCommandLineOption stepOpt("step", "The snapshot to show (default: the last).", "N");
  QCommandLineOption heatOpt("heat", "Turn on the divergence heat overlay.");
  QCommandLineOption findOpt("find", "Find a node by name or op (with --screenshot).", "TEXT");
  QCommandLineOption decisionOpt("decision", "Pick a fusion inspector row (with --screenshot).",
                                 "ROW");
  QCommandLineOption shapeOpt("shape",
                              "Fix an input's dynamic dims, as fuselens-cli's --shape "
                              "(repeatable; the toolbar's input shapes field).",
                              "NAME=AxBxC");
  QCommandLineOption tourOpt("tour", "Open chapter N (from 1) of Help > Tour.", "N");
  QCommandLineOption dimOpt("dim", "Bind a symbolic dim, as fuselens-cli's --dim (repeatable).",
                            "NAME=N");
  QCommandLineOption sweepOpt("sweep", "Run the Buckets dock's sweep (with --screenshot).",
                              "NAME=START:STOP:STEP");
  QCommandLineOption bucketsOpt("buckets", "The Buckets dock's policy, as --buckets.", "POLICY");
  QCommandLineOption dynamicOpt("dynamic", "The Buckets dock's sweep with symbolic kernels.");
  parser.addOptions({pipelineOpt, shotOpt, stepOpt, heatOpt, findOpt, decisionOpt, shapeOpt,
                     tourOpt, dimOpt, sweepOpt, bucketsOpt, dynamicOpt});
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
  ShotSetup setup{parser.value(findOpt), -1, parser.value(sweepOpt), parser.value(bucketsOpt),
                  parser.isSet(dynamicOpt)};
  std::vector<std::string> dimArgs;
  for (const QString& d : parser.values(dimOpt)) dimArgs.push_back(d.toStdString());
  auto dims = fuselens::parseDimBindings(dimArgs);
  if (!dims) {
    std::fprintf(stderr, "fuselens: %s\n", dims.message().c_str());
    return 2;
  }
  if (parser.isSet(decisionOpt)) setup.decisionRow = parser.value(decisionOpt).toInt(&stepOk);
  if (!stepOk || setup.decisionRow < -1) {
    std::fprintf(stderr, "fuselens: --decision takes a row number\n");
    return 2;
  }
  const int tour = parser.isSet(tourOpt) ? parser.value(tourOpt).toInt(&stepOk) : 0;
  if (!stepOk || tour < 0) {
    std::fprintf(stderr, "fuselens: --tour takes a chapter number\n");
    return 2;
  }
  if (!shot.isEmpty() && model.isEmpty() && tour == 0) {
    std::fprintf(stderr, "fuselens: --screenshot needs a model\n");
    return 2;
  }

  MainWindow w;
  if (parser.isSet(pipelineOpt)) w.setPipeline(parser.value(pipelineOpt));
  if (parser.isSet(shapeOpt)) w.setInputShapes(parser.values(shapeOpt).join(", "));
  if (parser.isSet(heatOpt)) w.setHeatVisible(true);
  if (!dims->empty() || !shot.isEmpty()) w.setDimsPrompt(dimsFromFlags(*dims, !shot.isEmpty()));
  if (!shot.isEmpty()) {
    w.setModalErrors(false);
    QObject::connect(&w, &MainWindow::errorShown, &w, [](const QString& message) {
      std::fprintf(stderr, "fuselens: %s\n", qPrintable(message));
    });
    if (tour == 0)
      QObject::connect(&w, &MainWindow::pipelineFinished, &w,
                       [&w, step] { w.selectSnapshot(step); });
  }
  w.show();
  if (tour > 0) {
    if (tour > w.tourChapterCount()) {
      std::fprintf(stderr, "fuselens: the tour has %d chapters\n", w.tourChapterCount());
      return 2;
    }
    w.openTourChapter(tour - 1);
  } else if (model.endsWith(".fuselens.json", Qt::CaseInsensitive))
    w.openSession(model);
  else if (!model.isEmpty())
    w.openFile(model);
  if (!shot.isEmpty()) takeScreenshotWhenIdle(w, shot, setup);
  return app.exec();
}
