// runDot: one dot run in a forked child. The child builds the Graphviz graph
// from the BoxGraph it inherited, lays it out and writes the geometry to a pipe
// as doubles; the parent reads with a deadline and the cancel token in view,
// and kills the child when either fires. A Graphviz crash ends the child only.
//
//   parent                         child (fork)
//   ------                         ------------
//   poll(pipe) every 20 ms  <----  gvLayout(dot); write doubles; _exit(0)
//   cancel / deadline: SIGKILL
#include <graphviz/gvc.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <string>

#include "session/graphview/box_layout.h"

namespace fuselens::graphview {
namespace {

constexpr double kPointsPerInch = 72.0;

void set(void* obj, const char* name, const std::string& value) {
  agsafeset(obj, const_cast<char*>(name), const_cast<char*>(value.c_str()), const_cast<char*>(""));
}

std::string inches(double points) { return std::to_string(points / kPointsPerInch); }

// dot sizes labels from font metrics: Courier is 0.6 em per character, so a
// run of characters in it reserves the width and height asked for.
void reserveLabel(void* obj, double width, double height) {
  const double fontSize = std::max(4.0, height / 1.2);
  const int chars = std::max(1, int(std::ceil(width / (0.6 * fontSize))));
  set(obj, "label", std::string(size_t(chars), 'M'));
  set(obj, "fontname", "Courier");
  set(obj, "fontsize", std::to_string(fontSize));
}

void put(std::vector<double>& out, LayoutPoint p) {
  out.push_back(p.x);
  out.push_back(p.y);
}

// Made once in the parent and inherited by every child, so a child does not
// load Graphviz's plugins again; the parent itself never lays anything out with it.
GVC_t* sharedContext() {
  static GVC_t* gvc = gvContext();
  return gvc;
}

// Runs in the child: lays the graph out and returns the geometry as doubles,
// or nothing when dot failed.
std::vector<double> layOutInChild(const BoxGraph& g) {
  GVC_t* gvc = sharedContext();
  if (!gvc) return {};
  Agraph_t* root = agopen(const_cast<char*>("g"), Agdirected, nullptr);
  set(root, "rankdir", "TB");
  set(root, "nodesep", "0.3");
  set(root, "ranksep", "0.4");
  agattr(root, AGNODE, const_cast<char*>("fixedsize"), const_cast<char*>("true"));
  agattr(root, AGNODE, const_cast<char*>("label"), const_cast<char*>(""));
  std::vector<Agraph_t*> clusters;
  for (size_t i = 0; i < g.clusters.size(); ++i) {
    const std::string name = "cluster_" + std::to_string(i);
    Agraph_t* sub = agsubg(root, const_cast<char*>(name.c_str()), 1);
    reserveLabel(sub, g.clusters[i].labelWidth, g.clusters[i].labelHeight);
    set(sub, "labeljust", "l");
    set(sub, "margin", "12");
    clusters.push_back(sub);
  }
  std::vector<Agnode_t*> nodes;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const BoxGraph::Node& n = g.nodes[i];
    const std::string name = "n" + std::to_string(i);
    Agraph_t* owner = n.cluster >= 0 ? clusters[size_t(n.cluster)] : root;
    Agnode_t* an = agnode(owner, const_cast<char*>(name.c_str()), 1);
    set(an, "shape", n.ellipse ? "ellipse" : "box");
    set(an, "width", inches(n.width));
    set(an, "height", inches(n.height));
    nodes.push_back(an);
  }
  std::vector<Agedge_t*> edges;
  for (const BoxGraph::Edge& e : g.edges) {
    Agedge_t* ae = agedge(root, nodes[size_t(e.from)], nodes[size_t(e.to)], nullptr, 1);
    if (e.labelWidth > 0) reserveLabel(ae, e.labelWidth, e.labelHeight);
    edges.push_back(ae);
  }
  if (gvLayout(gvc, root, "dot") != 0) return {};

