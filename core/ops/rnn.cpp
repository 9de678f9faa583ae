// Recurrent ops: RNN, GRU (linear_before_reset both ways) and LSTM (peepholes,
// clip, custom activations), forward, reverse and bidirectional, with
// sequence_lens and both layouts. One step function per op over double state;
// the time loop, directions, sequence lengths and output assembly are shared.
// They are Opaque: a loop over time carries state no fusion can cross.
#include <cmath>
#include <functional>

#include "core/ops/op_util.h"

namespace fuselens::ops {
namespace {

enum class Cell { Rnn, Gru, Lstm };

int gatesOf(Cell c) { return c == Cell::Rnn ? 1 : c == Cell::Gru ? 3 : 4; }
size_t activationsOf(Cell c) { return c == Cell::Rnn ? 1 : c == Cell::Gru ? 2 : 3; }

using Act = std::function<double(double)>;

Expected<Act> activation(const Node& n, const std::string& name, double alpha, double beta,
                         bool hasAlpha, bool hasBeta) {
  auto a = [&](double d) { return hasAlpha ? alpha : d; };
  auto b = [&](double d) { return hasBeta ? beta : d; };
  if (name == "Sigmoid") return Act([](double x) { return 1 / (1 + std::exp(-x)); });
  if (name == "Tanh") return Act([](double x) { return std::tanh(x); });
  if (name == "Relu") return Act([](double x) { return x > 0 ? x : 0; });
  if (name == "Affine") return Act([al = a(1), be = b(0)](double x) { return al * x + be; });
  if (name == "LeakyRelu") return Act([al = a(0.01)](double x) { return x >= 0 ? x : al * x; });
  if (name == "ThresholdedRelu") return Act([al = a(1)](double x) { return x > al ? x : 0; });
  if (name == "ScaledTanh")
    return Act([al = a(1), be = b(1)](double x) { return al * std::tanh(be * x); });
  if (name == "HardSigmoid")
    return Act([al = a(0.2), be = b(0.5)](double x) { return std::clamp(al * x + be, 0.0, 1.0); });
  if (name == "Elu") return Act([al = a(1)](double x) { return x >= 0 ? x : al * std::expm1(x); });
  if (name == "Softsign") return Act([](double x) { return x / (1 + std::fabs(x)); });
  if (name == "Softplus") return Act([](double x) { return std::log1p(std::exp(x)); });
  return nodeError(n, "activation '" + name + "' is not supported");
}

struct Dims {
  int64_t seq, batch, input, hidden, dirs;
};

// Element (t, b, i) of X in either layout.
double xAt(const TensorData& x, bool batchFirst, const Dims& d, int64_t t, int64_t b, int64_t i) {
  return batchFirst ? x.at((b * d.seq + t) * d.input + i) : x.at((t * d.batch + b) * d.input + i);
}

Outputs recurrentKernel(Cell cell, const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 3, cell == Cell::Lstm ? 8 : 6));
  const TensorData &x = *in[0], &w = *in[1], &r = *in[2];
  const TensorData *bias = inputAt(in, 3), *lens = inputAt(in, 4), *h0 = inputAt(in, 5);
  const TensorData* c0 = cell == Cell::Lstm ? inputAt(in, 6) : nullptr;
  const TensorData* peep = cell == Cell::Lstm ? inputAt(in, 7) : nullptr;
  FL_RETURN_IF_ERROR(needFloat(n, x.dtype));
  bool batchFirst = n.attrs.getInt("layout", 0) != 0;
  std::string dir = n.attrs.getString("direction", "forward");
  if (dir != "forward" && dir != "reverse" && dir != "bidirectional")
    return nodeError(n, "direction '" + dir + "' is not forward, reverse or bidirectional");
  if (x.rank() != 3 || w.rank() != 3 || r.rank() != 3)
    return nodeError(n, "X, W and R must be 3-D");
  const int G = gatesOf(cell);
  Dims d{batchFirst ? x.shape[1] : x.shape[0], batchFirst ? x.shape[0] : x.shape[1], x.shape[2],
         n.attrs.getInt("hidden_size", r.shape[2]), dir == "bidirectional" ? 2 : 1};
  const int64_t H = d.hidden;
  if (H <= 0 || H > (int64_t(1) << 24))
    return nodeError(n, "hidden_size " + std::to_string(H) + " is not a positive size");
  if (w.shape != std::vector<int64_t>{d.dirs, G * H, d.input} ||
      r.shape != std::vector<int64_t>{d.dirs, G * H, H} ||
      (bias && bias->numel() != d.dirs * 2 * G * H) || (lens && lens->numel() != d.batch) ||
      (h0 && h0->numel() != d.dirs * d.batch * H) || (c0 && c0->numel() != d.dirs * d.batch * H) ||
      (peep && peep->numel() != d.dirs * 3 * H))
    return nodeError(n, "W " + shapeStr(w.shape) + ", R " + shapeStr(r.shape) +
                            " or an optional input does not fit X " + shapeStr(x.shape) +
                            " with hidden_size " + std::to_string(H));
  // input_forget couples the gates: the forget gate is 1 - the input gate.
  const bool inputForget = cell == Cell::Lstm && n.attrs.getInt("input_forget", 0) != 0;
  // Activations: per direction, with alphas/betas consumed in order.
  std::vector<std::string> names;
  if (const Attribute* a = n.attrs.find("activations");
      a && std::holds_alternative<std::vector<std::string>>(*a))
    names = std::get<std::vector<std::string>>(*a);
  const size_t per = activationsOf(cell);
  std::vector<std::string> defaults = cell == Cell::Rnn ? std::vector<std::string>{"Tanh"}
                                      : cell == Cell::Gru
                                          ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                          : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
  if (names.empty())
    for (int64_t k = 0; k < d.dirs; ++k)
      names.insert(names.end(), defaults.begin(), defaults.end());
  if (names.size() != per * size_t(d.dirs))
    return nodeError(n, "expects " + std::to_string(per * d.dirs) + " activations");
  std::vector<double> alphas, betas;
  if (const Attribute* a = n.attrs.find("activation_alpha");
      a && std::holds_alternative<std::vector<double>>(*a))
    alphas = std::get<std::vector<double>>(*a);
  if (const Attribute* a = n.attrs.find("activation_beta");
      a && std::holds_alternative<std::vector<double>>(*a))
    betas = std::get<std::vector<double>>(*a);
  std::vector<Act> acts;
  for (size_t i = 0; i < names.size(); ++i) {
    auto f = activation(n, names[i], i < alphas.size() ? alphas[i] : 0,
                        i < betas.size() ? betas[i] : 0, i < alphas.size(), i < betas.size());
    if (!f) return f.status();
    acts.push_back(*f);
  }
  const Attribute* clipAttr = n.attrs.find("clip");
  double clip = clipAttr ? n.attrs.getFloat("clip", 0) : INFINITY;
  bool lbr = n.attrs.getInt("linear_before_reset", 0) != 0;

