// SVG text for a SceneLayout. Colors follow the graph view's (viewer/graph_items.cpp):
// the same group palette and the same heat scale, so an image and the window agree.
#include "session/graphview/svg_writer.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "passes/fusion_decision.h"
#include "session/graphview/kernel_times.h"

namespace fuselens::graphview {
namespace {

struct Rgb {
  int r, g, b;
};

std::string hex(Rgb c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c.r, c.g, c.b);
  return buf;
}

Rgb blend(Rgb a, Rgb b, double t) {
  auto mix = [&](int x, int y) { return int(x * (1 - t) + y * t); };
  return {mix(a.r, b.r), mix(a.g, b.g), mix(a.b, b.b)};
}

Rgb groupRgb(int group) {
  static const std::array<Rgb, 8> palette = {Rgb{59, 130, 246}, {245, 158, 11}, {16, 185, 129},
                                             {139, 92, 246},    {239, 68, 68},  {20, 184, 166},
                                             {236, 72, 153},    {132, 204, 22}};
  return group < 0 ? Rgb{120, 120, 120} : palette[size_t(group) % palette.size()];
}

Rgb heatRgb(double f) {
  const Rgb cool{187, 247, 208}, warm{254, 240, 138}, hot{248, 113, 113};
  f = std::clamp(f, 0.0, 1.0);
  return f < 0.5 ? blend(cool, warm, (f * 2) * (f * 2)) : blend(warm, hot, (f - 0.5) * 2);
}

std::string esc(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\t') out += c;
    }
  }
  return out;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

class Writer {
 public:
  Writer(const SceneLayout& scene, const SvgOptions& opts)
      : scene_(scene), opts_(opts), groupSeconds_(secondsByGroup(scene.nodes, opts.seconds)) {
    for (const FusionDecision& d : opts.decisions)
      if (!d.accepted) rejected_[{d.producerName, d.consumerName}] = d.ruleId();
  }

  std::string run() {
    const double top = opts_.title.empty() ? 10 : 34;
    // A narrow graph must not clip its title: about 8 px a character at 13 px bold.
    const double titleWidth = 8.0 * double(opts_.title.size()) + 20;
    const double w = std::max(scene_.width + 20, titleWidth), h = scene_.height + top + 10;
    out_ << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
         << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(w) << "\" height=\""
         << num(h) << "\" viewBox=\"0 0 " << num(w) << " " << num(h) << "\""
         << " font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"11\">\n"
         << "<rect width=\"100%\" height=\"100%\" fill=\"#fafafa\"/>\n";
    if (!opts_.title.empty())
      out_ << "<text x=\"10\" y=\"20\" font-size=\"13\" font-weight=\"bold\">" << esc(opts_.title)
           << "</text>\n";
    out_ << "<g transform=\"translate(10," << num(top) << ")\">\n";
    for (const SceneScope& s : scene_.scopes)
      if (!s.collapsed) frame(s);
    for (const LayoutCluster& c : scene_.clusters) cluster(c);
    for (const SceneEdge& e : scene_.edges) edge(e);
    for (const SceneScope& s : scene_.scopes)
      if (s.collapsed) collapsed(s);
    for (const LayoutNode& n : scene_.nodes) node(n);
    out_ << "</g>\n</svg>\n";
    return out_.str();
  }

 private:
  void rect(const LayoutBox& b, double radius, const std::string& fill, const std::string& stroke,
            double width, const std::string& extra = "") {
    out_ << "<rect x=\"" << num(b.x) << "\" y=\"" << num(b.y) << "\" width=\"" << num(b.width)
         << "\" height=\"" << num(b.height) << "\" rx=\"" << num(radius) << "\" fill=\"" << fill
         << "\" stroke=\"" << stroke << "\" stroke-width=\"" << num(width) << "\"" << extra
         << "/>\n";
  }

