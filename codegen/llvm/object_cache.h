// The on-disk cache of compiled kernel objects, so a model opened twice (or a
// model whose kernels another model already compiled) skips LLVM. Entries are
// named by the kernel key (kernel_key.h) and live in
// $XDG_CACHE_HOME/fuselens/kernels (else ~/.cache/fuselens/kernels).
//
// Safe to share between processes: an entry is written to a temp file and
// renamed into place, so a reader sees a whole entry or none; each entry
// carries a header (magic, payload length, checksum), so a truncated or
// corrupt file reads as a miss and is recompiled, never trusted. Size is kept
// under a limit (FUSELENS_CACHE_MAX_MB, default 512) by dropping the entries
// used longest ago (a hit refreshes an entry's mtime). FUSELENS_CACHE=0 turns
// the cache off. No LLVM type here: the payload is opaque bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace fuselens {

class ObjectCache {
 public:
  // The cache the environment asks for, read at each call (tests change it):
  // disabled when FUSELENS_CACHE=0 or no directory can be named.
  static ObjectCache fromEnvironment();
  // A cache in `dir` holding at most maxBytes (tests, tools).
  ObjectCache(std::string dir, int64_t maxBytes);
  ObjectCache() = default;  // disabled

  bool enabled() const { return !dir_.empty(); }
  const std::string& dir() const { return dir_; }

  // The payload stored under key, or nothing when absent, unreadable or corrupt
  // (a corrupt entry is removed so the next store replaces it).
  std::optional<std::string> load(const std::string& key) const;
  // Stores atomically; failures (read-only disk, full disk) only cost a recompile later.
  void store(const std::string& key, const std::string& payload) const;
  // Drops the least recently used entries until the cache fits its limit.
  // Called once per compile, not per store: listing the folder is not free.
  void trim() const;

 private:
  std::string pathOf(const std::string& key) const;
  std::string dir_;
  int64_t maxBytes_ = 0;
};

}  // namespace fuselens
