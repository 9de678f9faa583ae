// The If driver: reads the condition on the host and runs the chosen branch's
// compiled module. Both branches are compiled ahead of time when the outer
// values they read have static types (a nested If compiles through
// compileGraph, which reaches this driver again), else for the types met.
#include "codegen/driver/driver_cf.h"
#include "codegen/runtime/cpu_executor.h"

namespace fuselens::cfdriver {
namespace {

struct IfState {
  const Node* node = nullptr;  // points into `owner`'s copy
  std::shared_ptr<const Node> owner;
  Body thenBody, elseBody;
};

}  // namespace

Expected<DriverKernel> lowerIf(const Graph& g, const Node& n, const CompileOptions& opts) {
  if (formalInputs(n) < 1 || !n.inputs[0].valid())
    return Status::error("needs its condition input", place(n));
  auto s = std::make_shared<IfState>();
  s->owner = std::make_shared<const Node>(n);
  s->node = s->owner.get();
  auto t = bindBody(g, n, "then_branch", 0, opts);
  if (!t) return t.status();
  auto e = bindBody(g, n, "else_branch", 0, opts);
  if (!e) return e.status();
  s->thenBody = std::move(*t);
  s->elseBody = std::move(*e);
  for (Body* b : {&s->thenBody, &s->elseBody}) {
    if (b->graph->graph().outputs().size() != n.outputs.size())
      return Status::error("the " + b->attr + " has " +
                               std::to_string(b->graph->graph().outputs().size()) +
                               " outputs, the node " + std::to_string(n.outputs.size()),
                           place(n));
    FL_RETURN_IF_ERROR(precompile(g, n, *b, {}));
  }

  DriverKernel k;
  k.loopIr = bodiesLoopIr({&s->thenBody, &s->elseBody});
  bool both = s->thenBody.compiled && s->elseBody.compiled;
  k.summary =
      std::string("If: ") +
      (both ? "both branches compiled" : "branches compiled for the types met at run time") + " (" +
      kernelCounts({&s->thenBody, &s->elseBody}) + ")";
  k.run = [s](const std::vector<const TensorData*>& present) -> Expected<std::vector<TensorData>> {
    const Node& n = *s->node;
    auto all = spreadInputs(n, present);
    if (!all) return all.status();
    const TensorData* c = (*all)[0];
    if (!c) return Status::error("the condition input is missing", place(n));
    if (c->numel() != 1)
      return Status::error("the condition must hold one element, got " + c->type().str(), place(n));
    Body& b = truthy(*c) ? s->thenBody : s->elseBody;
    return runBody(n, b, {}, *all, currentRunCancelToken());
  };
  return k;
}

}  // namespace fuselens::cfdriver
