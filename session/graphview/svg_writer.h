// A SceneLayout as a standalone SVG document, drawn as the graph view draws
// it: ops as rounded boxes (op bold, then type and constants), inputs and
// outputs as ellipses, fused groups as tinted clusters, open scopes as framed
// panels with their path, collapsed scopes as boxes with counts and badges,
// rejected fusion edges dashed red with their rule, the divergence heat as
// fills, and a profile's kernel times on ops and clusters. What
// `fuselens-cli render` writes and the README's images are.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "session/graphview/scoped_layout.h"

namespace fuselens {
struct FusionDecision;
}

namespace fuselens::graphview {

struct SvgOptions {
  std::vector<FusionDecision> decisions;  // drawn on the edges they name
  std::map<std::string, double> heat;     // heat fraction by value name; empty: no heat
  // Kernel seconds by the value each kernel writes first (kernel_times.h):
  // unfused ops and fused clusters show their kernels' time. Empty: none.
  std::map<std::string, double> seconds;
  std::string title;  // a caption line at the top; empty: none
};

std::string sceneToSvg(const SceneLayout& scene, const SvgOptions& opts = {});

}  // namespace fuselens::graphview
