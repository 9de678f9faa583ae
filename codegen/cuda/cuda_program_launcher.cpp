// The bundle launcher of a control-flow program (cuda_program.h). The C API,
// tables, context and create/destroy are the plain launcher's
// (cuda_launcher.cpp), generated from a flat plan holding every segment's
// kernels in execution order; what differs is the run: one host function per
// program, which launches its segments' stages, reads an If's condition back
// from the device and calls the chosen branch's function, and copies its
// outputs to the caller's buffers at the end.
//
// Device memory: one block, the largest segment arena first, then every
// program's internal slots (values crossing steps) at fixed offsets.
#include <functional>
#include <map>
#include <sstream>

#include "codegen/cuda/cuda_bundle.h"
#include "codegen/cuda/cuda_program.h"
#include "codegen/cuda/cuda_program_emit.h"
#include "codegen/export/export_c.h"

namespace fuselens {
namespace {

constexpr int64_t kSlotAlign = 256;

int64_t slotsBase(const CudaProgramPlan& plan) {
  return (plan.arenaBytes + kSlotAlign - 1) / kSlotAlign * kSlotAlign;
}

// Every Kernels step of the tree in the order a run meets them (a branch's
// steps at its If), with the global index of its first kernel.
void walkSegments(const CudaProgram& p, const std::function<void(const CudaStep&)>& fn) {
  for (const CudaStep& st : p.steps) {
    if (st.kind == CudaStep::Kind::Kernels) fn(st);
    for (const CudaBranch& b : st.branches)
      if (b.program) walkSegments(*b.program, fn);
  }
}

class ProgramEmitter {
 public:
  ProgramEmitter(const CudaProgramPlan& plan, const std::string& name) : plan_(plan), n_(name) {
    int next = 0;
    walkSegments(*plan.top, [&](const CudaStep& st) {
      firstKernel_[&st] = next;
      next += int(st.plan->module.kernels.size());
    });
  }

  std::string run() {
    o_ << "// An integer or bool of `bytes` bytes read back from the device (the host's "
          "decisions).\n"
       << "[[maybe_unused]] static cudaError_t fl_read_int(const unsigned char* p, int bytes, "
          "cudaStream_t s, long "
          "long* out) {\n"
       << "  unsigned char b[8] = {};\n"
       << "  cudaError_t e = cudaMemcpyAsync(b, p, bytes, cudaMemcpyDeviceToHost, s);\n"
       << "  if (e == cudaSuccess) e = cudaStreamSynchronize(s);\n"
       << "  if (bytes == 8) { long long v; memcpy(&v, b, 8); *out = v; }\n"
       << "  else if (bytes == 4) { int v; memcpy(&v, b, 4); *out = v; }\n"
       << "  else *out = b[0] != 0;\n  return e;\n}\n\n"
       << "// The bytes of a value whose shape the run decided.\n"
       << "[[maybe_unused]] static long long fl_run_bytes(" << n_
       << "_ctx* ctx, int slot, long long elem) {\n"
       << "  long long n = 1;\n"
       << "  for (int d = 0; d < ctx->runRank[slot]; ++d) n *= ctx->runDims[slot][d];\n"
       << "  return n * elem;\n}\n\n";
    outputShapes();
    for (const CudaProgram* p : plan_.programs)
      o_ << "static int fl_p" << p->id << "(" << n_
         << "_ctx* ctx, unsigned char* const* in, unsigned char* const* out, cudaStream_t s);\n";
    o_ << "\n";
    for (const CudaProgram* p : plan_.programs) program(*p);
    o_ << "extern \"C\" {\n"
       << "int " << n_ << "_run_device(" << n_
       << "_ctx* ctx, const void* const* in, void* const* out, void* stream_) {\n"
       << "  cudaStream_t s = stream_ ? (cudaStream_t)stream_ : ctx->stream;\n"
       << "  return fl_p" << plan_.top->id
       << "(ctx, (unsigned char* const*)in, (unsigned char* const*)out, s);\n}\n\n"
       << "int " << n_ << "_run(" << n_ << "_ctx* c, const void* const* in, void* const* out) {\n"
       << "  fl_error[0] = 0;\n"
       << "  auto fl_t0 = std::chrono::steady_clock::now();\n"
       << "  for (int i = 0; i < kInputs; ++i) FL_CHECK(cudaMemcpyAsync(c->in[i], in[i], "
          "fl_inputs[i].bytes, cudaMemcpyHostToDevice, c->stream), \"copy an input in\");\n"
       << "  if (int rc = " << n_
       << "_run_device(c, (const void* const*)c->in, c->out, c->stream)) return rc;\n"
       << "  for (int i = 0; i < kOutputs; ++i) FL_CHECK(cudaMemcpyAsync(out[i], c->out[i], "
          "fl_outputs[i].bytes, cudaMemcpyDeviceToHost, c->stream), \"copy an output out\");\n"
       << "  FL_CHECK(cudaStreamSynchronize(c->stream), \"run the kernels\");\n"
       << "  // Kernel k's time is its last launch's (a branch not taken keeps 0).\n"
       << "  for (int k = 0; k < kKernels; ++k) if (cudaEventElapsedTime(&c->kernelMs[k], "
          "c->ev[k], c->ev[k + 1]) != cudaSuccess) c->kernelMs[k] = 0;\n"
       << "  // The host decides between segments, so the run is timed on the host.\n"
       << "  c->runMs = std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() "
          "- fl_t0).count();\n  return 0;\n}\n}  // extern \"C\"\n";
    return o_.str();
  }

