// Line diff: Myers' O((N+M)·D) greedy algorithm over line ids, keeping the
// frontier of every step so the edit script can be walked back. Common
// prefix and suffix are trimmed first: a pass usually rewrites a small part
// of a long IR text.
#include "session/pass_diff.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>

#include "core/ir/printer.h"
#include "session/diff_align.h"

namespace fuselens {
namespace {

std::vector<std::string> splitLines(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < s.size()) {
    size_t end = s.find('\n', start);
    if (end == std::string::npos) end = s.size();
    out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// The edit script of a[0..n) against b[0..m) as ids; false when it needs more
// than maxD edits.
bool myers(const std::vector<int>& a, const std::vector<int>& b, size_t maxD,
           std::vector<DiffLine::Kind>& script) {
  const int n = int(a.size()), m = int(b.size()), max = n + m;
  const int limit = int(std::min<size_t>(maxD, size_t(max)));
  const int offset = max + 1;
  std::vector<int> v(2 * size_t(max) + 3, 0);
  // The frontier before each step d, only diagonals -d-1..d+1 (all that step d
  // reads): memory grows with D², not with D·(N+M).
  std::vector<std::vector<int>> trace;
  for (int d = 0; d <= limit; ++d) {
    trace.emplace_back(v.begin() + (offset - d - 1), v.begin() + (offset + d + 2));
    for (int k = -d; k <= d; k += 2) {
      int x = (k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1]))
                  ? v[offset + k + 1]
                  : v[offset + k - 1] + 1;
      int y = x - k;
      while (x < n && y < m && a[x] == b[y]) ++x, ++y;
      v[offset + k] = x;
      if (x >= n && y >= m) {
        // Walk back through the frontiers, collecting the script in reverse.
        std::vector<DiffLine::Kind> rev;
        int cx = n, cy = m;
        for (int dd = d; dd > 0; --dd) {
          const std::vector<int>& snap = trace[size_t(dd)];
          auto pv = [&](int k) { return snap[size_t(k + dd + 1)]; };
          int ck = cx - cy;
          bool down = ck == -dd || (ck != dd && pv(ck - 1) < pv(ck + 1));
          int pk = down ? ck + 1 : ck - 1;
          int px = pv(pk), py = px - pk;
          while (cx > px + (down ? 0 : 1) && cy > py + (down ? 1 : 0))
            rev.push_back(DiffLine::Kind::Same), --cx, --cy;
          rev.push_back(down ? DiffLine::Kind::Added : DiffLine::Kind::Removed);
          cx = px, cy = py;
        }
        while (cx > 0 && cy > 0) rev.push_back(DiffLine::Kind::Same), --cx, --cy;
        script.assign(rev.rbegin(), rev.rend());
        return true;
      }
    }
  }
  return false;
}

std::string nodeKey(const Graph& g, const Node& n) {
  if (!n.name.empty()) return n.name;
  return n.outputs.empty() ? "#" + std::to_string(n.id.index) : "%" + g.value(n.outputs[0]).name;
}

// What the node computes, in names: op, inputs, outputs with types, attributes
// compared separately.
std::string signature(const Graph& g, const Node& n) {
  std::string s = n.domain + "." + n.op + "(";
  for (ValueId v : n.inputs) s += (v.valid() ? g.value(v).name : "") + ",";
  s += ")->";
  for (ValueId v : n.outputs) s += g.value(v).name + ":" + g.value(v).type.str() + ",";
  if (n.body) s += "{" + printGraph(*n.body) + "}";
  return s;
}

}  // namespace

std::vector<DiffLine> diffLines(const std::string& aText, const std::string& bText,
                                size_t maxEdits) {
  std::vector<std::string> a = splitLines(aText), b = splitLines(bText);
  size_t pre = 0;
  while (pre < a.size() && pre < b.size() && a[pre] == b[pre]) ++pre;
  size_t suf = 0;
  while (suf < a.size() - pre && suf < b.size() - pre &&
         a[a.size() - 1 - suf] == b[b.size() - 1 - suf])
    ++suf;
  std::unordered_map<std::string, int> ids;
  auto id = [&](const std::string& s) { return ids.emplace(s, int(ids.size())).first->second; };
  std::vector<int> ma, mb;
  for (size_t i = pre; i < a.size() - suf; ++i) ma.push_back(id(a[i]));
  for (size_t i = pre; i < b.size() - suf; ++i) mb.push_back(id(b[i]));

  std::vector<DiffLine> out;
  for (size_t i = 0; i < pre; ++i) out.push_back({DiffLine::Kind::Same, a[i]});
  std::vector<DiffLine::Kind> script;
  if (myers(ma, mb, maxEdits, script)) {
    size_t i = pre, j = pre;
    for (DiffLine::Kind k : script) {
      if (k == DiffLine::Kind::Same)
        out.push_back({k, a[i++]}), ++j;
      else if (k == DiffLine::Kind::Removed)
        out.push_back({k, a[i++]});
      else
        out.push_back({k, b[j++]});
    }
  } else {
    for (size_t i = pre; i < a.size() - suf; ++i) out.push_back({DiffLine::Kind::Removed, a[i]});
    for (size_t i = pre; i < b.size() - suf; ++i) out.push_back({DiffLine::Kind::Added, b[i]});
  }
  for (size_t i = a.size() - suf; i < a.size(); ++i) out.push_back({DiffLine::Kind::Same, a[i]});
  return out;
}

