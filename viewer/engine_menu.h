// Pipeline > Engine: which engine compare runs the final graph on, the CPU
// (LLVM, the default) or CUDA on device 0 (Session::compareCuda), and whether
// CUDA runs MatMul/Gemm groups through cuBLASLt (Session::cudaRun). The CUDA
// item is always offered: without a driver or a device, compare says so in one
// sentence (the same one `fuselens-cli compare --engine cuda` prints) instead
// of the item being greyed out with no reason given.
#pragma once

#include <QString>
#include <functional>

class QAction;
class QMenu;

namespace fuselens::viewer {

// Adds the submenu (object name "engineMenu"; each item's data is "cpu" or
// "cuda", as --engine spells it) to `pipeline`. Picking an item calls `chosen`.
QMenu* addEngineMenu(QMenu* pipeline, std::function<void()> chosen);

// The checked item's engine of the window's "engineMenu": "cpu" or "cuda".
QString engineChoice(const QMenu* menu);

// The menu's "cuBLASLt for MatMul groups" toggle (object name
// "cudaLibraryToggle"), as --cuda-library spells it: "cublaslt" or "none".
// Toggling it calls `chosen` when the CUDA engine is checked.
QString cudaLibraryChoice(const QMenu* menu);

// The item of `menu` for "cpu" or "cuda"; nullptr for another.
QAction* engineItem(const QMenu* menu, const QString& engine);

}  // namespace fuselens::viewer
