// Headless images of the graph view: what `fuselens-cli render` does, through
// the same scope tree and scoped layout the GUI draws. Qt-free.
#pragma once

#include <string>
#include <vector>

#include "core/support/cancel.h"
#include "core/support/status.h"

namespace fuselens {
class Session;
}

namespace fuselens::graphview {

struct RenderRequest {
  std::string after;     // the snapshot: a pass spec or name, or its number; empty: the last
  std::string scope;     // draw this scope alone ("/encoder/layer.3"); empty: the whole graph
  int expandDepth = -1;  // open scopes down to this depth; -1: the initial collapse
  bool heat = false;     // fill by the session's last compare report
  // The session's last profile's kernel times: on collapsed scopes' badges,
  // unfused ops and fused clusters (kernel_times.h).
  bool time = false;
  // Mark what the pass that made the snapshot changed (snapshot_diff.h):
  // added ops green, changed violet, scopes it left alone dimmed.
  bool diff = false;
  std::string out;      // .svg or .png
  size_t budget = 200;  // boxes the initial collapse aims for
};

struct RenderResult {
  std::string snapshot;  // the label of the snapshot drawn
  size_t boxes = 0, collapsed = 0, edges = 0;
  double layoutMs = 0;
  std::vector<std::string> notes;  // scopes the fallback layout drew, and why
};

// The snapshot `after` names: "3", "import", a pass spec or a pass name
// (the first match); an error listing the snapshots when none matches.
Expected<size_t> findSnapshot(const Session& s, const std::string& after);

Expected<RenderResult> renderGraph(const Session& s, const RenderRequest& r,
                                   const CancelToken& cancel = {});

// Converts an SVG file to PNG with rsvg-convert (Debian: librsvg2-bin).
Status svgToPng(const std::string& svgPath, const std::string& pngPath);

}  // namespace fuselens::graphview
