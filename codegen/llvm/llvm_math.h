// Math and conversions the LLVM emitter inlines as straight-line IR over
// scalars or vectors alike: exp, sigmoid, erf, tanh and log as Cephes-style polynomials
// (a libm call would keep a loop from vectorizing), and Cast between every
// dtype with the loop IR's semantics (cast() in loop_ir.h), f16/bf16 included
// (carried as i16 bits and converted with integer ops, so no target feature
// or runtime helper is needed). Internal to llvm_emit.cpp.
#pragma once

#include <llvm/IR/IRBuilder.h>

#include "core/ir/dtype.h"

namespace fuselens {

// nonPositive: the caller knows x <= 0 or NaN (one clamp fewer).
llvm::Value* emitExp(llvm::IRBuilder<>& b, llvm::Value* x, bool nonPositive = false);
llvm::Value* emitSigmoid(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* emitRecip(llvm::IRBuilder<>& b, llvm::Value* d);
llvm::Value* emitErf(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* emitTanh(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* emitLog(llvm::IRBuilder<>& b, llvm::Value* x);
// v (of the LLVM type of `from`) converted to `to`.
llvm::Value* emitCast(llvm::IRBuilder<>& b, llvm::Value* v, DType from, DType to);

}  // namespace fuselens