  void text(double x, double y, const std::string& s, const std::string& attrs) {
    out_ << "<text x=\"" << num(x) << "\" y=\"" << num(y) << "\" " << attrs << ">" << esc(s)
         << "</text>\n";
  }

  void frame(const SceneScope& s) {
    rect(s.box, 8, "#f1f5f9", "#94a3b8", 1.2, " fill-opacity=\"0.6\"");
    text(s.box.x + 8, s.box.y + 15, frameTitle(s), "font-weight=\"bold\" fill=\"#475569\"");
  }

  void collapsed(const SceneScope& s) {
    std::string fill = s.chunk ? "#eef2ff" : "#e2e8f0";
    if (!opts_.heat.empty() && s.stats.worstHeat >= 0) fill = hex(heatRgb(s.stats.worstHeat));
    const std::string stroke = s.stats.rejected > 0 ? "#d64541" : "#64748b";
    // Diff mode: a scope the pass left alone is dimmed, as in the window.
    if (s.stats.unchanged()) out_ << "<g opacity=\"0.4\">\n";
    rect(s.box, 6, fill, stroke, 1.6);
    const std::vector<std::string> lines = collapsedLines(s);
    const double lineH = (s.box.height - 10) / double(lines.size());
    for (size_t i = 0; i < lines.size(); ++i) {
      const double y = s.box.y + 5 + lineH * (double(i) + 0.72);
      text(s.box.x + s.box.width / 2, y, lines[i],
           i == 0 ? "text-anchor=\"middle\" font-weight=\"bold\""
                  : (i == 2 ? "text-anchor=\"middle\" fill=\"#b91c1c\""
                            : "text-anchor=\"middle\" fill=\"#475569\""));
    }
    if (s.stats.unchanged()) out_ << "</g>\n";
  }

  void cluster(const LayoutCluster& c) {
    const Rgb rgb = groupRgb(c.group);
    rect(c.box, 8, hex(rgb), hex(blend(rgb, {0, 0, 0}, 0.2)), 1.5, " fill-opacity=\"0.16\"");
    // A fused group is one kernel (or a few): its time follows its label.
    auto t = groupSeconds_.find(c.group);
    const std::string label =
        c.label + (t != groupSeconds_.end() ? "  " + formatSeconds(t->second) : "");
    text(c.box.x + 8, c.box.y + 14, label,
         "font-weight=\"bold\" fill=\"" + hex(blend(rgb, {0, 0, 0}, 0.4)) + "\"");
  }

  // An unfused op's own kernel time, on a chip across its top-right corner.
  void timeChip(const LayoutNode& n) {
    const double t = n.group < 0 ? secondsOf(n, opts_.seconds) : -1;
    if (t < 0) return;
    const std::string label = formatSeconds(t);
    const double w = double(label.size()) * 5.6 + 8;
    const LayoutBox& b = n.box;
    rect({b.x + b.width - w + 4, b.y - 7, w, 13}, 3, "#fef3c7", "#b45309", 0.8);
    text(b.x + b.width - w / 2 + 4, b.y + 3, label,
         "text-anchor=\"middle\" font-size=\"9\" fill=\"#78350f\"");
  }

  double heatOf(const LayoutNode& n) const {
    double worst = -1;
    for (const std::string& v : n.outputs) {
      auto it = opts_.heat.find(v);
      if (it != opts_.heat.end()) worst = std::max(worst, it->second);
    }
    return worst;
  }

