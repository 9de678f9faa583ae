// The manifest of a control-flow program (see cuda_program.h): programs ->
// steps -> kernels -> launch configuration, and where every crossing value
// lives, so a reader can follow what the launcher's host code does.
#include <nlohmann/json.hpp>

#include "codegen/cuda/cuda_program.h"

namespace fuselens {
namespace {

const char* slotKind(CudaSlot::Kind k) {
  switch (k) {
    case CudaSlot::Kind::Input:
      return "input";
    case CudaSlot::Kind::Internal:
      return "slot pool";
    case CudaSlot::Kind::Constant:
      return "weights";
  }
  return "?";
}

nlohmann::json kernelsJson(const CudaLaunchPlan& lp,
                           const std::map<std::string, PtxasReport>& ptxas) {
  nlohmann::json ks = nlohmann::json::array();
  for (const CudaKernel& k : lp.module.kernels) {
    nlohmann::json launches = nlohmann::json::array();
    for (const CudaStage& s : k.stages) {
      nlohmann::json l = {
          {"function", s.name}, {"grid", s.grid}, {"block", s.block}, {"extent", s.extent}};
      for (const auto& [sm, rep] : ptxas)
        if (auto it = rep.functions.find(s.name); it != rep.functions.end())
          l["ptxas"][sm] = {{"registers", it->second.registers},
                            {"spill_stores", it->second.spillStores},
                            {"spill_loads", it->second.spillLoads},
                            {"shared_bytes", it->second.sharedBytes}};
      launches.push_back(l);
    }
    ks.push_back({{"name", k.name}, {"scratch_bytes", k.scratchBytes}, {"launches", launches}});
  }
  return ks;
}

nlohmann::json programJson(const CudaProgram& p, const std::map<std::string, PtxasReport>& ptxas) {
  nlohmann::json slots = nlohmann::json::array(), steps = nlohmann::json::array();
  for (const CudaSlot& s : p.slots)
    slots.push_back({{"name", s.name},
                     {"type", TensorType::of(s.dtype, s.shape).str()},
                     {"bytes", s.bytes},
                     {"place", slotKind(s.kind)},
                     {"run_decides_shape", s.runShape},
                     {"index", s.index}});
  for (const CudaStep& st : p.steps) {
    nlohmann::json j = {{"node", st.node}, {"inputs", st.in}, {"outputs", st.out}};
    if (st.kind == CudaStep::Kind::Kernels) {
      j["kind"] = "kernels";
      j["weights_base"] = st.weightsBase;
      j["arena_bytes"] = st.plan->memory.blockBytes();
      j["kernels"] = kernelsJson(*st.plan, ptxas);
    } else {
      j["kind"] = st.kind == CudaStep::Kind::If     ? "if"
                  : st.kind == CudaStep::Kind::Loop ? "loop"
                                                    : "scan";
      j["condition"] = st.cond;
      nlohmann::json branches = nlohmann::json::array();
      for (const CudaBranch& b : st.branches)
        branches.push_back(b.program
                               ? nlohmann::json{{"program", b.program->id}, {"inputs", b.inputs}}
                               : nlohmann::json{{"refused", b.refusal}});
      j["branches"] = branches;
      if (st.kind != CudaStep::Kind::If)
        j["loop"] = {{"iteration", st.loop.iteration},
                     {"condition", st.loop.condition},
                     {"condition_out", st.loop.condOut},
                     {"carried", st.loop.a},
                     {"carried_next", st.loop.b},
                     {"scan_slices", st.loop.slices},
                     {"max_iterations", st.loop.maxIterations},
                     {"scan_inputs", st.loop.sliceIn},
                     {"scan_input_axes", st.loop.inAxis},
                     {"scan_output_axes", st.loop.outAxis}};
    }
    steps.push_back(j);
  }
  return {{"id", p.id},           {"graph", p.graph}, {"inputs", p.inputs},
          {"outputs", p.outputs}, {"slots", slots},   {"steps", steps}};
}

nlohmann::json tensors(const std::vector<CudaTensorSpec>& ts, const char* dir) {
  nlohmann::json a = nlohmann::json::array();
  for (size_t i = 0; i < ts.size(); ++i)
    a.push_back({{"name", ts[i].name},
                 {"dtype", std::string(dtypeName(ts[i].dtype))},
                 {"shape", ts[i].shape},
                 {"bytes", ts[i].bytes},
                 {"file", std::string(dir) + "/" + std::to_string(i) + ".npy"}});
  return a;
}

}  // namespace

std::string cudaProgramManifestJson(const CudaProgramPlan& plan, const std::string& name,
                                    const std::map<std::string, PtxasReport>& ptxas) {
  nlohmann::json programs = nlohmann::json::array();
  for (const CudaProgram* p : plan.programs) programs.push_back(programJson(*p, ptxas));
  nlohmann::json m = {
      {"format", "fuselens-cuda-program-1"},
      {"name", name},
      {"source", name + ".cu"},
      {"header", name + "_launcher.h"},
      {"library", "lib" + name + ".so"},
      {"runner", name + "_runner"},
      {"weights", {{"file", name + ".weights"}, {"bytes", plan.weights.size()}}},
      {"memory", {{"arena_bytes", plan.arenaBytes}, {"slot_bytes", plan.slotBytes}}},
      {"kernels", plan.kernels},
      {"top", plan.top->id},
      {"inputs", tensors(plan.inputs, "inputs")},
      {"outputs", tensors(plan.outputs, "reference")},
      {"programs", programs},
      {"note",
       "the host runs program 'top': each kernels step launches its kernels in order (every "
       "stage with its grid and block), an if step reads its condition slot back and runs one "
       "branch's program; slot indices are per program"}};
  return m.dump(2) + "\n";
}

}  // namespace fuselens
