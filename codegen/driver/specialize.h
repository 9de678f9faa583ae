// Specialization: a graph whose input types may be dynamic (a Loop body whose
// carried value grows, a branch reading an outer value of run-time shape) is
// compiled for the concrete input types met at run time, and the compiled
// module is cached by those types. Drivers (driver_kernel.h) run their bodies
// through it: every arithmetic step is compiled code, never the eager
// reference.
//
//   run(inputs) --types--> cache hit?  -- yes --> CompiledModule::run
//                               | no
//                               v
//        copy g, set the input types, re-infer every node (inferGraphTypes;
//        with `fold`, foldKnownValues too), compileGraph with the options
//        given, insert (least recently used entry evicted past the bound)
//
// Thread-safe: the cache is guarded by a mutex; a module runs outside the lock
// (shared ownership keeps an evicted module alive while it runs). Compiling
// happens under the lock, so two threads never compile the same types twice.
#pragma once

#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "codegen/compiler.h"
#include "codegen/driver/body_pipeline.h"

namespace fuselens {

// A copy of g whose inputs have `inputTypes` (g->inputs() order) and whose
// other values are re-inferred from them. An error names the node whose shape
// inference fails for these types.
Expected<Graph> specializeGraph(const Graph& g, const std::vector<TensorType>& inputTypes);

// Re-infers g node by node and folds what its (concrete) types decide: Shape
// and Size of static values, ConstantOfShape of a constant shape, and small
// nodes whose inputs are all constants, run once as compiled code (never the
// eager reference). Graph outputs may become constants. specialize_fold.cpp.
Status foldKnownValues(Graph& g, const CompileOptions& opts);
// One step of foldKnownValues: re-infers node id and, when what it reads
// decides its outputs, replaces them by constants and removes it (true). For
// a walk that refines types as it goes (the CUDA program, after an If).
Expected<bool> foldNodeInPlace(Graph& g, NodeId id, const CompileOptions& opts);

class SpecializedGraph {
 public:
  // maxCached: how many compiled specializations are kept (at least one).
  // fold: run foldKnownValues on each specialization before compiling it (for
  // unoptimized bodies full of shape arithmetic). pipeline: graph passes each
  // specialization runs before it compiles, and its nested bodies with it
  // (body_pipeline.h); null: none.
  SpecializedGraph(std::shared_ptr<const Graph> g, CompileOptions opts, size_t maxCached = 16,
                   bool fold = false, std::shared_ptr<const BodyPipeline> pipeline = nullptr);

  const Graph& graph() const { return *g_; }
  const CompileOptions& options() const { return opts_; }

  // Runs the graph. Inputs in g->inputs() order (nullptr for an absent one: an
  // unused input is bound to an empty tensor of its declared dtype, a used one
  // is an error); outputs in g->outputs() order.
  Expected<std::vector<TensorData>> run(const std::vector<const TensorData*>& inputs,
                                        const CancelToken& cancel = {});

  // The module for these input types (all static), compiled now or cached.
  // typesRejected (optional): set when the error is the graph's shape inference
  // refusing these types (not a compile error), e.g. an If branch compiled ahead
  // of time for types that never reach it.
  Expected<std::shared_ptr<const CompiledModule>> moduleFor(const std::vector<TensorType>& types,
                                                            bool* typesRejected = nullptr);

  // Whether every declared input type is static (so it compiles ahead of time).
  bool declaredStatic() const;
  // Compiles now for the declared input types (they must be static) and
  // returns the module's loop IR: compile-time errors and the loop IR listing.
  Expected<std::string> precompileLoopIr();

  size_t cachedCount() const;   // specializations held now
  size_t compileCount() const;  // specializations compiled so far (evicted ones included)

 private:
  using Key = std::vector<std::pair<DType, std::vector<int64_t>>>;
  static Expected<Key> keyOf(const std::vector<TensorType>& types);
  struct Entry {
    std::shared_ptr<const CompiledModule> module;
    std::vector<ValueId> outputs;  // the specialized graph's outputs (folding may change them)
    std::vector<std::string> outputNames;  // theirs, as runInto names them
  };
  Expected<Entry> entryFor(const std::vector<TensorType>& types, bool* typesRejected = nullptr);

  std::shared_ptr<const Graph> g_;
  CompileOptions opts_;
  size_t maxCached_;
  bool fold_;
  std::shared_ptr<const BodyPipeline> pipeline_;
  mutable std::mutex mu_;
  // Most recently used first.
  std::list<std::pair<Key, Entry>> cache_;
  size_t compiles_ = 0;
};

}  // namespace fuselens
