// GUI rows: the graph view on generated models with exporter-style names
// (make_scoped_models.py), offscreen. Per model: first paint after the
// pipeline (a fresh view: no cached layouts), opening the largest collapsed
// scope, stepping to the previous snapshot; then the process's peak memory.
// The 20,000-op chain runs first so its peak is its own. Medians of 3.
#include <QApplication>
#include <QElapsedTimer>
#include <QTest>
#include <algorithm>
#include <fstream>
#include <memory>

#include "benchmarks.h"
#include "session/graphview/scope_tree.h"
#include "session/pipeline_choice.h"
#include "viewer/graph_view.h"
#include "viewer/scope_item.h"

namespace fuselens::bench {
namespace {

constexpr int kRuns = 3;
constexpr int kTimeoutMs = 120000;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Resets the process's peak resident size to what is resident now (Linux
// 4.0+; where it fails the row is an upper bound). The GUI rows run before
// every other row, so that is the bench's start-up, not earlier rows' heap.
void resetPeak() { std::ofstream("/proc/self/clear_refs") << "5"; }

double peakMb() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return 0;
}

// Waits for the layout and the paint after it; the view's own clock gives the ms.
bool settle(viewer::GraphView& v) {
  if (!QTest::qWaitFor([&] { return !v.isLayoutPending(); }, kTimeoutMs)) return false;
  v.viewport()->repaint();
  QCoreApplication::processEvents();
  return true;
}

struct Figures {
  double firstPaint = 0, layout = 0, expand = 0, step = 0;
  int boxes = 0;
  std::string summary;
};

Figures measure(const Session& s) {
  const std::vector<Snapshot>& snaps = s.snapshots();
  const int last = int(snaps.size()) - 1;
  std::vector<double> paint, layout, expand, step;
  Figures f;
  for (int r = 0; r < kRuns; ++r) {
    viewer::GraphView v;
    v.resize(1400, 900);
    v.show();
    v.showGraph(snaps[size_t(last)].graph(), decisionsUpTo(snaps, last));
    if (!settle(v)) break;
    paint.push_back(v.firstPaintMs());
    layout.push_back(v.lastLayoutMs());
    f.boxes = v.drawnBoxes();
    f.summary = v.drawnSummary().toStdString();
    viewer::ScopeItem* biggest = nullptr;
    for (viewer::ScopeItem* item : v.scopeItems())
      if (item->isCollapsed() && (!biggest || item->scope().stats.ops > biggest->scope().stats.ops))
        biggest = item;
    if (biggest) {
      v.toggleScope(biggest->path());
      if (settle(v)) expand.push_back(v.firstPaintMs());
    }
    if (last > 0) {
      v.showGraph(snaps[size_t(last - 1)].graph(), decisionsUpTo(snaps, last - 1));
      if (settle(v)) step.push_back(v.firstPaintMs());
    }
  }
  f.firstPaint = median(paint);
  f.layout = median(layout);
  f.expand = median(expand);
  f.step = median(step);
  return f;
}

// Opens and runs the default pipeline; false (with a row saying why) when it fails.
bool openModel(Session& s, const std::string& name, const std::string& args,
               const std::string& path) {
  if (!writeModel("make_scoped_models.py", args, path)) {
    addRow({name, "n/a", 0, 0, "", "python3 with onnx not available"});
    return false;
  }
  OpenRequest req;
  req.model = path;
  req.pipeline = defaultPipelineText();
  if (Status st = s.open(req); !st) {
    addRow({name, "n/a", 0, 0, "", "open failed: " + st.message()});
    return false;
  }
  return true;
}

double modelRows(const std::string& name, const std::string& args, bool memory) {
  Session s;
  if (!openModel(s, name, args, "/tmp/fuselens_bench_gui.onnx")) return 0;
  const size_t ops = s.original().nodeCount();
  const Figures f = measure(s);
  const std::string what = name + " (" + std::to_string(ops) + " ops)";
  addRow({"gui first paint: " + what, "ms", f.firstPaint, 1000, "1 s target", f.summary});
  addRow({"gui open scope: " + what, "ms", f.expand, 300, "300 ms target", ""});
  addRow({"gui step pass: " + what, "ms", f.step, 300, "300 ms target", ""});
  if (memory) addRow({"gui peak memory: " + what, "MB", peakMb(), 600, "600 MB target", ""});
  return f.firstPaint;
}

}  // namespace

void guiRows() {
  static int argc = 1;
  static char arg0[] = "fuselens-bench";
  static char* argv[] = {arg0, nullptr};
  qputenv("QT_QPA_PLATFORM", "offscreen");
  std::unique_ptr<QApplication> app;
  if (!QCoreApplication::instance()) app = std::make_unique<QApplication>(argc, argv);
  resetPeak();
  modelRows("20,000-op chain", "--kind chain --nodes 20000", true);
  modelRows("12-layer BERT", "--kind bert --layers 12", false);
  const double small = modelRows("1,000-op transformer", "--kind transformer --nodes 1000", false);
  const double big = modelRows("10,000-op transformer", "--kind transformer --nodes 10000", false);
  if (small > 0 && big > 0)
    addRow({"gui first paint 10,000 / 1,000 ops", "x", big / small, 3, "3x target", ""});
}

}  // namespace fuselens::bench
