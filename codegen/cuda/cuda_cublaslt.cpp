// See cuda_cublaslt.h: which groups cuBLASLt can run, as what call, and the
// manifest's record of the choice. The launcher text is cuda_cublaslt_text.cpp.
#include "codegen/cuda/cuda_cublaslt.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

namespace fuselens {
namespace {

// The group's body as a chain: the product, then the epilogue ops in order.
struct Chain {
  const Graph* body = nullptr;
  std::vector<NodeId> ops;  // ops[0] is the MatMul or Gemm
};

// Why not, or nothing: a body whose every op after the product feeds the next.
std::string chainOf(const Graph& g, const Node& n, Chain& c) {
  c.body = n.body ? n.body.get() : &g;
  auto order = n.body ? c.body->topoOrder() : std::vector<NodeId>{n.id};
  if (!order) return "its body has a cycle";
  const std::vector<NodeId>& ids = *order;
  for (NodeId id : ids) {
    const Node& m = c.body->node(id);
    const bool product = m.op == "MatMul" || m.op == "Gemm";
    if (c.ops.empty() != product)
      return product ? "it has a second product (" + m.name + "), one cuBLASLt call has one"
                     : "its " + m.op + " (" + m.name + ") runs before the product";
    if (!c.ops.empty()) {
      const ValueId prev = c.body->node(c.ops.back()).outputs[0];
      if (std::count(m.inputs.begin(), m.inputs.end(), prev) != 1 ||
          c.body->value(prev).users.size() != 1)
        return "its " + m.op + " (" + m.name + ") does not take the previous op's result alone";
    }
    if (m.outputs.size() != 1) return "its " + m.op + " (" + m.name + ") has several outputs";
    c.ops.push_back(id);
  }
  if (c.ops.empty()) return "it computes no MatMul or Gemm";
  const ValueId last = c.body->node(c.ops.back()).outputs[0];
  if (n.body && (c.body->outputs().size() != 1 || c.body->outputs()[0] != last))
    return "it writes a value besides the last op's result";
  return {};
}

// The operand as a param of kernel k (the node's own input, not a copy the
// compiler prepacked); nullopt when the body reads it some other way.
std::optional<CudaArg> argOf(const Node& n, const Chain& c, ValueId bodyValue,
                             const CudaLaunchPlan& plan, size_t k) {
  ValueId outer = bodyValue;
  if (n.body) {
    const auto& ins = c.body->inputs();
    auto at = std::find(ins.begin(), ins.end(), bodyValue);
    if (at == ins.end()) return std::nullopt;
    outer = n.inputs[size_t(at - ins.begin())];
  }
  const CudaKernel& kernel = plan.module.kernels[k];
  const KernelInfo& info = plan.module.infos[k];
  const size_t numInputs = kernel.paramTypes.size() - info.outputs.size();
  size_t next = 0, packed = 0;
  for (size_t p = 0; p < numInputs; ++p) {
    if (packed < kernel.prepackedParams.size() && kernel.prepackedParams[packed] == int32_t(p)) {
      ++packed;
      continue;
    }
    if (next < info.inputs.size() && info.inputs[next++] == outer) return plan.args[k][p];
  }
  return std::nullopt;
}

bool isBiasShape(const std::vector<int64_t>& s, int64_t n) {
  if (s.empty() || s.back() != n) return false;
  for (size_t i = 0; i + 1 < s.size(); ++i)
    if (s[i] != 1) return false;
  return true;
}

std::string dims(const std::vector<int64_t>& s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? "," : "") + std::to_string(s[i]);
  return t + "]";
}

// M, N, K, batch and strides of the product; "" or why not.
std::string shapeCall(const Graph& b, const Node& p, CudaLibraryCall& call) {
  auto sa = b.value(p.inputs[0]).type.staticShape();
  auto sb = b.value(p.inputs[1]).type.staticShape();
  auto sy = b.value(p.outputs[0]).type.staticShape();
  if (!sa || !sb || !sy) return "its product has a dynamic shape";
  if (sa->size() < 2 || sb->size() < 2)
    return "its product has a 1-D operand, which this offload does not map";
  if (p.op == "Gemm") {
    call.transA = p.attrs.getInt("transA", 0) != 0;
    call.transB = p.attrs.getInt("transB", 0) != 0;
    call.alpha = float(p.attrs.getFloat("alpha", 1.0));
  }
  const std::vector<int64_t>&A = *sa, &B = *sb;
  call.k = call.transA ? A[A.size() - 2] : A.back();
  call.n = call.transB ? B[B.size() - 2] : B.back();
  call.m = call.transA ? A.back() : A[A.size() - 2];
  auto batchOf = [](const std::vector<int64_t>& s) {
    int64_t n = 1;
    for (size_t i = 0; i + 2 < s.size(); ++i) n *= s[i];
    return n;
  };
  const int64_t ba = batchOf(A), bb = batchOf(B);
  const std::vector<int64_t> batchA(A.begin(), A.end() - 2), batchB(B.begin(), B.end() - 2);
  if (bb == 1 && !call.transA) {
    call.m *= ba;  // B shared: A's batches are more rows of one product
  } else if (ba == 1) {
    call.batch = bb, call.strideB = call.k * call.n, call.strideY = call.m * call.n;
  } else if (batchA == batchB) {
    call.batch = ba, call.strideA = call.m * call.k, call.strideB = call.k * call.n;
    call.strideY = call.m * call.n;
  } else {
    return "its batch dims " + dims(batchA) + " and " + dims(batchB) +
           " broadcast both ways, which one batch stride cannot express";
  }
  return {};
}

// The call for group n of kernel k, or why the generated kernel stays.
std::string planCall(const Graph& g, const Node& n, const CudaLaunchPlan& plan, size_t k,
                     CudaLibraryCall& call) {
  Chain c;
  if (std::string why = chainOf(g, n, c); !why.empty()) return why;
  const Graph& b = *c.body;
  for (NodeId id : c.ops)
    for (ValueId v : b.node(id).inputs)
      if (v.valid() && b.value(v).type.dtype != DType::F32)
        return "cuBLASLt offload takes f32 operands; " + b.node(id).name + " reads " +
               std::string(dtypeName(b.value(v).type.dtype));
  const Node& p = b.node(c.ops[0]);
  if (p.inputs.size() < 2) return "its product has fewer than two operands";
  if (std::string why = shapeCall(b, p, call); !why.empty()) return why;
  auto operand = [&](ValueId v, CudaArg& out) {
    auto a = argOf(n, c, v, plan, k);
    if (a) out = *a;
    return a.has_value();
  };
  if (!operand(p.inputs[0], call.a) || !operand(p.inputs[1], call.b))
    return "an operand of its product is not one of the kernel's params";
  auto bias = [&](ValueId v, const std::string& what) -> std::string {
    auto s = b.value(v).type.staticShape();
    if (!s || !isBiasShape(*s, call.n))
      return what + " has shape " + (s ? dims(*s) : "?") + ", not a bias of [" +
             std::to_string(call.n) + "]: a residual add, which no epilogue expresses";
    if (call.hasBias) return "it adds two biases (" + what + "); the epilogue takes one";
    if (!operand(v, call.bias)) return what + " is not one of the kernel's params";
    call.hasBias = true;
    return {};
  };
  if (p.op == "Gemm" && p.inputs.size() > 2 && p.inputs[2].valid()) {
    if (p.attrs.getFloat("beta", 1.0) != 1.0)
      return "its Gemm scales C by beta, which the bias epilogue cannot";
    if (std::string why = bias(p.inputs[2], "Gemm's C"); !why.empty()) return why;
  }
  bool act = false;
  for (size_t i = 1; i < c.ops.size(); ++i) {
    const Node& m = b.node(c.ops[i]);
    const std::string at = m.op + " (" + m.name + ")";
    if (m.op == "Add" && !act && m.inputs.size() == 2) {
      const ValueId prev = b.node(c.ops[i - 1]).outputs[0];
      const ValueId other = m.inputs[0] == prev ? m.inputs[1] : m.inputs[0];
      if (std::string why = bias(other, "the " + at + " operand"); !why.empty()) return why;
    } else if ((m.op == "Relu" || m.op == "Gelu") && !act) {
      if (m.op == "Gelu" && m.attrs.getString("approximate", "none") != "tanh")
        return "its " + at + " is the exact (erf) GELU; cuBLASLt's GELU epilogue is the tanh form";
      act = true;
      call.epilogue = m.op == "Relu" ? LtEpilogue::Relu : LtEpilogue::Gelu;
    } else {
      return "its epilogue has " + at +
             ", which cuBLASLt's epilogues (bias, ReLU, GELU) "
             "cannot express";
    }
  }
  if (call.hasBias)
    call.epilogue = call.epilogue == LtEpilogue::Relu   ? LtEpilogue::ReluBias
                    : call.epilogue == LtEpilogue::Gelu ? LtEpilogue::GeluBias
                                                        : LtEpilogue::Bias;
  const KernelInfo& info = plan.module.infos[k];
  call.y = plan.args[k][plan.module.kernels[k].paramTypes.size() - info.outputs.size()];
  return {};
}

}  // namespace

