#include "codegen/cuda/cuda_c.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "codegen/cuda/cuda_emitter.h"
#include "codegen/kernel_plan.h"

namespace fuselens {
namespace {

using namespace cudaemit;

constexpr int64_t kBlock = 256;
constexpr int64_t kMaxGrid = 65535;

std::string signature(const LoopFunc& f, const Emitter& em, const std::string& name) {
  std::ostringstream o;
  o << "extern \"C\" __global__ void " << name << "(";
  for (size_t i = 0; i < f.params.size(); ++i) {
    const Buffer& b = f.buffer(f.params[i]);
    o << (i < f.numInputs ? "const " : "") << cudaTypeName(b.dtype) << "* " << em.buf(b.id) << ", ";
  }
  o << "unsigned char* fl_scratch)";
  return o.str();
}

void embedConstant(const Buffer& b, const Emitter& em, std::ostringstream& o) {
  o << "__device__ static const " << cudaTypeName(b.dtype) << " " << em.buf(b.id) << "["
    << std::max<int64_t>(b.numel(), 1) << "] = {";
  const TensorData& d = *b.data;
  for (int64_t i = 0; i < b.numel(); ++i) {
    if (i % 8 == 0) o << "\n  ";
    if (b.dtype == DType::F16 || b.dtype == DType::BF16)
      o << d.data<uint16_t>()[i];
    else if (isFloatType(b.dtype))
      o << floatLiteral(d.at(i), b.dtype);
    else
      o << intLiteral(int64_t(d.at(i)), b.dtype);
    o << ",";
  }
  if (b.numel() == 0) o << "0";
  o << "\n};\n";
}

// The ONNX node names a kernel stands for: a group's body nodes, else the node.
std::string originText(const Node& n) {
  std::string names;
  if (n.body)
    if (auto order = n.body->topoOrder())
      for (NodeId id : *order) {
        const std::string& name = n.body->node(id).name;
        if (!name.empty()) names += (names.empty() ? "" : ", ") + name;
      }
  if (names.empty()) names = n.name;
  for (char& c : names)  // a line break in a name would end the comment early
    if (c == '\n' || c == '\r') c = ' ';
  return names;
}

// Whether a Local buffer (a per-thread array) is used by more than one
// top-level statement: a Conv's accumulator is zeroed, accumulated and read by
// three; as separate stages each would have its own uninitialized copy.
bool localCrossesStages(const LoopFunc& f, const Emitter& em, const std::vector<StmtRef>& top) {
  Emitter probe = em;  // emitting has no effect on the kernel's own emitter
  std::vector<std::string> texts;
  for (const StmtRef& s : top) {
    std::ostringstream t;
    probe.stmt(s, 1, t);
    texts.push_back(t.str());
  }
  auto mentions = [](const std::string& text, const std::string& name) {
    for (size_t at = text.find(name + "["); at != std::string::npos;
         at = text.find(name + "[", at + 1))
      if (at == 0 || !(std::isalnum((unsigned char)text[at - 1]) || text[at - 1] == '_'))
        return true;
    return false;
  };
  for (const Buffer& b : f.buffers) {
    if (b.kind != BufferKind::Local) continue;
    int stages = 0;
    for (const std::string& t : texts) stages += mentions(t, em.buf(b.id));
    if (stages > 1) return true;
  }
  return false;
}

}  // namespace

const char* cudaTypeName(DType t) {
  switch (t) {
    case DType::F32:
      return "float";
    case DType::F64:
      return "double";
    case DType::F16:
      return "fl_f16";
    case DType::BF16:
      return "fl_bf16";
    case DType::I8:
      return "fl_i8";
    case DType::U8:
      return "fl_u8";
    case DType::I16:
      return "fl_i16";
    case DType::I32:
      return "fl_i32";
    case DType::I64:
      return "fl_i64";
    case DType::Bool:
      return "fl_bool";
  }
  return "void";
}

Schedule cudaSchedule() {
  Schedule s = Schedule::defaults();
  s.name = "cuda";
  s.parallelOuter = true;
  s.parallelMinWork = 0;
  s.vectorizeInner = false;
  s.reduceLanes = 0;
  s.matmul.enabled = false;
  return s;
}

Expected<CudaKernel> emitCudaKernel(const LoopFunc& f, std::string* source,
                                    const std::string& from) {
  CudaKernel k;
  k.name = f.name;
  if (!f.body)  // a driver or fallback kernel's placeholder: host code, no loop nest
    return Status::error("kernel " + f.name +
                         " runs on the host (driver or reference fallback) and has no CUDA form");
  Emitter em(f, f.name);
  std::vector<StmtRef> top;
  em.flatten(f.body, top);
  // A top-level local scalar would have to outlive its stage: run the whole body as one.
  bool shared = false;
  for (const StmtRef& s : top) shared |= s->kind == StmtKind::Let || s->kind == StmtKind::Assign;
  if (!shared && top.size() > 1) shared = localCrossesStages(f, em, top);
  if (shared) top = {f.body};

  std::ostringstream o;
  int64_t embedded = 0;
  for (const Buffer& b : f.buffers) {
    if (b.kind != BufferKind::Constant || !b.data) continue;
    embedded += b.numel();
    if (embedded > kMaxEmbeddedElements)
      return Status::error("constant '" + b.name + "' makes the kernel embed more than " +
                               std::to_string(kMaxEmbeddedElements) +
                               " elements in its CUDA source",
                           f.name);
    embedConstant(b, em, o);
  }
  int64_t scratchBytes = 0;
  std::map<int32_t, int64_t> offsets = scratchLayout(f, &scratchBytes);
  k.scratchBytes = scratchBytes;
  // A stage's opening: origins, signature, Local arrays and scratch temps.
  auto open = [&](const std::string& name) {
    if (!from.empty()) o << "// from: " << from << "\n";
    o << signature(f, em, name) << " {\n";
    for (const Buffer& b : f.buffers) {
      if (b.kind == BufferKind::Local)
        o << "  " << cudaTypeName(b.dtype) << " " << em.buf(b.id) << "["
          << std::max<int64_t>(b.numel(), 1) << "];\n";
      if (b.kind == BufferKind::Temp && em.inScratch_.count(b.id.index))
        o << "  " << cudaTypeName(b.dtype) << "* " << em.buf(b.id) << " = ("
          << cudaTypeName(b.dtype) << "*)(fl_scratch + " << offsets[b.id.index] << "LL);\n";
    }
  };
  for (size_t si = 0; si < top.size(); ++si) {
    const StmtRef& s = top[si];
    CudaStage st;
    st.name = f.name + "_s" + std::to_string(si);
    const bool parallel = s->kind == StmtKind::For && s->forKind == ForKind::Parallel && !shared;
    // Few long rows: one stage per reduction, each row split across blocks.
    std::vector<SplitStage> split;
    if ((parallel || (shared && s->kind == StmtKind::Seq)) &&
        emitSplitReduction(f, em, s, st.name, &k.scratchBytes, &split)) {
      for (SplitStage& part : split) {
        open(part.stage.name);
        o << part.body << "}\n\n";
        k.stages.push_back(std::move(part.stage));
      }
      continue;
    }
    open(st.name);
    std::ostringstream rows;
    if (parallel && emitConvStage(f, em, s, rows, st)) {
      o << rows.str();
    } else if (parallel && emitTiledMatMul(f, em, s, rows, st)) {
      o << rows.str();
    } else if (parallel && emitBlockRows(f, em, s, rows, st)) {
      o << rows.str();
    } else if (parallel && emitVectorized(f, em, s, rows, st)) {
      o << rows.str();
    } else if (s->kind == StmtKind::For && s->forKind == ForKind::Parallel && !shared) {
      st.extent = s->extent;
      st.block = std::min<int64_t>(kBlock, std::max<int64_t>(s->extent, 1));
      st.grid = std::min<int64_t>((s->extent + st.block - 1) / st.block, kMaxGrid);
      const std::string v = em.var(s->var);
      o << "  for (fl_i64 " << v << " = (fl_i64)blockIdx.x * blockDim.x + threadIdx.x; " << v
        << " < " << s->extent << "LL; " << v << " += (fl_i64)gridDim.x * blockDim.x) {\n";
      for (const StmtRef& c : s->body) em.stmt(c, 2, o);
      o << "  }\n";
    } else {
      o << "  if (blockIdx.x != 0 || threadIdx.x != 0) return;\n";
      em.stmt(s, 1, o);
    }
    o << "}\n\n";
    if (em.failed()) return Status::error(em.error(), f.name);
    k.stages.push_back(st);
  }
  for (size_t i = 0; i < f.params.size(); ++i) {
    const Buffer& b = f.buffer(f.params[i]);
    k.paramTypes.push_back(b.dtype);
    k.paramElements.push_back(b.numel());
    if (auto it = f.prepacked.find(b.id.index); it != f.prepacked.end()) {
      k.prepackedParams.push_back(int32_t(i));
      k.prepackedData.push_back(it->second);
    }
  }
  if (source) *source += o.str();
  return k;
}

CompileOptions cudaCompileOptions() {
  CompileOptions opts;
  opts.schedule = cudaSchedule();
  opts.tuningLog = "";    // CPU tuning results do not apply to the GPU
  opts.fallback = false;  // a CUDA module has no host kernels: unlowered ops are errors
  opts.drivers = false;
  return opts;
}

Expected<CudaModuleSource> emitCudaModule(const Graph& g, const Progress& progress,
                                          const CancelToken& cancel,
                                          const std::string& kernelPrefix) {
  auto plan = planKernels(g, cudaCompileOptions(), progress, cancel);
  if (!plan) return plan.status();
  CudaModuleSource m;
  m.aliases = plan->aliases;
  m.source = "// CUDA C generated by FuseLens for graph @" + g.name + "\n" + cudaPrelude();
  for (size_t i = 0; i < plan->funcs.size(); ++i) {
    plan->funcs[i].name = kernelPrefix + plan->funcs[i].name;
    auto k = emitCudaKernel(plan->funcs[i], &m.source, originText(g.node(plan->infos[i].node)));
    if (!k) return k.status();
    m.kernels.push_back(std::move(*k));
    m.infos.push_back(plan->infos[i]);
  }
  return m;
}

}  // namespace fuselens
