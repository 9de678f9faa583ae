// The per-thread after-kernel hook (kernel_hook.h).
#include "codegen/runtime/kernel_hook.h"

namespace fuselens {
namespace {
thread_local const AfterKernelHook* current = nullptr;
}  // namespace

const AfterKernelHook* afterKernelHook() { return current; }

ScopedAfterKernelHook::ScopedAfterKernelHook(AfterKernelHook hook)
    : saved_(current), hook_(std::move(hook)) {
  current = &hook_;
}

ScopedAfterKernelHook::~ScopedAfterKernelHook() { current = saved_; }

}  // namespace fuselens
