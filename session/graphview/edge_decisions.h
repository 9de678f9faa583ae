// Which fusion decision belongs to which drawn edge. Node ids change when a
// pass outlines a group, but every pass keeps node names (a fused body holds
// its members under their own names), so decisions are matched to the
// layout's op-to-op edges by (producerName, consumerName). Qt-free.
#pragma once

#include <vector>

#include "session/explain_report.h"
#include "session/graphview/graph_layout.h"

namespace fuselens::graphview {

using fuselens::decisionsUpTo;  // session/explain_report.h

// For each edge of `layout`, the index into `decisions` of the decision about
// it, or -1 (edges from graph inputs, edges no fusion pass considered).
std::vector<int> matchEdgeDecisions(const GraphLayout& layout,
                                    const std::vector<FusionDecision>& decisions);

}  // namespace fuselens::graphview
