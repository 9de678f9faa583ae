// Internal to the dataflow primitives (schedule_dataflow.cpp,
// schedule_inline.cpp): the kernel's top-level nests, the nest writing a temp,
// and affine accesses split into a per-iteration base and an offset range.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <vector>

#include "codegen/schedule/schedule_ir_util.h"

namespace fuselens::sched {

constexpr int64_t kMaxSlice = 16384;  // elements a Local slice may hold (stack; CUDA local arrays)

// The caller (scheduleKernel) adds the kernel as the place.
inline Status refuse(const LoopFunc&, const std::string& why) { return Status::error(why); }

// The kernel's top-level statement list and the Allocate wrappers above it.
struct TopLevel {
  std::vector<StmtRef>* list = nullptr;
  std::vector<StmtRef> allocs;  // outermost first
};
TopLevel topLevel(LoopFunc& f);
// Removes temp b's Allocate from the wrapper chain; false when it is not there.
bool unwrapAllocate(const TopLevel& t, BufferId b);
bool allocatedAtTop(const TopLevel& t, BufferId b);
Expected<BufferId> tempNamed(const LoopFunc& f, const std::string& name);

// The one top-level nest storing b and its position.
struct Producer {
  size_t pos = 0;
  StmtRef nest;
};
Expected<Producer> producerOf(const LoopFunc& f, const TopLevel& t, BufferId b);
int64_t countLoads(const StmtRef& s, BufferId b);
std::map<int32_t, int64_t> loopExtents(const StmtRef& s);

// An access's affine index: the part in `outer` vars (its base) and the rest,
// which ranges over [lo, hi] through loops in `inner`.
struct Access {
  std::map<int32_t, int64_t> base;
  int64_t lo = 0, hi = 0;
};
// Every access of b under s; nullopt when one is not affine that way or the bases differ.
std::optional<std::vector<Access>> accessesOf(const StmtRef& s, BufferId b,
                                              const std::set<int32_t>& outer,
                                              const std::map<int32_t, int64_t>& inner);
// A copy of s whose accesses of `from` go to `to` at (index - base - shift).
StmtRef rewriteAccesses(const LoopFunc& f, const StmtRef& s, BufferId from, BufferId to,
                        const Subst& sub, const std::set<int32_t>& outer, int64_t shift);
// The loops around the store of b inside nest p, outermost first, when p is
// a perfect chain down to a body of Lets and that one store.
std::optional<std::vector<StmtRef>> storeChain(const StmtRef& p, BufferId b, StmtRef* st);

}  // namespace fuselens::sched