  std::vector<int64_t> yShape = batchFirst ? std::vector<int64_t>{d.batch, d.seq, d.dirs, H}
                                           : std::vector<int64_t>{d.seq, d.dirs, d.batch, H};
  std::vector<int64_t> hShape = batchFirst ? std::vector<int64_t>{d.batch, d.dirs, H}
                                           : std::vector<int64_t>{d.dirs, d.batch, H};
  TensorData y(x.dtype, yShape), yh(x.dtype, hShape), yc(x.dtype, hShape);
  auto yAt = [&](int64_t t, int64_t k, int64_t b, int64_t j) {
    return batchFirst ? ((b * d.seq + t) * d.dirs + k) * H + j
                      : ((t * d.dirs + k) * d.batch + b) * H + j;
  };
  auto hAt = [&](int64_t k, int64_t b, int64_t j) {
    return batchFirst ? (b * d.dirs + k) * H + j : (k * d.batch + b) * H + j;
  };
  auto clipped = [&](double v) { return std::clamp(v, -clip, clip); };

  for (int64_t k = 0; k < d.dirs; ++k) {
    bool reverse = dir == "reverse" || k == 1;
    const Act* f = &acts[k * per];
    for (int64_t b = 0; b < d.batch; ++b) {
      int64_t len = lens ? loadI(*lens, b) : d.seq;
      if (len < 0 || len > d.seq) return nodeError(n, "sequence_lens holds " + std::to_string(len));
      std::vector<double> h(H), c(H), gates(G * H), hn(H);
      for (int64_t j = 0; j < H; ++j) {
        h[j] = h0 ? h0->at((k * d.batch + b) * H + j) : 0;
        c[j] = c0 ? c0->at((k * d.batch + b) * H + j) : 0;
      }
      auto wb = [&](int64_t g) { return bias ? bias->at(k * 2 * G * H + g) : 0.0; };
      auto rb = [&](int64_t g) { return bias ? bias->at(k * 2 * G * H + G * H + g) : 0.0; };
      for (int64_t s = 0; s < len; ++s) {
        int64_t t = reverse ? len - 1 - s : s;
        // gates[g] = X W^T + (H R^T, except GRU's h gate) + biases.
        for (int64_t g = 0; g < G * H; ++g) {
          double xw = 0;
          for (int64_t i = 0; i < d.input; ++i)
            xw += xAt(x, batchFirst, d, t, b, i) * w.at((k * G * H + g) * d.input + i);
          gates[g] = xw + wb(g);
        }
        auto hr = [&](int64_t g, const std::vector<double>& hv) {
          double s2 = 0;
          for (int64_t j = 0; j < H; ++j) s2 += hv[j] * r.at((k * G * H + g) * H + j);
          return s2;
        };
        if (cell == Cell::Rnn) {
          for (int64_t j = 0; j < H; ++j) hn[j] = f[0](clipped(gates[j] + hr(j, h) + rb(j)));
        } else if (cell == Cell::Gru) {
          std::vector<double> z(H), rr(H), rh(H);
          for (int64_t j = 0; j < H; ++j) {
            z[j] = f[0](clipped(gates[j] + hr(j, h) + rb(j)));
            rr[j] = f[0](clipped(gates[H + j] + hr(H + j, h) + rb(H + j)));
          }
          for (int64_t j = 0; j < H; ++j) rh[j] = rr[j] * h[j];
          for (int64_t j = 0; j < H; ++j) {
            double pre = lbr ? gates[2 * H + j] + rr[j] * (hr(2 * H + j, h) + rb(2 * H + j))
                             : gates[2 * H + j] + hr(2 * H + j, rh) + rb(2 * H + j);
            double ht = f[1](clipped(pre));
            hn[j] = (1 - z[j]) * ht + z[j] * h[j];
          }
        } else {  // LSTM, gates i, o, f, c
          auto p = [&](int64_t g, int64_t j) {
            return peep ? peep->at(k * 3 * H + g * H + j) : 0.0;
          };
          std::vector<double> cn(H);
          for (int64_t j = 0; j < H; ++j) {
            double gi = f[0](clipped(gates[j] + hr(j, h) + rb(j) + p(0, j) * c[j]));
            double gf = inputForget ? 1 - gi
                                    : f[0](clipped(gates[2 * H + j] + hr(2 * H + j, h) +
                                                   rb(2 * H + j) + p(2, j) * c[j]));
            double gc = f[1](clipped(gates[3 * H + j] + hr(3 * H + j, h) + rb(3 * H + j)));
            cn[j] = gf * c[j] + gi * gc;
          }
          for (int64_t j = 0; j < H; ++j) {
            double go = f[0](clipped(gates[H + j] + hr(H + j, h) + rb(H + j) + p(1, j) * cn[j]));
            hn[j] = go * f[2](cn[j]);
          }
          c = cn;
        }
        h = hn;
        for (int64_t j = 0; j < H; ++j) storeF(y, yAt(t, k, b, j), h[j]);
      }
      // Steps past the sequence length stay zero in Y.
      for (int64_t j = 0; j < H; ++j) {
        storeF(yh, hAt(k, b, j), h[j]);
        storeF(yc, hAt(k, b, j), c[j]);
      }
    }
  }
  std::vector<TensorData> outs{std::move(y), std::move(yh)};
  if (cell == Cell::Lstm) outs.push_back(std::move(yc));
  outs.resize(std::min(outs.size(), n.outputs.size()));
  return outs;
}

