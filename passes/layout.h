// layout: NCHW -> NCHW<b>c (b = 8 or 16) for regions of Conv, pooling and
// elementwise ops, the layout that makes a direct convolution vectorize over
// one block of output channels (one AVX2 / AVX-512 vector of floats).
//
// Rewrites: each connected region of 4-D f32 static-shape ops that contains at
// least one Conv (group 1 or depthwise, constant weights): Conv -> ConvNCHWc
// (weights and bias blocked here, as constants), MaxPool / AveragePool ->
// MaxPoolNCHWc / AveragePoolNCHWc, Concat over channels kept (when every input
// but the last fills whole blocks), GlobalAverage/MaxPool -> ReduceMean/Max over
// H and W, elementwise ops kept with per-channel constants ([C,1,1]) blocked to
// [Cb,1,1,b] and computed operands of the same channels ([N,C,1,1], as in
// squeeze-excite) blocked like the rest of the region. ToNCHWc / FromNCHWc sit
// at the region's boundaries; a FromNCHWc
// feeding a ToNCHWc of the same block cancels (the pass itself first puts a
// pair around every op, so the pairs inside a region are what cancels).
// Keeps: graph inputs and outputs plain and named as before; every blocked
// value's origin is the plain value it stands for, with its layout recorded
// (Value::layout), so compare unblocks it before comparing.
// Run after simplify (Conv+BN folded). Best before fuse-ops, whose epilogue
// fusion then takes the blocked elementwise ops into the ConvNCHWc groups and
// folds the boundary transforms into them (layout-prologue, layout-epilogue).
// After fuse-ops it works too: a Fused group holding a Conv or pool is opened,
// rewritten with the rest, and closed again over the blocked ops (see
// layout_groups.h); when a fusion pass ran before and no fuse-ops follows, the
// boundary transforms then join the blocked groups beside them by the same
// rules, recorded as decisions, so both orders give the same kernels.
#pragma once

#include "passes/pass.h"

namespace fuselens {

// The block `layout` without one uses for a target with `vectorLanes` f32
// lanes: 16 on AVX-512, else 8 (the narrowest block there is).
inline int layoutBlockFor(int vectorLanes) { return vectorLanes >= 16 ? 16 : 8; }

class LayoutPass : public Pass {
 public:
  // block 0: the target's vector width (PassContext::vectorLanes), 16 or 8.
  explicit LayoutPass(int block) : block_(block) {}
  std::string name() const override { return "layout"; }
  PassResult run(Graph& g, PassContext& ctx) override;

 private:
  int block_;
};

}  // namespace fuselens
