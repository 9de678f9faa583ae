// Opset canonicalization for the ONNX importer. The IR gives each op one
// meaning, the latest opset's; a node imported from an older opset is
// rewritten here into that form (e.g. opset-11 Softmax over a non-last axis
// becomes Reshape -> Softmax(axis=-1) -> Reshape) or rejected with a sentence.
// Works on the Graph only, so it needs no protobuf.
#pragma once

#include <cstdint>
#include <vector>

#include "core/ir/graph.h"
#include "core/support/status.h"

namespace fuselens::onnximport {

// Rewrites node `n` of the default domain, imported under `opset`, into
// canonical form and infers the types of every node involved. Returns the
// values that now stand for the node's outputs, in order (a rewrite may move
// an output's name onto a new value). Notes about rewrites go to `diags`.
Expected<std::vector<ValueId>> canonicalizeNode(Graph& g, NodeId n, int64_t opset,
                                                std::vector<Diagnostic>& diags);

}  // namespace fuselens::onnximport