Types inferRecurrent(Cell cell, const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 3, cell == Cell::Lstm ? 8 : 6));
  const TensorType& x = c.inputTypes[0];
  bool batchFirst = c.node.attrs.getInt("layout", 0) != 0;
  Dim dirs = Dim::fixed(c.node.attrs.getString("direction", "forward") == "bidirectional" ? 2 : 1);
  int64_t hs = c.node.attrs.getInt("hidden_size", -1);
  const TensorType& r = c.inputTypes[2];
  Dim H = hs > 0 ? Dim::fixed(hs) : (r.rankKnown && r.rank() == 3 ? r.shape[2] : Dim::unknown());
  std::vector<TensorType> outs;
  if (!x.rankKnown || x.rank() != 3) {
    for (size_t i = 0; i < c.node.outputs.size(); ++i) outs.push_back(unknownRank(x.dtype));
    return outs;
  }
  Dim seq = batchFirst ? x.shape[1] : x.shape[0], batch = batchFirst ? x.shape[0] : x.shape[1];
  TensorType y, h;
  y.dtype = h.dtype = x.dtype;
  y.shape =
      batchFirst ? std::vector<Dim>{batch, seq, dirs, H} : std::vector<Dim>{seq, dirs, batch, H};
  h.shape = batchFirst ? std::vector<Dim>{batch, dirs, H} : std::vector<Dim>{dirs, batch, H};
  outs = {y, h, h};
  outs.resize(std::min(outs.size(), c.node.outputs.size()));
  return outs;
}

}  // namespace

void registerRnnOps(OpRegistry& r) {
  // [cell = cell]: clang 14 (the fuzz build) cannot capture a structured binding itself.
  for (auto [name, cell] :
       {std::pair{"RNN", Cell::Rnn}, std::pair{"GRU", Cell::Gru}, std::pair{"LSTM", Cell::Lstm}})
    r.add(OpInfo{
        name, "", PatternKind::Opaque,
        [cell = cell](const InferContext& c) { return inferRecurrent(cell, c); },
        [cell = cell](const Node& n, const Inputs& in) { return recurrentKernel(cell, n, in); }});
}

}  // namespace fuselens::ops