 private:
  // <name>_output_shape: the static shape, or the one the last run decided.
  void outputShapes() {
    const CudaProgram& top = *plan_.top;
    std::string ranks, dims, runSlots;
    for (int s : top.outputs) {
      const CudaSlot& slot = top.slots[size_t(s)];
      std::vector<int64_t> d = slot.shape;
      d.resize(8, 0);
      ranks += std::to_string(std::min<size_t>(slot.shape.size(), 8)) + ", ";
      dims += "{" + dimsText(d) + "}, ";
      runSlots += std::to_string(slot.runShape ? s : -1) + ", ";
    }
    o_ << "static const int fl_out_rank[] = {" << ranks << "0};\n"
       << "static const long long fl_out_dims[][8] = {" << dims << "{0}};\n"
       << "static const int fl_out_run_slot[] = {" << runSlots << "-1};\n"
       << "extern \"C\" int " << n_ << "_output_shape(" << n_
       << "_ctx* c, int i, int64_t dims[8]) {\n"
       << "  const int s = fl_out_run_slot[i];\n"
       << "  const int rank = s >= 0 ? c->runRank[s] : fl_out_rank[i];\n"
       << "  for (int d = 0; d < rank; ++d) dims[d] = s >= 0 ? c->runDims[s][d] : "
          "fl_out_dims[i][d];\n"
       << "  return rank;\n}\n\n";
  }

  std::string slotExpr(const CudaProgram& p, int s) const {
    const CudaSlot& slot = p.slots[size_t(s)];
    switch (slot.kind) {
      case CudaSlot::Kind::Input:
        return "in[" + std::to_string(slot.index) + "]";
      case CudaSlot::Kind::Internal:
        return "(ctx->arena + " + std::to_string(slotsBase(plan_) + slot.index) + "LL)";
      case CudaSlot::Kind::Constant:
        return "(ctx->weights + " + std::to_string(slot.index) + "LL)";
    }
    return "0";
  }

  std::string argExpr(const CudaStep& st, const CudaArg& a) const {
    switch (a.kind) {
      case CudaArg::Kind::Input:
        return "v[" + std::to_string(st.in[size_t(a.index)]) + "]";
      case CudaArg::Kind::Output:
        return "v[" + std::to_string(st.out[size_t(a.index)]) + "]";
      case CudaArg::Kind::Arena:
        return "(ctx->arena + " + std::to_string(a.index) + "LL)";
      case CudaArg::Kind::Weights:
        return "(ctx->weights + " + std::to_string(st.weightsBase + a.index) + "LL)";
    }
    return "0";
  }