  void node(const LayoutNode& n) {
    std::string fill = "#ffffff";
    if (n.kind == LayoutNodeKind::Input) fill = "#dbeafe";
    if (n.kind == LayoutNodeKind::Output) fill = "#dcfce7";
    if (const double h = heatOf(n); h >= 0) fill = hex(heatRgb(h));
    std::string border = n.group >= 0 ? hex(blend(groupRgb(n.group), {0, 0, 0}, 0.3)) : "#606060";
    if (n.diff != 0)
      border = n.diff == 1 ? "#16a34a" : "#9333ea";  // diff: added green, changed violet
    const LayoutBox& b = n.box;
    if (n.kind == LayoutNodeKind::Op) {
      rect(b, 4, fill, border, n.diff != 0 ? 3 : 1.2);
    } else {
      out_ << "<ellipse cx=\"" << num(b.x + b.width / 2) << "\" cy=\"" << num(b.y + b.height / 2)
           << "\" rx=\"" << num(b.width / 2) << "\" ry=\"" << num(b.height / 2) << "\" fill=\""
           << fill << "\" stroke=\"" << border << "\"/>\n";
    }
    const double lineH = b.height / double(1 + n.lines.size());
    const double cx = b.x + b.width / 2;
    text(cx, b.y + lineH * 0.72, n.op, "text-anchor=\"middle\" font-weight=\"bold\"");
    for (size_t i = 0; i < n.lines.size(); ++i)
      text(cx, b.y + lineH * (double(i) + 1.72), n.lines[i],
           "text-anchor=\"middle\" font-size=\"10\" fill=\"#555555\"");
    if (n.kind == LayoutNodeKind::Op && !n.name.empty())
      out_ << "<title>" << esc(n.name) << "</title>\n";
    timeChip(n);
  }

  void edge(const SceneEdge& e) {
    const auto& pts = e.path.points;
    if (pts.empty()) return;
    auto it = rejected_.find({e.fromName, e.toName});
    const bool rejected = !e.fromName.empty() && it != rejected_.end();
    const std::string color = rejected ? "#d64541" : "#6e6e6e";
    out_ << "<path d=\"M" << num(pts[0].x) << "," << num(pts[0].y);
    for (size_t i = 1; i + 2 < pts.size(); i += 3)
      out_ << " C" << num(pts[i].x) << "," << num(pts[i].y) << " " << num(pts[i + 1].x) << ","
           << num(pts[i + 1].y) << " " << num(pts[i + 2].x) << "," << num(pts[i + 2].y);
    out_ << "\" fill=\"none\" stroke=\"" << color << "\" stroke-width=\"1.2\""
         << (rejected ? " stroke-dasharray=\"5,3\"" : "") << "/>\n";
    if (e.path.hasArrow) arrow(pts.back(), e.path.arrowTip, color);
    if (rejected) chip(e, it->second);
  }

  void arrow(LayoutPoint base, LayoutPoint tip, const std::string& color) {
    const double dx = tip.x - base.x, dy = tip.y - base.y;
    const double len = std::hypot(dx, dy);
    if (len < 1e-6) return;
    const double nx = -dy / len * 3.5, ny = dx / len * 3.5;
    out_ << "<polygon points=\"" << num(tip.x) << "," << num(tip.y) << " " << num(base.x + nx)
         << "," << num(base.y + ny) << " " << num(base.x - nx) << "," << num(base.y - ny)
         << "\" fill=\"" << color << "\"/>\n";
  }

  void chip(const SceneEdge& e, const std::string& rule) {
    const auto& pts = e.path.points;
    const LayoutPoint c = e.path.hasLabel ? e.path.labelCenter : pts[pts.size() / 2];
    const double w = double(rule.size()) * 6 + 8;
    rect({c.x - w / 2, c.y - 7, w, 14}, 3, "#fff1f0", "#d64541", 0.8);
    text(c.x, c.y + 4, rule, "text-anchor=\"middle\" font-size=\"9\" fill=\"#8f2e2b\"");
  }

  const SceneLayout& scene_;
  const SvgOptions& opts_;
  std::map<int, double> groupSeconds_;
  std::map<std::pair<std::string, std::string>, std::string> rejected_;
  std::ostringstream out_;
};

}  // namespace

std::string sceneToSvg(const SceneLayout& scene, const SvgOptions& opts) {
  return Writer(scene, opts).run();
}

}  // namespace fuselens::graphview
