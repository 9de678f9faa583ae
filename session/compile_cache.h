// The compile cache: one entry per (graph, shape, target) on disk, beside the
// kernel cache ($XDG_CACHE_HOME/fuselens/modules, next to .../kernels), so a
// sweep in a fresh process knows which modules were compiled before, what
// they cost, and counts hits and misses.
//
// What an entry holds: the key's parts (graph hash, shapes, target), the
// kernel count and the seconds the first compile took. The machine code itself
// stays in the kernel cache (codegen/llvm/object_cache.h), one object per
// kernel: a JIT module is linked in process and cannot be stored whole, so a
// hit is an entry found whose every kernel then came from the kernel cache
// (a compile that still had to run LLVM counts as a miss). Entries carry a
// SHA-256 of their text; a corrupt one is refused with a sentence, removed,
// and the module compiled again. FUSELENS_CACHE=0 turns it off with the
// kernel cache.
#pragma once

#include <optional>
#include <string>

#include "codegen/compiler.h"
#include "core/ir/graph.h"
#include "core/support/cancel.h"
#include "core/support/status.h"

namespace fuselens {

class Session;

struct CompileCacheEntry {
  std::string graphHash;  // the model's graph (weights included) and the pipeline
  std::string shapes;     // "seq=64"
  std::string target;     // host CPU, features, threads, opt level
  size_t kernels = 0;
  double compileSeconds = 0;  // of the compile that stored it
};

class CompileCache {
 public:
  // Beside the kernel cache the environment names; disabled when that is off.
  static CompileCache fromEnvironment();
  explicit CompileCache(std::string dir) : dir_(std::move(dir)) {}
  CompileCache() = default;  // disabled

  bool enabled() const { return !dir_.empty(); }
  const std::string& dir() const { return dir_; }
  std::string pathOf(const CompileCacheEntry& e) const;

  // The entry stored for the key parts of `e`: nothing when absent, an error
  // sentence when the file is there but corrupt (it is removed).
  Expected<std::optional<CompileCacheEntry>> load(const CompileCacheEntry& key) const;
  void store(const CompileCacheEntry& e) const;  // atomically; failures cost a recompile

 private:
  std::string dir_;
};

// The graph hash of a compile cache key: `model` as text (symbolic dims
// included), its constants' bytes, and the pipeline (with any pass the sweep
// runs before it).
std::string compileCacheGraphHash(const Graph& model, const std::string& pipeline);
// The target part: host CPU, its features, threads and the LLVM opt level.
std::string compileCacheTarget();

// Session::compile through the cache. `key` gives graph hash and shapes (the
// target is filled in); `note` receives the sentence of a refused entry.
struct CachedCompile {
  bool hit = false;
  double seconds = 0;
  double firstSeconds = 0;  // a hit: what the compile that stored the entry took
};
Expected<CachedCompile> compileCached(Session& session, const CompileCache& cache,
                                      CompileCacheEntry key, std::string& note,
                                      const CancelToken& cancel, const CompileOptions& opts = {});

}  // namespace fuselens