  void program(const CudaProgram& p) {
    o_ << "// graph '" << p.graph << "'\n"
       << "static int fl_p" << p.id << "(" << n_
       << "_ctx* ctx, unsigned char* const* in, unsigned char* const* out, cudaStream_t s) {\n"
       << "  (void)in; (void)out;\n  unsigned char* v[" << p.slots.size() + 1 << "] = {};\n";
    for (size_t i = 0; i < p.slots.size(); ++i)
      o_ << "  v[" << i << "] = " << slotExpr(p, int(i)) << ";\n";
    for (const CudaStep& st : p.steps) {
      if (st.kind == CudaStep::Kind::Kernels) kernels(st);
      if (st.kind == CudaStep::Kind::If) branchOn(p, st);
      if (st.kind == CudaStep::Kind::Loop) cudaprog::emitLoopStep(o_, p, st);
      if (st.kind == CudaStep::Kind::Scan) cudaprog::emitScanStep(o_, p, st);
    }
    for (size_t i = 0; i < p.outputs.size(); ++i) {
      const CudaSlot& slot = p.slots[size_t(p.outputs[i])];
      const std::string bytes = slot.runShape
                                    ? "fl_run_bytes(ctx, " + std::to_string(p.outputs[i]) + ", " +
                                          std::to_string(dtypeSize(slot.dtype)) + ")"
                                    : std::to_string(slot.bytes) + "LL";
      if (slot.bytes > 0)
        o_ << "  FL_CHECK(cudaMemcpyAsync(out[" << i << "], v[" << p.outputs[i] << "], " << bytes
           << ", cudaMemcpyDeviceToDevice, s), \"copy output '" << slot.name << "' of graph '"
           << p.graph << "'\");\n";
    }
    o_ << "  return 0;\n}\n\n";
  }

  void kernels(const CudaStep& st) {
    const CudaLaunchPlan& lp = *st.plan;
    int k = firstKernel_.at(&st);
    o_ << "  // " << st.node << "\n";
    for (size_t i = 0; i < lp.module.kernels.size(); ++i, ++k) {
      const CudaKernel& kernel = lp.module.kernels[i];
      const std::vector<CudaArg>& args = lp.args[i];
      const size_t numInputs = kernel.paramTypes.size() - lp.module.infos[i].outputs.size();
      o_ << "  FL_CHECK(cudaEventRecord(ctx->ev[" << k << "], s), \"record an event\");\n";
      for (const CudaStage& stage : kernel.stages) {
        o_ << "  FL_LAUNCH(" << stage.name << ", " << stage.grid << ", " << stage.block << ", s, ";
        for (size_t a = 0; a < kernel.paramTypes.size(); ++a)
          o_ << "(" << (a < numInputs ? "const " : "") << cudaTypeName(kernel.paramTypes[a]) << "*)"
             << argExpr(st, args[a]) << ", ";
        o_ << argExpr(st, args.back()) << ");\n"
           << "  FL_CHECK(cudaGetLastError(), \"launch " << stage.name << "\");\n";
      }
      o_ << "  FL_CHECK(cudaEventRecord(ctx->ev[" << k + 1 << "], s), \"record an event\");\n";
    }
    for (const CudaLaunchPlan::OutputCopy& c : lp.copies)
      o_ << "  FL_CHECK(cudaMemcpyAsync(v[" << st.out[size_t(c.output)] << "], "
         << argExpr(st, c.from) << ", " << c.bytes
         << "LL, cudaMemcpyDeviceToDevice, s), \"copy a segment output\");\n";
  }

