// Pipeline > Precision: f32, f16 or bf16 storage between kernels
// (passes/reduce_precision.h), one checked at a time. It edits the pipeline
// box, which stays the one place the pipeline is chosen (and what a saved
// session keeps), and asks for a rerun; the checked item follows the box.
#pragma once

#include <QString>
#include <functional>

class QAction;
class QLineEdit;
class QMenu;

namespace fuselens::viewer {

// Adds the submenu (object name "precisionMenu"; each item's data is its
// precision) to `pipeline`. Picking an item rewrites `box` and calls `rerun`;
// a box whose pipeline does not parse is left as it is and `error` says why.
QMenu* addPrecisionMenu(QMenu* pipeline, QLineEdit* box, std::function<void()> rerun,
                        std::function<void(const QString&)> error);

// The item of `menu` for "f32", "f16" or "bf16"; nullptr for another.
QAction* precisionItem(const QMenu* menu, const QString& precision);

}  // namespace fuselens::viewer
