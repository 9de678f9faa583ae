// Sweeping a symbolic dim: the model run at every value of one dim (`run
// --sweep seq=1:300:37`), each run fed seeded random inputs and, when asked,
// checked against the eager reference on its own (unpadded) shape with the
// rounding-aware verdicts of `compare`. Two ways to get code for a value:
//   per shape  the dim bound to the value, the pipeline run and the module
//              compiled, once per distinct value;
//   buckets    the value padded up to the smallest bucket that holds it: the
//              pad-mask pass masks the padding where semantics need it, the
//              module is compiled once per bucket, inputs are padded with zeros
//              and outputs sliced back to the value.
//   dynamic    symbolic kernels (session/sweep_dynamic.h): every kernel whose
//              loop IR generalizes over the dim is compiled once and serves
//              every value; the graph is still planned per value (passes and
//              lowering, no LLVM), and kernels that do not generalize are
//              compiled per value.
// Every compile goes through the compile cache (session/compile_cache.h), so
// a second process finds the modules the first compiled.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/compare/rounding.h"
#include "core/ir/graph.h"
#include "core/support/cancel.h"
#include "core/support/status.h"

namespace fuselens {

struct SweepSpec {
  std::string dim;
  std::vector<int64_t> values;  // in the order given, each >= 1
};
// "seq=1:300:37" (start, stop inclusive, step) or "seq=1,2,7,64,300".
Expected<SweepSpec> parseSweepSpec(const std::string& text);
// "seq=32,64,128", "seq=pow2" or "seq=step:32" for the dim `dim`; generated
// buckets run up to the first that holds `upTo`. Ascending, each >= 1.
Expected<std::vector<int64_t>> parseBuckets(const std::string& text, const std::string& dim,
                                            int64_t upTo);

struct SweepRequest {
  SweepSpec sweep;
  std::vector<int64_t> buckets;  // empty: one compile per distinct value
  bool dynamic = false;          // symbolic kernels (no buckets)
  std::string pipeline;
  uint64_t seed = 0;
  bool checkEager = false;  // compiled outputs against eager on the unpadded shape
  bool padCheck = false;    // buckets: the padded, masked graph run eagerly, against the same
  CompareOptions compare;
};

struct SweepRun {
  int64_t value = 0;
  int64_t bucket = 0;         // the shape compiled for: the value itself per shape
  bool compiled = false;      // the first run of its shape or bucket compiled it (dynamic: the
                              // first run, and any run that compiled a kernel of its own)
  bool cacheHit = false;      // that compile found the module in the compile cache
  size_t kernels = 0;         // kernels of its module
  size_t kernelCompiles = 0;  // of them, compiled by LLVM for this run (not from a cache)
  size_t symbolicKernels = 0, verifiedSymbolic = 0;  // dynamic: served by a symbolic kernel
  double compileSeconds = 0, runSeconds = 0;
  double firstCompileSeconds = 0;  // a cache hit: its compile when the entry was stored
  int64_t elements = 0;            // elements of every tensor the run computed
  int64_t paddedElements = 0;      // of them, padding (0 per shape)
  std::optional<bool> match;       // with checkEager: every output within rounding
  std::string verdict;             // "within rounding", or the first output that is not
  std::optional<bool> padMatch;
  std::string padVerdict;
};

struct SweepReport {
  std::string dim;
  std::vector<int64_t> buckets;  // empty per shape
  std::vector<SweepRun> runs;
  size_t compiles = 0, cacheHits = 0;  // misses: compiles - cacheHits
  size_t kernelCompiles = 0;           // kernels LLVM compiled over the sweep
  bool dynamic = false;
  // dynamic: the symbolic kernels found, the kernels left per shape with why,
  // the sample lengths and the seconds it took (counted in compileSeconds).
  size_t symbolicKernels = 0;
  std::vector<std::string> perShapeKernels;
  std::vector<int64_t> symbolicSamples;
  double symbolicSeconds = 0;
  double compileSeconds = 0, runSeconds = 0;
  double firstCompileSeconds = 0;  // what the cache hits took when first compiled
  double paddingWaste = 0;         // padded elements / elements computed, over every run
  std::optional<bool> allMatch;    // with checkEager (and padCheck)
  std::vector<std::string> notes;  // compile-cache entries refused, each a sentence
  std::string cacheDir;            // the compile cache's folder; empty when off
  std::string mode() const {
    return dynamic ? "symbolic" : buckets.empty() ? "per-shape" : "buckets";
  }
  // "12 runs, 3 compiles (1 cache hit), compile 2.1 s, run 0.04 s, padding waste 18%, all match"
  std::string summary() const;
};

// Called after every run, with its index and the number of runs.
using SweepObserver = std::function<void(const SweepRun&, size_t index, size_t total)>;

// Runs the sweep over `model` (a graph whose dim `request.sweep.dim` is
// symbolic and every other dim bound); `label` names it in messages.
Expected<SweepReport> runSweep(const Graph& model, const std::string& label,
                               const SweepRequest& request, const SweepObserver& observer = {},
                               const CancelToken& cancel = {});

}  // namespace fuselens
