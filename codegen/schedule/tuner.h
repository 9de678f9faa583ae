// The tuner: for each kernel of a graph, measures schedule candidates (MatMul
// register tile mr x nr, panels per cache block, loop order; parallel or not;
// for the other kernels: one thread or the pool, a lower parallel threshold,
// the vector width as a split of the innermost vectorized loop, with its
// outer part unrolled 2 or 4 times; for blocked convolutions: the register
// tile, pixels x output-channel blocks, ranked by loads per FMA)
// and keeps the fastest in a tuning log, keyed by the kernel's op signature and
// the host CPU (CpuTarget::key). compileGraph reads the log
// (CompileOptions::tuningLog, or $FUSELENS_TUNING_LOG) and uses a logged
// schedule for every kernel whose signature and host match.
//
// Candidates are pruned by a cost model before anything is measured: a tile
// must fit the register file (mr * nr/lanes accumulators + B vectors), and
// candidates are ranked by arithmetic intensity of the tile (FMAs per load)
// discounted by the work wasted on row/column tails; loop candidates by
// elements per thread against the pool's wake-up cost and by their tail's
// share of the loop. The best are measured in
// rank order until the time budget runs out. Each kernel is measured alone on
// seeded inputs, through the arena runtime, as the median of a few runs.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "codegen/compiler.h"
#include "codegen/schedule/schedule.h"

namespace fuselens {

struct TuningEntry {
  std::string target;     // CpuTarget::key()
  std::string signature;  // kernelSignature()
  Schedule schedule;
  double seconds = 0;         // the tuned kernel alone
  double defaultSeconds = 0;  // the default schedule, same measurement
};

class TuningLog {
 public:
  static Expected<TuningLog> load(const std::string& path);  // a missing file is an empty log
  Status save(const std::string& path) const;                // atomically
  // The log's JSON text; `where` names it in errors (tuning_log_json.cpp).
  static Expected<TuningLog> parse(const std::string& json, const std::string& where);
  std::optional<Schedule> find(const std::string& target, const std::string& signature) const;
  void put(TuningEntry e);  // replaces an entry with the same target and signature
  const std::vector<TuningEntry>& entries() const { return entries_; }

 private:
  std::vector<TuningEntry> entries_;
};

// "Fused[MatMul,Add,Relu](f32[128,768],f32[768,3072]c,f32[3072]c)->(f32[128,3072])":
// the ops of the kernel, its operand types, constants marked `c`.
std::string kernelSignature(const Graph& g, const Node& n);

struct TuneOptions {
  double budgetSeconds = 30;
  CompileOptions compile;  // opt level; its schedule is the baseline
  int runsPerCandidate = 5;
  size_t maxCandidatesPerKernel = 24;
};

struct KernelTuneResult {
  std::string kernel, signature;
  Schedule best;
  double defaultSeconds = 0, bestSeconds = 0;
  int measured = 0;  // candidates timed, baseline included
};

// Tunes every kernel of g that has candidates (MatMul / Gemm inside, or loops) within
// the budget, adding the winners to `log`. Progress is the fraction of the
// budget used; cancel stops between candidates and keeps what was found.
Expected<std::vector<KernelTuneResult>> tuneGraph(const Graph& g, const TuneOptions& opts,
                                                  TuningLog& log, const Progress& progress = {},
                                                  const CancelToken& cancel = {});

// The candidate schedules for an M x K x N product on target lanes/registers,
// best-ranked first (exposed for tests).
std::vector<Schedule> matmulCandidates(const Schedule& base, int64_t m, int64_t n, int64_t k,
                                       int lanes, int registers);
// The candidates for a kernel without a product, from its loop IR after the
// default steps, best-ranked first; steps name its loops (exposed for tests).
std::vector<Schedule> loopCandidates(const Schedule& base, const LoopFunc& scheduled, int lanes);
// The register tiles (ConvTiling) for a kernel holding a blocked convolution
// (ConvNCHWc), best-ranked first; empty when it holds none (exposed for tests).
std::vector<Schedule> convCandidates(const Schedule& base, const Graph& kernel, int lanes,
                                     int registers);

}  // namespace fuselens
