// The pass table. Adding a pass: its file, and one row here.
#include "passes/registry.h"

#include <algorithm>
#include <cstdlib>

#include "passes/const_fold.h"
#include "passes/cse.h"
#include "passes/dce.h"
#include "passes/fuse_ops.h"
#include "passes/fuse_patterns.h"
#include "passes/layout.h"
#include "passes/memory_plan.h"
#include "passes/pad_mask.h"
#include "passes/reduce_precision.h"
#include "passes/simplify.h"

namespace fuselens {
namespace {

template <class P>
Expected<std::unique_ptr<Pass>> make(P* p) {
  return std::unique_ptr<Pass>(p);
}

std::vector<PassInfo> buildRegistry() {
  return {
      {"const-fold",
       "evaluate nodes whose inputs are all constants with the eager kernels",
       {"max-elements"},
       [](const PassOptions& o) -> Expected<std::unique_ptr<Pass>> {
         auto cap = intOption("const-fold", o, "max-elements", 65536, 0, int64_t(1) << 40);
         if (!cap) return cap.status();
         return make(new ConstFoldPass(*cap));
       }},
      {"cse",
       "merge nodes that compute the same thing and constants with the same bytes",
       {},
       [](const PassOptions&) { return make(new CsePass()); }},
      {"simplify",
       "algebraic simplification: a table of named local rewrites",
       {},
       [](const PassOptions&) { return make(new SimplifyPass()); }},
      {"dce",
       "remove nodes and constants that no graph output depends on",
       {},
       [](const PassOptions&) { return make(new DcePass()); }},
      {"fuse-ops",
       "fuse elementwise chains and anchor ops with their epilogues (TVM FuseOps)",
       {"max-ops", "max-inputs", "target", "live-budget", "multi-anchor", "split"},
       [](const PassOptions& o) -> Expected<std::unique_ptr<Pass>> {
         FuseOpsOptions f;
         auto t = o.find("target");
         f.target = t == o.end() ? "cpu" : t->second;
         if (f.target != "cpu" && f.target != "cuda")
           return Expected<std::unique_ptr<Pass>>::error(
               "option target=" + f.target + " must be cpu or cuda", "pass fuse-ops");
         auto maxOps = intOption("fuse-ops", o, "max-ops", 8, 1, 1 << 20);
         auto maxInputs = intOption("fuse-ops", o, "max-inputs", 16, 1, 1 << 20);
         auto live =
             intOption("fuse-ops", o, "live-budget", defaultLiveBudget(f.target), 1, 1 << 20);
         auto multi = intOption("fuse-ops", o, "multi-anchor", 1, 0, 1);
         for (const auto* e : {&maxOps, &maxInputs, &live, &multi})
           if (!*e) return e->status();
         f.multiAnchor = *multi != 0;
         f.maxOps = *maxOps, f.maxInputs = *maxInputs, f.liveBudget = *live;
         if (auto s = o.find("split"); s != o.end())
           for (size_t at = 0; at <= s->second.size();) {
             size_t end = std::min(s->second.find(';', at), s->second.size());
             if (end > at) f.split.insert(s->second.substr(at, end - at));
             at = end + 1;
           }
         return make(new FuseOpsPass(f));
       }},
      {"layout",
       "NCHW -> NCHW<b>c for regions of Conv, pooling and elementwise ops, transforms at the "
       "boundaries",
       {"block"},
       [](const PassOptions& o) -> Expected<std::unique_ptr<Pass>> {
         auto it = o.find("block");
         std::string b = it == o.end() ? "auto" : it->second;
         if (b != "8" && b != "16" && b != "auto")
           return Expected<std::unique_ptr<Pass>>::error(
               "option block=" + b +
                   " must be 8 or 16 (the floats of one AVX2 or AVX-512 vector) or auto (the "
                   "target's)",
               "pass layout");
         return make(new LayoutPass(b == "auto" ? 0 : std::stoi(b)));
       }},
      {"fuse-patterns",
       "named patterns (attention, LayerNorm, GELU, MatMul/Conv + bias + activation) as groups",
       {"multi-anchor"},
       [](const PassOptions& o) -> Expected<std::unique_ptr<Pass>> {
         auto multi = intOption("fuse-patterns", o, "multi-anchor", 1, 0, 1);
         if (!multi) return multi.status();
         return make(new FusePatternsPass(FusePatternsOptions{*multi != 0}));
       }},
      {"reduce-precision",
       "store every tensor between kernels and every initializer in f16 or bf16; arithmetic "
       "stays f32",
       {"dtype"},
       [](const PassOptions& o) -> Expected<std::unique_ptr<Pass>> {
         auto it = o.find("dtype");
         std::string d = it == o.end() ? "f16" : it->second;
         if (d != "f16" && d != "bf16")
           return Expected<std::unique_ptr<Pass>>::error(
               "option dtype=" + d + " must be f16 or bf16", "pass reduce-precision");
         return make(new ReducePrecisionPass(d == "f16" ? DType::F16 : DType::BF16));
       }},
      {"memory-plan",
       "liveness, buffer reuse and in-place updates; reports peak bytes before and after",
       {"alignment", "in-place"},
       [](const PassOptions& o) -> Expected<std::unique_ptr<Pass>> {
         auto align = intOption("memory-plan", o, "alignment", 64, 1, 4096);
         auto inPlace = intOption("memory-plan", o, "in-place", 1, 0, 1);
         for (const auto* e : {&align, &inPlace})
           if (!*e) return e->status();
         MemoryPlanOptions m;
         m.alignment = *align, m.inPlace = *inPlace != 0;
         return make(new MemoryPlanPass(m));
       }},
      {"pad-mask",
       "shape buckets: mask what padding a symbolic dim would change (softmax, sums, means)",
       {"dim"},
       [](const PassOptions& o) -> Expected<std::unique_ptr<Pass>> {
         auto it = o.find("dim");
         std::string dim = it == o.end() ? "seq" : it->second;
         if (dim.empty())
           return Expected<std::unique_ptr<Pass>>::error(
               "option dim= must name the symbolic dim that is padded", "pass pad-mask");
         return make(new PadMaskPass(dim));
       }},
  };
}

}  // namespace

const std::vector<PassInfo>& passRegistry() {
  static const std::vector<PassInfo> rows = buildRegistry();
  return rows;
}

const PassInfo* findPass(const std::string& name) {
  for (const auto& p : passRegistry())
    if (p.name == name) return &p;
  return nullptr;
}

Expected<int64_t> intOption(const std::string& pass, const PassOptions& opts,
                            const std::string& key, int64_t fallback, int64_t min, int64_t max) {
  auto it = opts.find(key);
  if (it == opts.end()) return fallback;
  char* end = nullptr;
  long long v = std::strtoll(it->second.c_str(), &end, 10);
  if (it->second.empty() || *end != '\0' || v < min || v > max)
    return Expected<int64_t>::error("option " + key + "=" + it->second +
                                        " must be an integer from " + std::to_string(min) + " to " +
                                        std::to_string(max),
                                    "pass " + pass);
  return int64_t(v);
}

}  // namespace fuselens
