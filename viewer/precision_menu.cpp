#include "viewer/precision_menu.h"

#include <QAction>
#include <QActionGroup>
#include <QLineEdit>
#include <QMenu>

#include "session/pipeline_choice.h"

namespace fuselens::viewer {
namespace {

void checkFromBox(QMenu* menu, const QLineEdit* box) {
  const QString p = QString::fromStdString(precisionOf(box->text().toStdString()));
  if (QAction* act = precisionItem(menu, p)) act->setChecked(true);
}

}  // namespace

QMenu* addPrecisionMenu(QMenu* pipeline, QLineEdit* box, std::function<void()> rerun,
                        std::function<void(const QString&)> error) {
  QMenu* menu = pipeline->addMenu(QMenu::tr("&Precision"));
  menu->setObjectName("precisionMenu");
  menu->setToolTipsVisible(true);
  auto* group = new QActionGroup(menu);
  group->setExclusive(true);
  const struct {
    const char* name;
    const char* tip;
  } items[] = {
      {"f32", "Every tensor in f32 (the default)"},
      {"f16", "Tensors between kernels and weights stored in f16; arithmetic in f32"},
      {"bf16", "Tensors between kernels and weights stored in bf16; arithmetic in f32"},
  };
  for (const auto& item : items) {
    QAction* act = menu->addAction(QString::fromLatin1(item.name));
    act->setCheckable(true);
    act->setData(QString::fromLatin1(item.name));
    act->setToolTip(QMenu::tr(item.tip));
    group->addAction(act);
    QObject::connect(act, &QAction::triggered, menu, [menu, box, act, rerun, error] {
      auto text = replacePrecision(box->text().toStdString(), act->data().toString().toStdString());
      if (!text) {
        checkFromBox(menu, box);
        error(QString::fromStdString(text.message()));
        return;
      }
      box->setText(QString::fromStdString(*text));
      rerun();
    });
  }
  QObject::connect(box, &QLineEdit::textChanged, menu, [menu, box] { checkFromBox(menu, box); });
  checkFromBox(menu, box);
  return menu;
}

QAction* precisionItem(const QMenu* menu, const QString& precision) {
  for (QAction* act : menu->actions())
    if (act->data().toString() == precision) return act;
  return nullptr;
}

}  // namespace fuselens::viewer