const char* ltEpilogueName(LtEpilogue e) {
  switch (e) {
    case LtEpilogue::Default:
      return "CUBLASLT_EPILOGUE_DEFAULT";
    case LtEpilogue::Relu:
      return "CUBLASLT_EPILOGUE_RELU";
    case LtEpilogue::Bias:
      return "CUBLASLT_EPILOGUE_BIAS";
    case LtEpilogue::ReluBias:
      return "CUBLASLT_EPILOGUE_RELU_BIAS";
    case LtEpilogue::Gelu:
      return "CUBLASLT_EPILOGUE_GELU";
    case LtEpilogue::GeluBias:
      return "CUBLASLT_EPILOGUE_GELU_BIAS";
  }
  return "?";
}

Expected<CudaLibraryOptions> parseCudaLibraryOptions(const std::string& mode,
                                                     const std::vector<std::string>& groups) {
  CudaLibraryOptions o;
  if (mode != "none" && mode != "cublaslt")
    return Status::error("'" + mode + "' is not a CUDA library: use cublaslt or none",
                         "--cuda-library");
  o.mode = mode;
  for (const std::string& g : groups) {
    const size_t eq = g.rfind('=');
    const std::string what = eq == std::string::npos ? "" : g.substr(eq + 1);
    if (eq == 0 || (what != "cublaslt" && what != "generated"))
      return Status::error("'" + g + "' is not NAME=cublaslt or NAME=generated",
                           "--cuda-library-group");
    o.groups[g.substr(0, eq)] = what;
  }
  return o;
}

