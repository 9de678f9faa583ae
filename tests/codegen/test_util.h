// Helpers shared by the codegen tests: seeded tensors, graphs that wrap a body
// in one fused group, and plain-loop references written independently of both
// the lowering and the eager kernels.
#pragma once

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/ir/graph.h"

namespace fuselens::testing {

using Shape = std::vector<int64_t>;

inline int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

inline TensorData randomTensor(const Shape& shape, uint32_t seed, float lo = -1, float hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(size_t(numel(shape)));
  for (float& x : v) x = dist(rng);
  return TensorData::fromVector(DType::F32, shape, v);
}

inline std::vector<float> values(const TensorData& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

// Row-major strides of a shape.
inline Shape strides(const Shape& s) {
  Shape st(s.size(), 1);
  for (size_t k = s.size(); k-- > 1;) st[k - 1] = st[k] * s[k];
  return st;
}

// Element of t (shape ts) that broadcasts to position `flat` of shape out.
inline float bcastAt(const std::vector<float>& t, const Shape& ts, const Shape& out, int64_t flat) {
  Shape so = strides(out), st = strides(ts);
  int64_t off = 0;
  size_t lead = out.size() - ts.size();
  for (size_t k = 0; k < out.size(); ++k) {
    int64_t i = (flat / so[k]) % out[k];
    if (k >= lead && ts[k - lead] != 1) off += i * st[k - lead];
  }
  return t[size_t(off)];
}

inline Shape broadcastShape(const Shape& a, const Shape& b) {
  size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t k = 0; k < r; ++k) {
    int64_t da = k < r - a.size() ? 1 : a[k - (r - a.size())];
    int64_t db = k < r - b.size() ? 1 : b[k - (r - b.size())];
    out[k] = std::max(da, db);
  }
  return out;
}

// Numpy matmul, with 1-D promotion and batch broadcast.
inline std::vector<float> refMatMul(const std::vector<float>& a, Shape as,
                                    const std::vector<float>& b, Shape bs, Shape* outShape) {
  bool av = as.size() == 1, bv = bs.size() == 1;
  if (av) as = {1, as[0]};
  if (bv) bs = {bs[0], 1};
  int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  Shape ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
  Shape batch = broadcastShape(ab, bb);
  std::vector<float> out(size_t(numel(batch) * m * n));
  Shape full = batch;
  full.push_back(m);
  full.push_back(n);
  Shape aFull = batch, bFull = batch;
  aFull.insert(aFull.end(), {m, k});
  bFull.insert(bFull.end(), {k, n});
  // Gather a/b with batch broadcast through bcastAt on the batch-expanded shapes.
  for (int64_t bi = 0; bi < numel(batch); ++bi)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p)
          acc += double(bcastAt(a, as, aFull, (bi * m + i) * k + p)) *
                 double(bcastAt(b, bs, bFull, (bi * k + p) * n + j));
        out[size_t((bi * m + i) * n + j)] = float(acc);
      }
  *outShape = batch;
  if (!av) outShape->push_back(m);
  if (!bv) outShape->push_back(n);
  return out;
}

inline std::vector<float> refSoftmax(const std::vector<float>& x, const Shape& s, int64_t axis) {
  if (axis < 0) axis += int64_t(s.size());
  int64_t len = s[axis], inner = 1, outer = 1;
  for (size_t k = axis + 1; k < s.size(); ++k) inner *= s[k];
  for (int64_t k = 0; k < axis; ++k) outer *= s[k];
  std::vector<float> y(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t r) { return size_t((o * len + r) * inner + i); };
      double mx = -INFINITY, sum = 0;
      for (int64_t r = 0; r < len; ++r) mx = std::max(mx, double(x[at(r)]));
      for (int64_t r = 0; r < len; ++r) sum += std::exp(double(x[at(r)]) - mx);
      for (int64_t r = 0; r < len; ++r) y[at(r)] = float(std::exp(double(x[at(r)]) - mx) / sum);
    }
  return y;
}

// Wraps body in a graph with one Fused node; body inputs named in `consts`
// become constants of the outer graph, the others graph inputs.
inline Graph wrapInGroup(
    Graph body, const std::map<std::string, std::shared_ptr<const TensorData>>& consts = {}) {
  Graph g;
  std::vector<ValueId> ins;
  for (ValueId v : body.inputs()) {
    const Value& val = body.value(v);
    auto it = consts.find(val.name);
    ins.push_back(it != consts.end() ? g.addConstant(val.name, it->second)
                                     : g.addInput(val.name, val.type));
  }
  std::vector<OutputSpec> outs;
  for (ValueId o : body.outputs()) outs.push_back({body.value(o).name, body.value(o).type});
  Attributes a;
  a.set("group", int64_t(0));
  a.set("kind", std::string("OutEWiseFusable"));
  NodeId n = g.addNode(kFusedOp, ins, outs, a, "group0");
  g.mutableNode(n).domain = kFuseLensDomain;
  g.mutableNode(n).body = std::make_shared<const Graph>(std::move(body));
  for (ValueId o : g.node(n).outputs) g.addOutput(o);
  return g;
}

inline TensorType f32(const Shape& s) { return TensorType::of(DType::F32, s); }

}  // namespace fuselens::testing
