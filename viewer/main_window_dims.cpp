// MainWindow and a model's unbound dims: the open job stops before the
// pipeline when the model has some (unless this window already has an answer
// for that model); the dims dialog asks; the answer is bound as input shapes,
// which is what a saved session records, so reopening it asks nothing (a
// session saved with its dims unbound asks when it is restored).
#include <QFileInfo>
#include <QStatusBar>
#include <QtConcurrent/QtConcurrentRun>

#include "session/session.h"
#include "viewer/dims_dialog.h"
#include "viewer/main_window.h"

namespace fuselens::viewer {

void MainWindow::askDims(const JobResult& r) {
  std::shared_ptr<Session> s = r.session;
  const QString path = QString::fromStdString(s->modelPath());
  const QString name = QFileInfo(path).fileName();
  std::optional<std::map<std::string, int64_t>> chosen;
  if (dimsPrompt_) {
    chosen = dimsPrompt_(name, r.dims);
  } else {
    DimsDialog dialog(name, r.dims, this);
    if (dialog.exec() == QDialog::Accepted) chosen = dialog.dims();
  }
  if (!chosen) {
    QStringList names;
    for (const DimSuggestion& d : r.dims) names << QString::fromStdString(d.name);
    statusBar()->showMessage(
        tr("%1 was not opened: its dims %2 need values to compile.").arg(name, names.join(", ")),
        kMessageMs);
    return;
  }
  rememberedDims_[QFileInfo(path).absoluteFilePath().toStdString()] = *chosen;
  // A restored session's own pipeline; a model just imported has run none yet.
  const std::string pipe = s->pipeline().empty() ? pipeline().toStdString() : s->pipeline();
  Progress progress = progressSink();
  CancelToken cancel = cancel_;
  start(Job::Open, [s, r, chosen = *chosen, pipe, progress, cancel] {
    JobResult out;
    out.session = s;
    out.path = r.path;
    out.warnings = r.warnings;
    out.dims = r.dims;
    out.dimValues = chosen;
    auto bound = s->bindInputShapes(shapesForDims(s->original(), chosen));
    out.status = bound ? s->optimize(pipe, progress, cancel) : bound.status();
    return out;
  });
}

}  // namespace fuselens::viewer
