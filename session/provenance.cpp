#include "session/provenance.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

namespace fuselens {
namespace {

bool isIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Where a text defines a kernel: the first line at column 0 (a definition, a
// label, a note; calls and references are indented) that names it at the
// start of an identifier. The name may go on ("k3_fused_add_s0", a CUDA
// stage): kernel names are unique by their "k<index>_" prefix.
int definitionLine(const std::vector<std::string>& lines, const std::string& name) {
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (l.empty() || std::isspace(static_cast<unsigned char>(l[0]))) continue;
    for (size_t at = l.find(name); at != std::string::npos; at = l.find(name, at + 1))
      if (at == 0 || !isIdentChar(l[at - 1])) return int(i);
  }
  return -1;
}

// The names of the ops a kernel runs: a group's body ops, or the node itself.
std::vector<std::string> opNames(const Node& n) {
  if (!n.body) return {n.name};
  std::vector<std::string> names;
  for (NodeId id : n.body->nodeIds()) names.push_back(n.body->node(id).name);
  return names;
}

}  // namespace

std::vector<std::string> originNames(const Graph& original, const Node& n) {
  std::set<int32_t> ids;
  for (NodeId o : n.origins) ids.insert(o.index);
  if (ids.empty() && n.body)
    for (NodeId id : n.body->nodeIds())
      for (NodeId o : n.body->node(id).origins) ids.insert(o.index);
  std::vector<std::string> names;
  for (int32_t i : ids) {
    NodeId id{i};
    if (!original.hasNode(id)) continue;
    const Node& o = original.node(id);
    names.push_back(o.name.empty() ? o.op + "#" + std::to_string(i) : o.name);
  }
  return names;
}

const CodeSpan* AnnotatedCode::atLine(int line) const {
  for (const CodeSpan& s : spans)
    if (line >= s.firstLine && line <= s.lastLine) return &s;
  return nullptr;
}

const CodeSpan* AnnotatedCode::ofNode(NodeId node) const {
  for (const CodeSpan& s : spans)
    if (s.node == node) return &s;
  return nullptr;
}

const CodeSpan* AnnotatedCode::ofOp(const std::string& opName) const {
  for (const CodeSpan& s : spans)
    if (std::find(s.ops.begin(), s.ops.end(), opName) != s.ops.end()) return &s;
  return nullptr;
}

AnnotatedCode annotateOrigins(const std::string& text, const std::vector<KernelInfo>& kernels,
                              const Graph& optimized, const Graph& original,
                              const std::string& comment) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);

  std::vector<CodeSpan> found;
  for (const KernelInfo& k : kernels) {
    if (!optimized.hasNode(k.node)) continue;
    const int at = definitionLine(lines, k.name);
    if (at < 0) continue;  // shared with a structurally identical kernel
    const Node& n = optimized.node(k.node);
    found.push_back({k.name, k.node, opNames(n), originNames(original, n), at, at});
  }
  std::sort(found.begin(), found.end(),
            [](const CodeSpan& a, const CodeSpan& b) { return a.firstLine < b.firstLine; });
  // A span runs to its closing brace at column 0, or up to the next kernel.
  for (size_t i = 0; i < found.size(); ++i) {
    const int limit = i + 1 < found.size() ? found[i + 1].firstLine - 1 : int(lines.size()) - 1;
    int end = limit;
    for (int l = found[i].firstLine; l <= limit; ++l)
      if (!lines[size_t(l)].empty() && lines[size_t(l)][0] == '}') {
        end = l;
        break;
      }
    found[i].lastLine = std::max(found[i].firstLine, end);
  }

  AnnotatedCode out;
  if (comment.empty()) {
    out.text = text;
    out.spans = std::move(found);
    return out;
  }
  int inserted = 0;
  size_t next = 0;
  for (size_t l = 0; l < lines.size(); ++l) {
    if (next < found.size() && found[next].firstLine == int(l)) {
      CodeSpan s = found[next++];
      std::string from;
      for (const std::string& o : s.origins) from += (from.empty() ? "" : ", ") + o;
      out.text += comment + " from: " + (from.empty() ? "(no imported node)" : from) + "\n";
      s.firstLine += inserted;
      s.lastLine += inserted + 1;
      ++inserted;
      out.spans.push_back(std::move(s));
    }
    out.text += lines[l] + "\n";
  }
  return out;
}

}  // namespace fuselens
