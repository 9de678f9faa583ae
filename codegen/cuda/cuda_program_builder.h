// Internal to the CUDA program builder (cuda_program.cpp walks and cuts
// segments; cuda_program_control.cpp builds If and Loop steps and their
// bodies): the builder and what both files share.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "codegen/cuda/cuda_program.h"

namespace fuselens::cudaprog {

constexpr int64_t kAlign = 256;
inline int64_t aligned(int64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// The nodes the program runs as host steps.
inline bool isControlFlow(const Node& n) {
  return (n.domain.empty() || n.domain == "ai.onnx") &&
         (n.op == "If" || n.op == "Loop" || n.op == "Scan");
}

class Builder {
 public:
  Builder(CudaProgramPlan& plan, const CancelToken& cancel) : plan_(plan), cancel_(cancel) {}

  // `rejected`: set when g's shape inference refuses these types (a branch
  // that may never run with them), as opposed to a failure to compile.
  Expected<std::shared_ptr<CudaProgram>> build(const Graph& g, const std::vector<TensorType>& types,
                                               bool fold, bool* rejected);

 private:
  struct Scope {
    Graph s;  // the specialized copy
    std::shared_ptr<CudaProgram> p;
    std::map<int32_t, int> slotOf;  // value index -> slot
  };

  int internalSlot(CudaProgram& p, const std::string& name, const TensorType& t);
  Expected<int> slotFor(Scope& sc, ValueId v);
  Status flush(Scope& sc, const std::vector<NodeId>& nodes, const std::set<int32_t>& later);
  Status addIf(Scope& sc, const Node& n, const std::set<int32_t>& later);
  Status addLoop(Scope& sc, const Node& n);
  Status addScan(Scope& sc, const Node& n);
  Expected<int> loopControl(Scope& sc, const Node& n, size_t i, int64_t* known);
  Status runShapeRead(Scope& sc, ValueId v, const std::string& where);
  Expected<CudaBranch> branch(Scope& sc, const Node& n, const char* attr, size_t formal,
                              std::vector<TensorType> formalTypes, std::vector<int> formalSlots,
                              bool allowRefusal);

  CudaProgramPlan& plan_;
  const CancelToken& cancel_;
  int nextProgram_ = 0, nextSegment_ = 0;
  // Set when a value's type stays dynamic for the bound shapes: in a branch
  // whose condition is decided at run time, that branch is refused, not the
  // export (shape inference gave up on types the branch may never meet).
  bool typesUnfit_ = false;
  // An If whose branches differ in an output's shape, read by later kernels,
  // asks the walk to sink those kernels into its branches (at most kMaxSinks
  // times per export: each doubles what follows).
  static constexpr int kMaxSinks = 6;
  bool sinkRequested_ = false;
  int sinks_ = 0;
};

}  // namespace fuselens::cudaprog
