// Internal to lowering: reductions along one axis that keep a position or a
// running value (compute_scan.cpp): ArgMax, ArgMin, CumSum, TopK.
#pragma once

#include "codegen/lower/compute.h"

namespace fuselens {

bool isScanOp(const std::string& op);
Status checkScanOp(const Graph& body, const Node& n);
std::vector<StmtRef> lowerScan(KernelBuilder& kb, const Node& n, const KernelBuilder::Sink& sink);

}  // namespace fuselens
