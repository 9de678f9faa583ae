// The op registry: one row per op with its pattern kind (what fusion may do
// with it), its shape inference and its eager kernel. One file per op family
// registers its rows (elementwise.cpp, matmul.cpp, ...). The eager kernels are
// the reference every compiled run is compared with: they are written plainly
// and share no code with codegen/.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/ir/graph.h"
#include "core/support/status.h"

namespace fuselens {

// TVM's pattern kinds, in increasing order of how much they constrain fusion.
enum class PatternKind {
  ElemWise = 0,         // out[i] = f(in[i]), same shape
  Broadcast = 1,        // elementwise with broadcast inputs
  Injective = 2,        // each output element reads one input element (transpose, reshape)
  CommReduce = 3,       // commutative reduction (softmax, reduce-sum)
  OutEWiseFusable = 4,  // complex op that takes an elementwise epilogue (MatMul, Gemm, Conv)
  Opaque = 8,           // never fused
};
std::string_view patternKindName(PatternKind k);  // "ElemWise", ...

// Input types, plus the data of inputs that are constants (nullptr otherwise), so
// shape inference can read e.g. Reshape's target shape.
struct InferContext {
  const Node& node;
  std::vector<TensorType> inputTypes;
  std::vector<const TensorData*> constInputs;
};
using InferFn = std::function<Expected<std::vector<TensorType>>(const InferContext&)>;

using KernelOutputs = Expected<std::vector<TensorData>>;
using KernelInputs = std::vector<const TensorData*>;

// What a kernel may ask of whoever runs it. Control-flow kernels (If, Loop,
// Scan) run their bodies through `runBody`, which the eager interpreter
// supplies (eagerKernelContext in core/eager), so core/ops never depends on
// core/eager. Empty when the caller cannot run graphs: those kernels then fail.
struct KernelContext {
  // The body's outputs, in order, from its inputs by name.
  std::function<KernelOutputs(const Graph& body, const std::map<std::string, TensorData>& inputs)>
      runBody;
};

class EagerFn;

// A kernel written as (node, inputs), or as (node, inputs, context) when it
// needs the context (control flow); EagerFn holds either.
template <class F>
concept PlainKernel =
    !std::is_same_v<std::remove_cvref_t<F>, EagerFn> &&
    std::is_invocable_r_v<KernelOutputs, const F&, const Node&, const KernelInputs&>;
template <class F>
concept ContextKernel = !std::is_invocable_v<const F&, const Node&, const KernelInputs&> &&
                        std::is_invocable_r_v<KernelOutputs, const F&, const Node&,
                                              const KernelInputs&, const KernelContext&>;

// Computes a node's outputs from its input tensors (omitted optional inputs are
// nullptr). Most kernels need no context and are written as (node, inputs);
// one wrapper type holds both forms so every caller calls kernels one way.
class EagerFn {
 public:
  EagerFn() = default;
  EagerFn(std::nullptr_t) {}
  template <PlainKernel F>
  EagerFn(F f)
      : fn_([f = std::move(f)](const Node& n, const KernelInputs& in, const KernelContext&) {
          return f(n, in);
        }) {}
  template <ContextKernel F>
  EagerFn(F f) : fn_(std::move(f)) {}

  KernelOutputs operator()(const Node& n, const KernelInputs& in,
                           const KernelContext& ctx = {}) const {
    return fn_(n, in, ctx);
  }
  explicit operator bool() const { return bool(fn_); }

 private:
  std::function<KernelOutputs(const Node&, const KernelInputs&, const KernelContext&)> fn_;
};

// The kind an attribute holds, in the order of Attribute's alternatives and
// named as ONNX's AttributeProto types are ("INT", "FLOATS", ...).
enum class AttrKind { Int, Float, String, Ints, Floats, Strings, Tensor, Graph };
std::string_view attrKindName(AttrKind k);
AttrKind attrKindOf(const Attribute& a);

// One attribute an op reads, with the kind ONNX gives it in any opset.
struct AttrSpec {
  std::string name;
  AttrKind kind;
};

// How a compiled run executes an op that stands alone (outside a fused group).
enum class Launch {
  Kernel,  // a kernel computes its outputs
  View,    // its one output reinterprets the bytes of its data input: aliased, no launch
};

// How code generation computes an op's outputs (codegen's lowering families).
enum class ComputeClass {
  Elementwise,  // inlined as an expression (with ONNX multidirectional broadcast)
  IndexMap,     // inlined as an index map (Transpose, Reshape, Slice, ...)
  Injective,    // inlined as a select over several reads (Concat, Pad, Gather, ...)
  Reduction,    // owns a loop nest with reductions (MatMul, Softmax, Conv, pools, scans)
  Unsupported,  // no code generation (control flow runs as a driver, unknown ops)
};

struct OpInfo {
  std::string name;
  std::string domain;  // "" for the ONNX default domain
  PatternKind kind = PatternKind::Opaque;
  InferFn infer;
  EagerFn eager;
  // Its attributes, from the table in attr_schema.cpp (nullopt: no row there);
  // names not listed are not checked.
  std::optional<std::vector<AttrSpec>> attrs;
  // Set from registry.cpp's execution table, the one list of them:
  Launch launch = Launch::Kernel;
  ComputeClass compute = ComputeClass::Unsupported;
};

class OpRegistry {
 public:
  static const OpRegistry& instance();
  const OpInfo* find(std::string_view domain, std::string_view name) const;
  std::vector<const OpInfo*> all() const;
  void add(OpInfo info);  // used by the op-family files while the registry is built
  // Sets the attribute schema of a registered op (attr_schema.cpp's table).
  void setAttributes(std::string_view domain, std::string_view name, std::vector<AttrSpec> attrs);

 private:
  std::vector<OpInfo> ops_;
};

// Pattern kind of a node in its graph: unknown ops and ops without a kernel are
// Opaque; an ElemWise op whose inputs broadcast is Broadcast.
PatternKind patternKindOf(const Graph& g, NodeId n);

// Ops the execution table (registry.cpp) names that no op-family file
// registers: a typo or a lost row there; a test keeps it empty.
std::vector<std::string> unregisteredExecOps();

// The row says View (Reshape, Identity, Flatten, Squeeze, Unsqueeze).
bool isViewOp(const Node& n);
// Does a compiled run launch a kernel for this top-level node? Every node does
// except a view whose data input and output have static shapes and that has
// one output (then it aliases its input). Kernel counts, codegen and the
// memory planner all ask this one question.
bool needsKernel(const Graph& g, const Node& n);

// Runs shape inference on one node and stores the output types.
Status inferNodeTypes(Graph& g, NodeId n);
// All nodes in topological order; unknown ops keep the types they have.
Status inferGraphTypes(Graph& g);

// Refuses the first attribute whose kind differs from the op's schema, e.g.
// "attribute 'group' must be an INT, but the model gives a STRING" at the node.
// Ops without a registry row pass: nothing is known about them.
Status checkAttributeKinds(const Node& n);

// "node 'fc1' (MatMul)" — the `where` of diagnostics about a node.
std::string describeNode(const Node& n);

// If/Loop/Scan: the names of the outer-scope values a body reads, which import
// appended as node inputs after the ONNX ones (attribute `implicit_inputs`).
std::vector<std::string> implicitInputNames(const Node& n);

}  // namespace fuselens
