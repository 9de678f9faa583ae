// Control flow on CUDA: a graph with If, Loop or Scan nodes (or values whose shapes
// are settled only by them) becomes a CudaProgram, the CUDA form of the CPU's
// driver kernels (codegen/driver/driver_kernel.h). The host decides which
// branch runs and how many iterations; every arithmetic step is a CUDA kernel
// of an ordinary launch plan (cuda_launch_plan.h).
//
//   graph  --specialize to the bound input types, node by node-->
//   steps: Kernels(segment plan) | If(cond, then program, else program)
//          | Loop(trip count, cond, body program) | Scan(slices, body program)
//
// A run of nodes between two control-flow nodes is a segment: a graph of its
// own whose inputs and outputs are the values crossing into and out of it,
// planned by planCudaLaunches with kernel names prefixed so segments share one
// .cu. Each body is a program of its own, specialized ahead of time to the
// types the node feeds it (a body is folded as the CPU driver folds it). The
// If's output types are its branches'; where they differ, the run decides the
// shape (a graph output may be such a value), and kernels that read it move
// into both branches (cuda_program_sink.cpp), each copy compiled for its
// branch's shape. A Loop's carried
// values must keep their types across iterations; a Loop's scan outputs need
// a trip count the export can see (a folded constant). What falls outside
// these (shapes that depend on data) is refused in one sentence naming the
// node; a branch whose body cannot take the bound types is kept as a refusal
// that the host reports only if the run takes that branch.
//
// Values crossing steps live in slots: program inputs (the caller's
// pointers), constants (the weights blob) or internal buffers of a static
// size. Program outputs are copied from their slot to the caller's buffer at
// the end. Segment arenas are dead between steps, so one arena of the largest
// segment's size serves every segment.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "codegen/cuda/cuda_launch_plan.h"
#include "codegen/cuda/ptxas.h"

namespace fuselens {

struct CudaProgram;

struct CudaSlot {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  int64_t bytes = 0;
  enum class Kind { Input, Internal, Constant };
  Kind kind = Kind::Internal;
  // Input: program input position; Internal: offset in the slot pool; Constant:
  // offset in the weights blob.
  int64_t index = 0;
  // The run decides the shape (which branch ran, how many iterations): `shape`
  // and `bytes` are the most it can hold. Only the top program's outputs may
  // be such values (the kernels after them would need other shapes).
  bool runShape = false;
};

struct CudaBranch {
  std::shared_ptr<const CudaProgram> program;  // null when refused
  std::string refusal;                         // why this branch cannot run with these types
  std::vector<int> inputs;                     // per body input: the slot feeding it
};

struct CudaStep {
  enum class Kind { Kernels, If, Loop, Scan };
  Kind kind = Kind::Kernels;
  std::string node;  // "node 'If_0' (If)" for messages
  // Kernels: plan.inputs[i] reads slot in[i], plan.outputs[i] writes slot out[i].
  std::shared_ptr<const CudaLaunchPlan> plan;
  std::shared_ptr<const Graph> segment;  // the graph the plan was made from
  int64_t weightsBase = 0;               // where the plan's weights start in the program's blob
  std::vector<int> in, out;
  // If: cond is the condition slot, branches[0] then, [1] else; out = node outputs.
  // Loop: in = the trip count and condition slots (-1 when omitted), then the
  // carried inputs; branches[0] the body, fed the iteration, condition,
  // carried A and its implicit inputs, writing condOut, carried B and one
  // slice of every scan; out = the node outputs (carried, then scans).
  int cond = -1;
  std::vector<CudaBranch> branches;
  struct LoopSlots {
    int iteration = -1, condition = -1, condOut = -1;
    std::vector<int> a, b;      // carried values, swapped after every iteration
    std::vector<int> slices;    // per scan output: one iteration's slice
    int64_t maxIterations = 0;  // what the scan outputs hold (0: no scan outputs)
    // Scan: per scan input its slice slot, axis and direction (the node input
    // is in[a.size() + j]); per scan output its axis and direction. The
    // sequence length is maxIterations; there is no condition.
    std::vector<int> sliceIn;
    std::vector<int64_t> inAxis, outAxis;
    std::vector<bool> inReverse, outReverse;
  } loop;
};

struct CudaProgram {
  int id = 0;  // unique in the tree, names the launcher's function
  std::string graph;
  std::vector<CudaSlot> slots;
  std::vector<int> inputs, outputs;  // slot per program input and output
  std::vector<CudaStep> steps;
};

// The whole tree: the top program plus what every program shares.
struct CudaProgramPlan {
  std::shared_ptr<const CudaProgram> top;
  std::vector<const CudaProgram*> programs;  // every program of the tree, children first
  std::string source;                        // the .cu: prelude once, every segment's kernels
  std::vector<unsigned char> weights;        // every segment's weights and slot constants
  int64_t arenaBytes = 0;                    // the largest segment arena
  int64_t slotBytes = 0;                     // internal slots of all programs, laid out once
  std::vector<CudaTensorSpec> inputs, outputs;
  int64_t kernels = 0;  // kernels of all segments
};

// Whether g needs a program: it has If, Loop or Scan nodes at the top.
bool cudaNeedsProgram(const Graph& g);

// Plans g (its inputs of static type) as a program. An error is one sentence
// naming the node or value that keeps it from the GPU.
Expected<CudaProgramPlan> planCudaProgram(const Graph& g, const Progress& progress = {},
                                          const CancelToken& cancel = {});

// Moves every node after If node `ifId` into both of its branches (the If's
// outputs become the graph's), so a branch's copies are specialized to that
// branch's shapes. cuda_program_sink.cpp.
Status sinkIntoBranches(Graph& g, NodeId ifId);

// A copy of node n of `from` added to `to`, reading `inputs` (values of `to`);
// its outputs keep their names, types and layouts. Returns the new node.
NodeId copyNodeInto(Graph& to, const Graph& from, const Node& n,
                    const std::vector<ValueId>& inputs);

// Every segment's kernels in the order a run meets them, as one launch plan:
// what the bundle's tables, header, weights file and device block follow
// (its memory block is the arena, then the slot pool). cuda_program_launcher.cpp.
CudaLaunchPlan flattenCudaProgram(const CudaProgramPlan& plan);

// The bundle launcher of a program plan and its header: the C API of
// cuda_bundle.h, run by host code, plus <name>_output_shape for outputs whose
// shape the run decides.
std::string cudaProgramLauncherHeader(const CudaProgramPlan& plan, const std::string& name);
std::string cudaProgramLauncherSource(const CudaProgramPlan& plan, const std::string& name);

// The program as JSON (the bundle's manifest.json and <name>.cuda.json): every
// program's slots and steps, each segment's kernels with their launches and,
// when given, ptxas figures per sm. cuda_program_manifest.cpp.
std::string cudaProgramManifestJson(const CudaProgramPlan& plan, const std::string& name,
                                    const std::map<std::string, PtxasReport>& ptxas = {});

}  // namespace fuselens
