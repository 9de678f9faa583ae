// The memory plan as data: what memory-plan decided, in a form codegen (or the
// GUI) can read instead of parsing the pass's notes. The IR text format has no
// graph-level attributes, so the plan travels in the PassRecord of the
// memory-plan snapshot (PassRecord::bufferPlan) and refers to the values of
// that snapshot's graph by id (memory-plan does not change the graph).
//
// One arena: buffer b starts at bufferOffset[b] (buffers laid out in order,
// each aligned); a planned value lives at its buffer's offset. An alias
// (Reshape-like) shares the buffer of the value it reads; an in-place value
// shares the buffer of the input it overwrites.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/ids.h"

namespace fuselens {

struct BufferPlan {
  struct Entry {
    ValueId value;
    std::string name;   // the value's name, for display
    int buffer = -1;
    int64_t offset = 0;  // bytes from the arena's start
    int64_t bytes = 0;   // the value's own size
    enum class How { Fresh, Reused, InPlace, Alias } how = How::Fresh;
  };
  std::vector<int64_t> bufferBytes;   // size of each buffer (aligned)
  std::vector<int64_t> bufferOffset;  // where each buffer starts in the arena
  int64_t arenaBytes = 0;             // the sum of the buffer sizes
  std::vector<Entry> values;          // in topological order of their producers
  std::vector<ValueId> skipped;       // dynamic shapes: allocated at run time

  const Entry* find(ValueId v) const {
    for (const Entry& e : values)
      if (e.value == v) return &e;
    return nullptr;
  }
};

}  // namespace fuselens
