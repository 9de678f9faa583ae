#include "viewer/engine_menu.h"

#include <QAction>
#include <QActionGroup>
#include <QMenu>

#include "session/engines.h"

namespace fuselens::viewer {

QMenu* addEngineMenu(QMenu* pipeline, std::function<void()> chosen) {
  QMenu* menu = pipeline->addMenu(QMenu::tr("&Engine"));
  menu->setObjectName("engineMenu");
  menu->setToolTipsVisible(true);
  auto* group = new QActionGroup(menu);
  group->setExclusive(true);
  std::string why;
  const bool device = cudaEngineAvailable(&why);
  const struct {
    const char* engine;
    const char* label;
    QString tip;
  } items[] = {
      {"cpu", "CPU (LLVM)", QMenu::tr("Compare runs the kernels compiled through LLVM")},
      {"cuda", "CUDA (device 0)",
       device ? QMenu::tr("Compare runs the CUDA kernels on device 0 and checks the outputs")
              : QMenu::tr("Not here: %1").arg(QString::fromStdString(why))},
  };
  for (const auto& item : items) {
    QAction* act = menu->addAction(QMenu::tr(item.label));
    act->setCheckable(true);
    act->setData(QString::fromLatin1(item.engine));
    act->setToolTip(item.tip);
    group->addAction(act);
    QObject::connect(act, &QAction::triggered, menu, [chosen] { chosen(); });
  }
  menu->actions().front()->setChecked(true);
  menu->addSeparator();
  QAction* lib = menu->addAction(QMenu::tr("cuBLASLt for MatMul groups"));
  lib->setObjectName("cudaLibraryToggle");
  lib->setCheckable(true);
  lib->setToolTip(
      QMenu::tr("CUDA runs every MatMul/Gemm group whose epilogue cuBLASLt expresses (bias, "
                "ReLU, GELU) as one cublasLtMatmul, as --cuda-library cublaslt does"));
  QObject::connect(lib, &QAction::toggled, menu, [menu, chosen] {
    if (engineChoice(menu) == "cuda") chosen();
  });
  return menu;
}

QString engineChoice(const QMenu* menu) {
  if (menu)
    for (QAction* act : menu->actions())
      if (act->isChecked()) return act->data().toString();
  return "cpu";
}

QString cudaLibraryChoice(const QMenu* menu) {
  auto* lib = menu ? menu->findChild<QAction*>("cudaLibraryToggle") : nullptr;
  return lib && lib->isChecked() ? "cublaslt" : "none";
}

QAction* engineItem(const QMenu* menu, const QString& engine) {
  for (QAction* act : menu->actions())
    if (act->data().toString() == engine) return act;
  return nullptr;
}

}  // namespace fuselens::viewer
