// Internal to lowering: the data-movement ops that inline as selects over reads
// (compute_data.cpp, compute_resize.cpp): Gather, GatherElements, GatherND,
// Split, Tile, Expand, DepthToSpace, SpaceToDepth, Resize, OneHot, Size and
// Shape.
// Each maps an output position to the input positions it reads (a gathered
// index is itself a load), so inside a group they cost one read per element.
#pragma once

#include "codegen/lower/compute.h"

namespace fuselens {

// Ops of this family (their ComputeClass is Injective).
bool isDataMovementOp(const std::string& op);
// Shapes, dtypes and constant operands of one node, checked before lowering.
Status checkDataMovement(const Graph& body, const Node& n);
// The value of output `output` of n at `out`.
ExprRef dataMovementValue(KernelBuilder& kb, const Node& n, size_t output, const Index& out);
ExprRef resizeValue(KernelBuilder& kb, const Node& n, const Index& out);

// Ops whose compute definitions check their own operands before lowering
// (this family, compute_scan.h, compute_norm.h), and that check.
bool checksOwnOperands(const Graph& body, const Node& n);
// MatMul of integer tensors (the f32 micro-kernel aside): a generic contraction.
bool isIntegerMatMul(const Graph& body, const Node& n);
Status checkOwnOperands(const Graph& body, const Node& n);

// An integer operand (an index) at idx as an i64 expression: literal when it is
// a one-element constant, a load otherwise (a constant of the body becomes a
// compiler-supplied input).
ExprRef indexValueAt(KernelBuilder& kb, ValueId v, const Index& idx);
// An integer constant input as numbers; nullopt when absent or not constant.
std::optional<std::vector<int64_t>> constInts(KernelBuilder& kb, const Node& n, size_t i);

}  // namespace fuselens
