// Shared pieces of the control-flow drivers (driver_cf_if.cpp,
// driver_cf_loop.cpp, driver_cf_scan.cpp): binding a body's inputs to the
// node's, compiling a body ahead of time when its types are known, and the
// host-side data movement (slicing, stacking) between compiled body runs.
//
// How a body reads the node (the importer's form, core/ops/control_flow.cpp):
// the node's inputs are its ONNX inputs, then the outer values its bodies read
// (`implicit_inputs` names them, in order); a body declares its formal inputs
// first, then those outer values it reads, as inputs of the same name.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "codegen/driver/driver_kernel.h"
#include "codegen/driver/specialize.h"

namespace fuselens::cfdriver {

// One body of a node: its compiled specializations and where its implicit
// inputs come from.
struct Body {
  std::string attr;  // "then_branch", "body"
  std::shared_ptr<SpecializedGraph> graph;
  size_t formal = 0;               // formal inputs (bound by position)
  std::vector<size_t> implicitAt;  // per body input past `formal`: the node input feeding it
  std::string loopIr;              // the ahead-of-time listing, or why there is none
  size_t kernels = 0;              // kernels of the ahead-of-time module; 0 when lazy
  bool compiled = false;           // compiled ahead of time
};

// "node 'Loop_0' (Loop)".
std::string place(const Node& n);
// How many of n's inputs are ONNX (formal) inputs, without the implicit ones.
size_t formalInputs(const Node& n);

// Binds graph attribute `attr` of n, whose first `formal` inputs are formal.
// Bodies are compiled without the reference fallback inside, with opts else.
// Implicit inputs that are constants of `outer` (the graph holding n) become
// constants of the body.
Expected<Body> bindBody(const Graph& outer, const Node& n, const char* attr, size_t formal,
                        const CompileOptions& opts);

// Compiles `body` now for these formal input types (outer types from g for the
// implicit ones) when all are static; otherwise leaves it to run time. An error
// is the body's compile error, as one sentence naming the node.
Status precompile(const Graph& g, const Node& n, Body& body,
                  const std::vector<TensorType>& formalTypes);

// The node's present inputs (the executor passes only those) spread back to
// one entry per node input, nullptr for omitted ones.
Expected<std::vector<const TensorData*>> spreadInputs(
    const Node& n, const std::vector<const TensorData*>& present);

// Runs `body` on formal inputs (by position) and its implicit ones from `all`.
Expected<std::vector<TensorData>> runBody(const Node& n, Body& body,
                                          const std::vector<const TensorData*>& formal,
                                          const std::vector<const TensorData*>& all,
                                          const CancelToken& cancel);

// The loop IR listing of the bodies and a count like "3 + 2 kernels".
std::string bodiesLoopIr(const std::vector<const Body*>& bodies);
std::string kernelCounts(const std::vector<const Body*>& bodies);
// "1 state", "2 states".
std::string counted(size_t n, const std::string& noun);

// Integer value of a one-element tensor (trip counts, sequence lengths).
int64_t intAt(const TensorData& t, int64_t i);
bool truthy(const TensorData& t);  // the first element is not zero (false when empty)

// Slice `index` of x along `axis`, the axis removed.
TensorData sliceAt(const TensorData& x, int64_t axis, int64_t index);
// Stacks equal-shaped parts along a new `axis` (reversed order when `reverse`).
Expected<TensorData> stack(const Node& n, const std::vector<TensorData>& parts, int64_t axis,
                           bool reverse);
// The type of a slice of t along axis (axis removed); unknown rank stays unknown.
TensorType sliceType(const TensorType& t, int64_t axis);

// The drivers of the three ops.
Expected<DriverKernel> lowerIf(const Graph& g, const Node& n, const CompileOptions& opts);
Expected<DriverKernel> lowerLoop(const Graph& g, const Node& n, const CompileOptions& opts);
Expected<DriverKernel> lowerScan(const Graph& g, const Node& n, const CompileOptions& opts);

}  // namespace fuselens::cfdriver
