// Model-local functions (ModelProto.functions): every call of one, in the
// main graph, in subgraphs and inside other functions, is replaced by the
// function's body before the graph is imported, so the rest of FuseLens sees
// plain ops. The inlined ops are named inside a scope of their own, one per
// call, nested in the call node's name scope: a call "/encoder/block.0/fc" of
// LinearAct makes "/encoder/block.0/fc:LinearAct/MatMul", so the graph view
// folds each call into one box. Values inside a call are renamed the same
// way, so two calls never share a name. Bad functions (unknown, recursive, an
// attribute reference the call cannot satisfy, another default opset than
// the model's) are one sentence each.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

#include "core/support/status.h"

namespace fuselens::onnximport {

// Rewrites `model`'s graph in place; `where` names the file in diagnostics.
// Does nothing (cheaply) when the model has no functions.
Status inlineLocalFunctions(onnx::ModelProto& model, const std::string& where);

}  // namespace fuselens::onnximport