  // The host reads the condition (one element) and runs one branch.
  void branchOn(const CudaProgram& p, const CudaStep& st) {
    const CudaSlot& c = p.slots[size_t(st.cond)];
    o_ << "  {  // " << st.node << ": the host reads the condition and picks the branch\n"
       << "    unsigned char fl_c[8] = {};\n"
       << "    FL_CHECK(cudaMemcpyAsync(fl_c, v[" << st.cond << "], " << c.bytes
       << ", cudaMemcpyDeviceToHost, s), \"read a condition\");\n"
       << "    FL_CHECK(cudaStreamSynchronize(s), \"compute a condition\");\n"
       << "    bool fl_taken = false;\n"
       << "    for (int i = 0; i < " << c.bytes << "; ++i) fl_taken |= fl_c[i] != 0;\n";
    for (size_t b = 0; b < st.branches.size(); ++b) {
      const CudaBranch& br = st.branches[b];
      o_ << (b == 0 ? "    if (fl_taken) {\n" : "    } else {\n");
      if (!br.program) {
        o_ << "      snprintf(fl_error, sizeof fl_error, \"%s\", " << cString(br.refusal)
           << ");\n      return 1;\n";
        continue;
      }
      o_ << "      unsigned char* bi[] = {";
      for (int s : br.inputs) o_ << "v[" << s << "], ";
      o_ << "nullptr};\n      unsigned char* bo[] = {";
      for (int s : st.out) o_ << "v[" << s << "], ";
      o_ << "nullptr};\n      if (int rc = fl_p" << br.program->id
         << "(ctx, bi, bo, s)) return rc;\n";
      for (size_t k = 0; k < st.out.size(); ++k)
        if (p.slots[size_t(st.out[k])].runShape)
          cudaprog::emitRunShape(o_, st.out[k],
                                 br.program->slots[size_t(br.program->outputs[k])].shape, "      ");
    }
    o_ << "    }\n  }\n";
  }

  const CudaProgramPlan& plan_;
  std::string n_;
  std::ostringstream o_;
  std::map<const CudaStep*, int> firstKernel_;
};

}  // namespace

CudaLaunchPlan flattenCudaProgram(const CudaProgramPlan& plan) {
  CudaLaunchPlan flat;
  flat.inputs = plan.inputs;
  flat.outputs = plan.outputs;
  flat.weights = plan.weights;
  flat.memory.arenaBytes = slotsBase(plan) + plan.slotBytes;
  flat.module.source = plan.source;
  walkSegments(*plan.top, [&](const CudaStep& st) {
    const CudaLaunchPlan& lp = *st.plan;
    for (size_t k = 0; k < lp.module.kernels.size(); ++k) {
      flat.module.kernels.push_back(lp.module.kernels[k]);
      flat.module.infos.push_back(lp.module.infos[k]);
      flat.args.push_back(lp.args[k]);
      flat.gemmShapes.push_back(lp.gemmShapes[k]);
    }
  });
  return flat;
}

std::string cudaProgramLauncherHeader(const CudaProgramPlan& plan, const std::string& name) {
  std::string h = cudaLauncherHeader(flattenCudaProgram(plan), name);
  const std::string extra =
      "/* Control flow: the host reads conditions and trip counts back from the device\n"
      " * between kernels. An output whose shape the run decides (which If branch ran,\n"
      " * how many Loop iterations) has @N@_output_elements/_bytes as the most it holds;\n"
      " * after a run, @N@_output_shape gives its shape (the rank; dims gets that many). */\n"
      "#define @N@_RUN_SHAPES 1\n"
      "int @N@_output_shape(@N@_ctx* ctx, int i, int64_t dims[8]);\n";
  std::string e = extra;
  for (size_t at; (at = e.find("@N@")) != std::string::npos;) e.replace(at, 3, name);
  h.insert(h.rfind("#ifdef __cplusplus"), e);
  return h;
}

std::string cudaProgramLauncherSource(const CudaProgramPlan& plan, const std::string& name) {
  // The plain launcher up to its run functions, then the program's; the
  // context gains the shapes the run decides.
  std::string s = cudaLauncherSource(flattenCudaProgram(plan), name);
  const size_t at = s.find("int " + name + "_run_device(");
  s = s.substr(0, at) + "}  // extern \"C\"\n\n";
  s.insert(s.find("#include <cstring>"), "#include <chrono>\n");
  size_t slots = 1;
  for (const CudaProgram* p : plan.programs) slots = std::max(slots, p->slots.size());
  const std::string ctx = "struct " + name + "_ctx {\n";
  s.insert(s.find(ctx), "constexpr int kRunSlots = " + std::to_string(slots) + ";\n");
  // The context's fields grow after runMs (the plain launcher may add more
  // after it, such as cuBLASLt's handle).
  const std::string after = "  float runMs = 0;\n";
  s.insert(s.find(after, s.find(ctx)) + after.size(),
           "  long long runDims[kRunSlots][8] = {};\n  int runRank[kRunSlots] = {};\n");
  return s + ProgramEmitter(plan, name).run();
}

}  // namespace fuselens
