// Internal to lowering: RNN, GRU and LSTM as serial loops over time (compute_rnn.cpp).
#pragma once

#include "codegen/lower/compute.h"

namespace fuselens {

bool isRecurrentOp(const std::string& op);
Status checkRecurrentOp(const Graph& body, const Node& n);
std::vector<StmtRef> lowerRecurrent(KernelBuilder& kb, const Node& n,
                                    const KernelBuilder::Sink& sink);

}  // namespace fuselens
