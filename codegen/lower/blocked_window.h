// The blocked window nest of ConvNCHWc / MaxPoolNCHWc / AveragePoolNCHWc
// (compute_layout.cpp says what it builds): the rows, the reduction chunks and
// the geometry there, one register tile in blocked_window_tile.cpp. Internal
// to codegen/lower.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "codegen/lower/compute.h"

namespace fuselens::blocked {

inline ExprRef divI(ExprRef a, int64_t b) {
  return b == 1 ? a : binary(BinOp::Div, std::move(a), intConst(b));
}
inline ExprRef modI(ExprRef a, int64_t b) {
  return b == 1 ? intConst(0) : binary(BinOp::Mod, std::move(a), intConst(b));
}

enum class Kind { Conv, Max, Avg };

// One spatial axis: input size, kernel, stride, dilation, leading pad, output size.
struct Axis {
  int64_t in, k, s, d, p, out;
  bool guardLo() const { return p > 0; }
  bool guardHi() const { return (out - 1) * s - p + (k - 1) * d >= in; }
};

class BlockedWindow {
 public:
  BlockedWindow(KernelBuilder& kb, const Node& n, Kind kind) : kb_(kb), n_(n), kind_(kind) {}

  std::vector<StmtRef> build(const KernelBuilder::Sink& sink);

 private:
  using LaneBody = std::function<std::vector<StmtRef>(ExprRef, ExprRef)>;

  bool fail(const std::string& msg);
  void scheduledTile(const ConvTiling& c, int64_t OB, int64_t OW, bool wide, int64_t& tile);
  void chooseChunk(int64_t tilesPerRow);
  std::vector<StmtRef> chunkedRow(std::vector<StmtRef> tiles, int64_t width);
  bool resolve();
  StmtRef tileNest(ExprRef ow0, int64_t width, bool guardW);
  StmtRef lanesNest(int64_t width, const LaneBody& body);
  ExprRef partAt(ExprRef ow, ExprRef l) const;
  std::vector<StmtRef> results(ExprRef v, ExprRef ow, ExprRef l);
  std::vector<StmtRef> gemmNest(const KernelBuilder::Sink& sink);  // blocked_window_gemm.cpp
  // Winograd F(2x2, 3x3) for 3x3 stride-1 convs (blocked_winograd.cpp).
  bool winogradFits() const;
  BufferId winogradWeights();
  std::vector<StmtRef> winogradNest(const KernelBuilder::Sink& sink);
  std::vector<StmtRef> winogradInput(BufferId V, ExprRef th);
  StmtRef winogradTile(BufferId V, BufferId M, BufferId U, ExprRef p, ExprRef q0, ExprRef j0,
                       int64_t width, int64_t chunk, int64_t TW);
  StmtRef winogradOutput(BufferId M, ExprRef th, ExprRef q0, int64_t chunk);

  KernelBuilder& kb_;
  const Node& n_;
  Kind kind_;
  std::vector<int64_t> x_, y_, w_shape_;
  int64_t b_ = 8, cg_ = 1;
  Axis h_{}, w_{};
  bool depthwise_ = false, hasBias_ = false, includePad_ = false;
  bool transposed_ = false;       // h_ and w_ hold the tensor's W and H axes
  int64_t chunkBlocks_ = 0;       // input-channel blocks per reduction chunk; 0: unchunked
  std::optional<BufferId> part_;  // the row's partial sums while its chunks run
  Var chunkVar_;
  bool guardH_ = true;  // the rows being built may reach the H padding
  int64_t obPer_ = 1;   // output blocks per register tile
  ExprRef o_;           // the block within the tile, inside lanes()
  ExprRef obAt() const { return obPer_ > 1 ? add(ob_, o_) : ob_; }
  ExprRef n0_, ob_, oh_;
  const KernelBuilder::Sink* sink_ = nullptr;
};

}  // namespace fuselens::blocked
