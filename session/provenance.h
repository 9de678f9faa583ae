// Provenance of generated code: which lines of a code text (loop IR, LLVM IR,
// assembly, CUDA C, PTX) belong to which kernel, which node of the optimized
// graph that kernel runs, and which imported ONNX nodes that node stands for
// (through origins). Both faces use it: `compile --emit loops|llvm|asm` prints
// a `// from: <onnx node names>` line before each kernel, the GUI's code dock
// scrolls to and marks a selected node's lines and selects the nodes a
// clicked line came from. Kernels are found by their names ("k3_fused_...")
// where the text defines them, so no backend has to report line numbers.
#pragma once

#include <string>
#include <vector>

#include "codegen/compiler.h"
#include "core/ir/graph.h"

namespace fuselens {

struct CodeSpan {
  std::string kernel;                // "k3_fused_matmul_add_relu"
  NodeId node;                       // the node of the optimized graph it runs
  std::vector<std::string> ops;      // that node's ops by name (a group's body ops)
  std::vector<std::string> origins;  // the imported nodes they stand for, by name
  int firstLine = 0, lastLine = 0;   // 0-based, inclusive, in AnnotatedCode::text
};

struct AnnotatedCode {
  std::string text;
  std::vector<CodeSpan> spans;  // in text order, disjoint

  const CodeSpan* atLine(int line) const;  // nullptr outside every kernel
  const CodeSpan* ofNode(NodeId node) const;
  const CodeSpan* ofOp(const std::string& opName) const;  // a body op too
};

// The names of the imported nodes `n` stands for, in the original graph's
// order; a fused group's body nodes are asked when the group names none.
std::vector<std::string> originNames(const Graph& original, const Node& n);

// Finds each kernel where `text` first names it and gives it the lines up to
// the next kernel. With a non-empty `comment` ("//", ";", "#"), a line
// `<comment> from: a, b, c` is inserted before each kernel and counted in its
// span.
AnnotatedCode annotateOrigins(const std::string& text, const std::vector<KernelInfo>& kernels,
                              const Graph& optimized, const Graph& original,
                              const std::string& comment);

}  // namespace fuselens