std::string cudaLibraryControlFlowRefusal() {
  return "cuBLASLt offload covers graphs without If, Loop or Scan, and this one has control flow "
         "(its kernels are planned per segment)";
}

Status applyCudaLibrary(const Graph& g, CudaLaunchPlan& plan, const CudaLibraryOptions& o) {
  plan.library.clear();
  if (!o.any()) return Status::ok();
  std::set<std::string> named;
  for (size_t k = 0; k < plan.module.kernels.size(); ++k) {
    const Node& n = g.node(plan.module.infos[k].node);
    auto given = o.groups.find(n.name);
    if (given != o.groups.end()) named.insert(n.name);
    const std::string want = given != o.groups.end() ? given->second : o.mode;
    CudaLibraryChoice choice;
    if (plan.gemmShapes[k].size() != 3) {
      choice.why = "it computes no MatMul or Gemm";
    } else if (want != "cublaslt") {
      choice.why = given != o.groups.end() ? "--cuda-library-group asked for the generated kernel"
                                           : "--cuda-library is none";
    } else {
      auto call = std::make_shared<CudaLibraryCall>();
      choice.why = planCall(g, n, plan, k, *call);
      if (choice.why.empty()) choice.call = std::move(call);
    }
    plan.library.push_back(std::move(choice));
  }
  for (const auto& [name, what] : o.groups)
    if (!named.count(name))
      return Status::error(
          "the graph has no kernel group named '" + name + "' (manifest.json lists the groups)",
          "--cuda-library-group");
  return Status::ok();
}

nlohmann::json cudaLibraryJson(const CudaLaunchPlan& plan, size_t k) {
  if (k >= plan.library.size()) return nullptr;
  const CudaLibraryChoice& c = plan.library[k];
  if (!c.call) return {{"engine", "generated"}, {"why", c.why}};
  const CudaLibraryCall& l = *c.call;
  return {{"engine", "cublaslt"},
          {"epilogue", ltEpilogueName(l.epilogue)},
          {"m", l.m},
          {"n", l.n},
          {"k", l.k},
          {"batch", l.batch},
          {"trans_a", l.transA},
          {"trans_b", l.transB},
          {"alpha", l.alpha}};
}

}  // namespace fuselens
