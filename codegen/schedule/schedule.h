// Schedules: how a LoopFunc's loops run, kept apart from what they compute.
// Lowering emits every loop Serial except the nests a schedule template builds
// (MatMul / Gemm tiling, below), which it marks `pinned`; applySchedule then
// sets the kinds of the other loops, which the backend honors (Parallel: the
// loop body is outlined and split across the thread pool; Vectorized: vector
// code, or a hint for long loops; Unrolled: the body replicated).
//
// The default preset on a small MatMul [64,128] x [128,256] + bias + Relu:
//
//   for (int64 i0 = 0; i0 < 64; ++i0) {          // parallel   (outermost, enough work)
//     for (int64 i1 = 0; i1 < 256; ++i1) {
//       float acc0 = 0.0f;
//       for (int64 i2 = 0; i2 < 128; ++i2) {     // serial     (a reduction into acc0)
//         acc0 = acc0 + x[i0 * 128 + i2] * w[i2 * 256 + i1];
//       }
//       y[i0 * 256 + i1] = max(acc0 + b[i1], 0.0f);
//     }
//   }
//
// and an innermost loop whose stores are contiguous in its counter becomes
// `// vectorized`. A MatMul with at least `matmul.minWork` multiply-adds is
// tiled instead (MatMulTiling: mr x nr register tile, B packed in nr-wide
// panels, panels grouped ncPanels at a time for the cache):
//
//   for (jc = 0; jc < P / ncPanels; ++jc)              // parallel
//     for (ib = 0; ib < M / mr; ++ib)
//       for (jr = 0; jr < ncPanels; ++jr) {
//         float acc[mr * nr];                           // local (registers)
//         for (r < mr) for (jj < nr) acc[r*nr+jj] = 0;  // unrolled / vectorized
//         for (k = 0; k < K; ++k)
//           for (r < mr) for (jj < nr)                  // unrolled / vectorized
//             acc[r*nr+jj] = fma(A[row+r, k], Bp[panel, k, jj], acc[r*nr+jj]);
//         for (r < mr) for (jj < nr) y[row+r, col+jj] = epilogue(acc[r*nr+jj]);
//       }
//
// plus tail nests for M % mr rows and N % nr columns.
//
// The knobs above are carried out as schedule steps (schedule_prims.h), chosen
// per nest at apply time from its shape (schedule_defaults.cpp): a temp that a
// row-wise nest fills and a later nest reads per row is moved into that nest's
// row loop when the kernel has parallelMinWork iterations (compute_at: two
// reductions over the same rows become one parallel loop with a per-row
// local instead of a full-size temp), then the outermost
// loop of a nest with enough work becomes parallel and contiguous innermost
// loops vectorized. `steps` are then applied in order on top, addressing loops
// by name ("split i1 by 8, vectorize i1i"); a step that does not apply fails
// the compile with its sentence. Schedules serialize to JSON (toJson /
// scheduleFromJson) for the tuning log and for export manifests, steps included:
//   {"name":"t", ..., "steps":[{"op":"split","loop":"i1","factor":8},
//                              {"op":"vectorize","loop":"i1i"}]}
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "codegen/loop/loop_ir.h"
#include "codegen/schedule/schedule_prims.h"
#include "core/support/status.h"

namespace fuselens {

struct CpuTarget;

struct MatMulTiling {
  bool enabled = true;
  int64_t mr = 8;             // rows of the register tile
  int64_t nr = 32;            // columns of the register tile (a multiple of the vector lanes)
  int64_t ncPanels = 0;       // panels per cache block; 0: sized from K for about 512 KiB
  int64_t minWork = 1 << 13;  // M*N*K below this keeps the plain loop nest
  bool rowsOuter = false;     // ib outside jc (for N too narrow to parallelize over panels)
  bool operator==(const MatMulTiling&) const = default;
};

// The register tile of a blocked convolution (ConvNCHWc): `pixels` output
// pixels of one row times `ocBlocks` output-channel blocks of accumulators.
// 0 keeps the lowering's own rule (compute_layout.cpp); a set value is clamped
// there to what the shape and the vector register file allow.
struct ConvTiling {
  int64_t pixels = 0;  // pixels per tile; the row's last tile takes the remainder
  int64_t ocBlocks =
      0;  // output blocks per tile; must divide the block count, else the largest divisor below
  // 3x3 stride-1 convs run as Winograd F(2x2, 3x3) (blocked_winograd.cpp):
  // 2.25x fewer multiplies, results within a few ulps of the direct sum.
  bool winograd = true;
  bool operator==(const ConvTiling&) const = default;
};

struct Schedule {
  std::string name = "default";
  bool parallelOuter = true;          // outermost loop of a nest runs on the thread pool...
  int64_t parallelMinWork = 1 << 15;  // ...when the nest runs at least this many iterations
  bool vectorizeInner = true;         // contiguous innermost loops are vectorized
  // Row reductions (Softmax over the last axis) keep this many partial results
  // in a vector and combine them at the end; 0 keeps one scalar accumulator.
  int64_t reduceLanes = 16;
  MatMulTiling matmul;
  // Temps read row by row move into their reader's row loop (compute_at).
  bool computeAtRows = true;
  // 1: every loop runs on the calling thread (no parallel loops); 0: the pool.
  // The pool itself is sized once, so counts between are not offered.
  int64_t threads = 0;
  std::vector<ScheduleStep> steps;  // applied after the defaults, in order
  ConvTiling conv;                  // blocked convolutions' register tile

  // The preset for the host: register tile from its vector width and register count.
  static Schedule defaults();
  static Schedule defaultsFor(const CpuTarget& t);
  static Schedule serial() {
    Schedule s{"serial", false, 0, false, 0, {}};
    s.matmul.enabled = false;
    s.computeAtRows = false;  // the plain lowering: every intermediate where lowering put it
    return s;
  }
  // Nests of one shape for every size, which symbolic kernels (codegen/symbolic)
  // need: MatMul's M % mr last rows and a blocked conv's last W % tile pixels
  // run as loops of one-row / one-pixel tiles rather than one tile of their
  // count, and a conv's tile is never narrowed to its row. A little slower.
  bool shapeStable = false;
  bool operator==(const Schedule&) const = default;

  std::string toJson() const;
};

Expected<Schedule> scheduleFromJson(const std::string& text);

// The default steps for the nests no template pinned (lowering leaves their
// loops Serial): compute_at for row-wise temps, then the loop kinds. Returns
// the steps it took, in the step-list form.
std::vector<ScheduleStep> applyDefaultSteps(LoopFunc& f, const Schedule& s);
// The defaults only (s.steps ignored), kept for callers that build a LoopFunc by hand.
void applySchedule(LoopFunc& f, const Schedule& s);
// The defaults, then s.steps in order; the first step that does not apply is the error.
Status scheduleKernel(LoopFunc& f, const Schedule& s);

// The stride of `index` in loop counter v when it is affine in v; nullopt otherwise.
std::optional<int64_t> strideIn(const ExprRef& index, VarId v);

}  // namespace fuselens