  std::vector<double> out;
  const boxf bb = GD_bb(root);
  auto flip = [&](pointf p) { return LayoutPoint{p.x - bb.LL.x, bb.UR.y - p.y}; };
  out.push_back(bb.UR.x - bb.LL.x);
  out.push_back(bb.UR.y - bb.LL.y);
  for (Agnode_t* an : nodes) {
    const LayoutPoint c = flip(ND_coord(an));
    const double w = ND_width(an) * kPointsPerInch, h = ND_height(an) * kPointsPerInch;
    out.insert(out.end(), {c.x - w / 2, c.y - h / 2, w, h});
  }
  for (Agraph_t* sub : clusters) {
    const boxf cb = GD_bb(sub);
    const LayoutPoint tl = flip(pointf{cb.LL.x, cb.UR.y});
    out.insert(out.end(), {tl.x, tl.y, cb.UR.x - cb.LL.x, cb.UR.y - cb.LL.y});
  }
  for (Agedge_t* ae : edges) {
    std::vector<double> pts;
    double arrow = 0;
    LayoutPoint tip;
    if (const splines* spl = ED_spl(ae)) {
      for (int b = 0; b < spl->size; ++b) {
        const bezier& bz = spl->list[b];
        for (int i = pts.empty() ? 0 : 1; i < bz.size; ++i) put(pts, flip(bz.list[i]));
        if (bz.eflag) {
          arrow = 1;
          tip = flip(bz.ep);
        }
      }
    }
    out.push_back(double(pts.size() / 2));
    out.insert(out.end(), pts.begin(), pts.end());
    out.insert(out.end(), {arrow, tip.x, tip.y});
    const textlabel_t* label = ED_label(ae);
    const bool hasLabel = label && label->set;
    out.push_back(hasLabel ? 1 : 0);
    put(out, hasLabel ? flip(label->pos) : LayoutPoint{});
  }
  return out;
}

bool writeAll(int fd, const void* data, size_t bytes) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = write(fd, p, bytes);
    if (n <= 0) return false;
    p += n;
    bytes -= size_t(n);
  }
  return true;
}

// Reads the doubles back into geometry; false when they do not add up.
bool decode(const std::vector<double>& in, const BoxGraph& g, BoxGeometry& out) {
  size_t i = 0;
  auto take = [&]() { return i < in.size() ? in[i++] : NAN; };
  auto box = [&]() {
    LayoutBox b;
    b.x = take();
    b.y = take();
    b.width = take();
    b.height = take();
    return b;
  };
  out.width = take();
  out.height = take();
  for (size_t n = 0; n < g.nodes.size(); ++n) out.nodes.push_back(box());
  for (size_t c = 0; c < g.clusters.size(); ++c) out.clusters.push_back(box());
  for (size_t e = 0; e < g.edges.size(); ++e) {
    EdgePath p;
    const double count = take();
    if (!(count >= 0) || count > 1e6) return false;
    for (size_t k = 0; k < size_t(count); ++k) p.points.push_back({take(), take()});
    p.hasArrow = take() > 0;
    p.arrowTip = {take(), take()};
    p.hasLabel = take() > 0;
    p.labelCenter = {take(), take()};
    out.edges.push_back(std::move(p));
  }
  return i == in.size() && !std::isnan(out.width);
}

}  // namespace

Expected<BoxGeometry> runDot(const BoxGraph& g, double seconds, const CancelToken& cancel) {
  sharedContext();
  int fds[2];
  if (pipe(fds) != 0) return Expected<BoxGeometry>::error("could not open a pipe for dot");
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return Expected<BoxGeometry>::error("could not start a process for dot");
  }
  if (pid == 0) {
    close(fds[0]);
    const std::vector<double> out = layOutInChild(g);
    const bool ok = !out.empty() && writeAll(fds[1], out.data(), out.size() * sizeof(double));
    _exit(ok ? 0 : 2);
  }
  close(fds[1]);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(std::max(0.0, seconds));
  std::string bytes, why;
  char buf[65536];
  while (why.empty()) {
    if (cancel.cancelled()) why = "cancelled";
    if (why.empty() && std::chrono::steady_clock::now() > deadline)
      why = "dot ran past " + std::to_string(int(std::lround(seconds * 1000))) + " ms";
    if (!why.empty()) break;
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, 20) <= 0) continue;
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n == 0) break;  // the child closed the pipe: done or dead
    if (n > 0) bytes.append(buf, size_t(n));
  }
  if (!why.empty()) kill(pid, SIGKILL);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!why.empty()) return Expected<BoxGeometry>::error(why);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return Expected<BoxGeometry>::error(WIFSIGNALED(status) ? "dot crashed" : "dot failed");
  std::vector<double> values(bytes.size() / sizeof(double));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(double));
  BoxGeometry out;
  if (!decode(values, g, out)) return Expected<BoxGeometry>::error("dot's answer was garbled");
  return out;
}

Expected<BoxGeometry> layoutBoxes(const BoxGraph& g, const BoxLayoutOptions& opts) {
  if (opts.cancel.cancelled()) return Expected<BoxGeometry>::error("cancelled");
  std::string why = "dot not used";
  if (opts.useDot) {
    Expected<BoxGeometry> dot = runDot(g, opts.dotSeconds, opts.cancel);
    if (dot.isOk()) return dot;
    if (opts.cancel.cancelled()) return dot;
    why = dot.message();
  }
  BoxGeometry out = layeredLayout(g);
  out.note = "simple layered layout (" + why + ")";
  return out;
}

}  // namespace fuselens::graphview