PassDiff diffPass(const Snapshot& from, const Snapshot& to) {
  PassDiff d;
  d.from = from.label;
  d.to = to.label;
  const Graph &a = from.graph(), &b = to.graph();
  std::map<std::string, NodeId> inA, inB;
  for (NodeId id : a.nodeIds()) inA.emplace(nodeKey(a, a.node(id)), id);
  for (NodeId id : b.nodeIds()) inB.emplace(nodeKey(b, b.node(id)), id);
  // Which node of the newer snapshot stands for each original node.
  std::map<int32_t, std::string> holder;
  for (const auto& [key, id] : inB)
    for (NodeId o : b.node(id).origins) holder.emplace(o.index, key);

  for (const auto& [key, id] : inB) {
    const Node& nb = b.node(id);
    auto it = inA.find(key);
    if (it == inA.end()) {
      d.added.push_back({key, nb.op, ""});
      continue;
    }
    const Node& na = a.node(it->second);
    if (signature(a, na) != signature(b, nb) || !(na.attrs == nb.attrs))
      d.changed.push_back({key, nb.op, ""});
    else
      ++d.unchanged;
  }
  for (const auto& [key, id] : inA) {
    if (inB.count(key)) continue;
    const Node& na = a.node(id);
    std::string into;
    for (NodeId o : na.origins)
      if (auto h = holder.find(o.index); h != holder.end()) {
        into = h->second;
        break;
      }
    d.removed.push_back({key, na.op, into});
  }
  d.lines = diffLines(printGraph(a), printGraph(b));
  d.movedLines = markMoves(d.lines);
  for (const DiffLine& l : d.lines) {
    d.addedLines += l.kind == DiffLine::Kind::Added;
    d.removedLines += l.kind == DiffLine::Kind::Removed;
  }
  return d;
}

std::string PassDiff::summary() const {
  auto count = [](size_t n, const char* what) { return std::to_string(n) + " " + what; };
  return from + " -> " + to + ": " + count(added.size(), "nodes added") + ", " +
         count(removed.size(), "removed") + ", " + count(changed.size(), "changed") + ", " +
         count(unchanged, "unchanged") + "; IR +" + std::to_string(addedLines) + " -" +
         std::to_string(removedLines) + " lines" +
         (movedLines ? " (" + std::to_string(movedLines) + " moved)" : "");
}

std::string PassDiff::unifiedText(size_t context) const {
  std::string out;
  const size_t n = lines.size();
  size_t i = 0;
  while (i < n) {
    if (lines[i].kind != DiffLine::Kind::Same) {
      const bool added = lines[i].kind == DiffLine::Kind::Added;
      const char* mark = lines[i].moved ? (added ? "> " : "< ") : (added ? "+ " : "- ");
      out += mark + lines[i].text + "\n";
      ++i;
      continue;
    }
    size_t j = i;
    while (j < n && lines[j].kind == DiffLine::Kind::Same) ++j;
    const size_t run = j - i;
    const size_t head = i == 0 ? 0 : context, tail = j == n ? 0 : context;
    if (run > head + tail + 1) {
      for (size_t k = i; k < i + head; ++k) out += "  " + lines[k].text + "\n";
      out += "@@ " + std::to_string(run - head - tail) + " unchanged lines @@\n";
      for (size_t k = j - tail; k < j; ++k) out += "  " + lines[k].text + "\n";
    } else {
      for (size_t k = i; k < j; ++k) out += "  " + lines[k].text + "\n";
    }
    i = j;
  }
  return out;
}

Expected<size_t> findSnapshot(const std::vector<Snapshot>& snaps, const std::string& which) {
  if (!which.empty() && std::all_of(which.begin(), which.end(), ::isdigit)) {
    size_t i = std::stoul(which);
    if (i < snaps.size()) return i;
  }
  for (size_t i = 0; i < snaps.size(); ++i) {
    const std::string& l = snaps[i].label;
    if (l == which || (l.rfind(which, 0) == 0 && l.size() > which.size() && l[which.size()] == '{'))
      return i;
  }
  std::string known;
  for (size_t i = 0; i < snaps.size(); ++i)
    known += (i ? ", " : "") + std::to_string(i) + " " + snaps[i].label;
  return Status::error("no snapshot '" + which + "'; the pipeline's snapshots are: " + known);
}

std::string diffJson(const PassDiff& d) {
  auto nodes = [](const std::vector<NodeChange>& v, bool into) {
    nlohmann::json a = nlohmann::json::array();
    for (const NodeChange& c : v) {
      nlohmann::json j = {{"node", c.node}, {"op", c.op}};
      if (into) j["into"] = c.into.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.into);
      a.push_back(std::move(j));
    }
    return a;
  };
  nlohmann::json j = {{"from", d.from},
                      {"to", d.to},
                      {"summary", d.summary()},
                      {"added", nodes(d.added, false)},
                      {"removed", nodes(d.removed, true)},
                      {"changed", nodes(d.changed, false)},
                      {"unchanged", d.unchanged},
                      {"ir",
                       {{"added_lines", d.addedLines},
                        {"removed_lines", d.removedLines},
                        {"moved_lines", d.movedLines},
                        {"diff", d.unifiedText()}}}};
  return j.dump(2);
}

}  // namespace fuselens
