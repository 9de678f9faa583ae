// fuselens-dot: lays out BoxGraphs with Graphviz dot for the graph view, one
// request after another, so a request costs a layout and not a process start.
// Each request on stdin is a count of doubles and then the graph
// (encodeBoxGraph); each answer on stdout is a count and then the geometry
// (layOutWithDot), a count of 0 when the input was no graph or dot failed.
// Exits at the end of its input. The session spawns and kills these
// (session/graphview/dot_process.cpp), so dot never runs inside the app.
#include <unistd.h>

#include <cstdint>
#include <vector>

#include "session/graphview/dot_child.h"

namespace {

bool readAll(void* data, size_t bytes) {
  char* p = static_cast<char*>(data);
  while (bytes > 0) {
    const ssize_t n = read(0, p, bytes);
    if (n <= 0) return false;
    p += n;
    bytes -= size_t(n);
  }
  return true;
}

bool writeAll(const void* data, size_t bytes) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = write(1, p, bytes);
    if (n <= 0) return false;
    p += n;
    bytes -= size_t(n);
  }
  return true;
}

}  // namespace

int main() {
  uint64_t count = 0;
  while (readAll(&count, sizeof count)) {
    if (count > (uint64_t(1) << 28)) return 2;
    std::vector<double> in(count);
    if (!readAll(in.data(), count * sizeof(double))) return 2;
    fuselens::graphview::BoxGraph g;
    std::vector<double> out;
    if (fuselens::graphview::decodeBoxGraph(in, g)) out = fuselens::graphview::layOutWithDot(g);
    const uint64_t n = out.size();
    if (!writeAll(&n, sizeof n) || !writeAll(out.data(), n * sizeof(double))) return 3;
  }
  return 0;
}
