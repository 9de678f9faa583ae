// Data-movement ops (Gather family, Split, Tile, Expand, DepthToSpace,
// SpaceToDepth, Pad modes, Resize, Size, Shape) and the axis reductions
// ArgMax/ArgMin/CumSum, each compiled alone and inside a fused group (the
// default pipeline, with a Tanh after it so it inlines into a consumer), and
// compared with the eager interpreter.
#include <QtTest>
#include <functional>

#include "codegen/compiler.h"
#include "eager_check.h"
#include "passes/pass_manager.h"
#include "test_util.h"

using namespace fuselens;
using namespace fuselens::testing;

namespace {

ValueId ints(Graph& g, const std::string& name, Shape shape, std::vector<int64_t> v) {
  return g.addConstant(
      name, std::make_shared<const TensorData>(TensorData::fromVector(DType::I64, shape, v)));
}
ValueId floats(Graph& g, const std::string& name, std::vector<float> v) {
  int64_t n = int64_t(v.size());
  return g.addConstant(
      name, std::make_shared<const TensorData>(TensorData::fromVector(DType::F32, {n}, v)));
}

// A case: builds the op on input x (shape `in`) and returns its outputs.
struct Case {
  Shape in;
  std::function<std::vector<ValueId>(Graph&, ValueId)> build;
  bool floatOut = true;  // f32 outputs get a Tanh consumer to fuse with
};

ValueId one(Graph& g, const std::string& op, std::vector<ValueId> ins, TensorType out,
            Attributes a = {}) {
  return g.node(g.addNode(op, std::move(ins), {{op + "_out", out}}, std::move(a), op)).outputs[0];
}

Attributes attrs(std::initializer_list<std::pair<const char*, Attribute>> kv) {
  Attributes a;
  for (auto& [k, v] : kv) a.set(k, v);
  return a;
}

std::map<std::string, Case>& cases() {
  static std::map<std::string, Case> c = [] {
    std::map<std::string, Case> m;
    m["gather axis 1, negative index"] = {
        {2, 3, 4}, [](Graph& g, ValueId x) {
          return std::vector{one(g, "Gather", {x, ints(g, "i", {2, 2}, {0, -1, 2, 1})},
                                 f32({2, 2, 2, 4}), attrs({{"axis", int64_t(1)}}))};
        }};
    m["gather scalar index"] = {
        {5, 3}, [](Graph& g, ValueId x) {
          return std::vector{one(g, "Gather", {x, ints(g, "i", {}, {3})}, f32({3}))};
        }};
    m["gather elements"] = {{3, 4}, [](Graph& g, ValueId x) {
                              return std::vector{one(g, "GatherElements",
                                                     {x, ints(g, "i", {3, 2}, {0, 3, 1, -1, 2, 2})},
                                                     f32({3, 2}), attrs({{"axis", int64_t(1)}}))};
                            }};
    m["gather nd"] = {{2, 3, 4}, [](Graph& g, ValueId x) {
                        return std::vector{one(
                            g, "GatherND", {x, ints(g, "i", {2, 2}, {0, 1, 1, 2})}, f32({2, 4}))};
                      }};
    m["gather nd batch"] = {
        {2, 3, 4}, [](Graph& g, ValueId x) {
          return std::vector{one(g, "GatherND", {x, ints(g, "i", {2, 1, 1}, {2, 0})},
                                 f32({2, 1, 4}), attrs({{"batch_dims", int64_t(1)}}))};
        }};
    m["split three"] = {{2, 7}, [](Graph& g, ValueId x) {
                          NodeId id = g.addNode(
                              "Split", {x, ints(g, "s", {3}, {2, 4, 1})},
                              {{"a", f32({2, 2})}, {"b", f32({2, 4})}, {"c", f32({2, 1})}},
                              attrs({{"axis", int64_t(1)}}), "split");
                          return g.node(id).outputs;
                        }};
    m["tile"] = {{2, 3}, [](Graph& g, ValueId x) {
                   return std::vector{one(g, "Tile", {x, ints(g, "r", {2}, {2, 3})}, f32({4, 9}))};
                 }};
    m["expand"] = {
        {3, 1}, [](Graph& g, ValueId x) {
          return std::vector{one(g, "Expand", {x, ints(g, "s", {3}, {2, 1, 4})}, f32({2, 3, 4}))};
        }};
    m["depth to space dcr"] = {{1, 8, 2, 3}, [](Graph& g, ValueId x) {
                                 return std::vector{one(g, "DepthToSpace", {x}, f32({1, 2, 4, 6}),
                                                        attrs({{"blocksize", int64_t(2)}}))};
                               }};
    m["depth to space crd"] = {
        {1, 8, 2, 3}, [](Graph& g, ValueId x) {
          return std::vector{one(g, "DepthToSpace", {x}, f32({1, 2, 4, 6}),
                                 attrs({{"blocksize", int64_t(2)}, {"mode", std::string("CRD")}}))};
        }};
    m["space to depth"] = {{1, 2, 4, 6}, [](Graph& g, ValueId x) {
                             return std::vector{one(g, "SpaceToDepth", {x}, f32({1, 8, 2, 3}),
                                                    attrs({{"blocksize", int64_t(2)}}))};
                           }};
    for (const char* mode : {"edge", "reflect", "wrap"})
      m[std::string("pad ") + mode] = {
          {3, 4}, [mode](Graph& g, ValueId x) {
            return std::vector{one(g, "Pad", {x, ints(g, "p", {4}, {1, 2, 2, 1})}, f32({6, 7}),
                                   attrs({{"mode", std::string(mode)}}))};
          }};
    auto resize = [](std::string mode, std::string coord, Shape out, std::vector<float> scales,
                     Attributes extra = {}) {
      return [=](Graph& g, ValueId x) {
        Attributes a = extra;
        a.set("mode", mode);
        a.set("coordinate_transformation_mode", coord);
        return std::vector{one(g, "Resize", {x, ValueId(), floats(g, "s", scales)}, f32(out), a)};
      };
    };
    Shape up{1, 2, 6, 6};
    std::vector<float> sc{1, 1, 2, 1.5};
    m["resize nearest half_pixel"] = {{1, 2, 3, 4}, resize("nearest", "half_pixel", up, sc)};
    m["resize nearest asymmetric floor"] = {
        {1, 2, 3, 4},
        resize("nearest", "asymmetric", up, sc, attrs({{"nearest_mode", std::string("floor")}}))};
    m["resize nearest align ceil"] = {
        {1, 2, 3, 4},
        resize("nearest", "align_corners", up, sc,
               attrs({{"nearest_mode", std::string("round_prefer_ceil")}}))};
    m["resize linear half_pixel"] = {{1, 2, 3, 4}, resize("linear", "half_pixel", up, sc)};
    m["resize linear pytorch"] = {{1, 2, 3, 4}, resize("linear", "pytorch_half_pixel", up, sc)};
    m["resize linear symmetric"] = {{1, 2, 3, 4}, resize("linear", "half_pixel_symmetric", up, sc)};
    m["resize linear down"] = {{1, 1, 6, 7},
                               resize("linear", "align_corners", {1, 1, 3, 3}, {1, 1, 0.5, 0.5})};
    m["resize cubic exclude"] = {
        {1, 2, 3, 4},
        resize("cubic", "asymmetric", up, sc,
               attrs({{"cubic_coeff_a", -0.5}, {"exclude_outside", int64_t(1)}}))};
    m["resize cubic half_pixel"] = {{1, 2, 3, 4}, resize("cubic", "half_pixel", up, sc)};
    m["size and shape"] = {{2, 3, 4},
                           [](Graph& g, ValueId x) {
                             return std::vector{
                                 one(g, "Size", {x}, TensorType::of(DType::I64, {})),
                                 one(g, "Shape", {x}, TensorType::of(DType::I64, {2}),
                                     attrs({{"start", int64_t(1)}}))};
                           },
                           false};
    m["argmax keepdims"] = {
        {2, 3, 4},
        [](Graph& g, ValueId x) {
          return std::vector{one(g, "ArgMax", {x}, TensorType::of(DType::I64, {2, 1, 4}),
                                 attrs({{"axis", int64_t(1)}}))};
        },
        false};
    m["argmin last, no keepdims"] = {
        {2, 3, 4},
        [](Graph& g, ValueId x) {
          return std::vector{one(g, "ArgMin", {x}, TensorType::of(DType::I64, {2, 3}),
                                 attrs({{"axis", int64_t(-1)},
                                        {"keepdims", int64_t(0)},
                                        {"select_last_index", int64_t(1)}}))};
        },
        false};
    m["cumsum"] = {
        {2, 3, 4}, [](Graph& g, ValueId x) {
          return std::vector{one(g, "CumSum", {x, ints(g, "a", {}, {1})}, f32({2, 3, 4}))};
        }};
    m["cumsum exclusive reverse"] = {
        {2, 3, 4}, [](Graph& g, ValueId x) {
          return std::vector{one(g, "CumSum", {x, ints(g, "a", {}, {-1})}, f32({2, 3, 4}),
                                 attrs({{"exclusive", int64_t(1)}, {"reverse", int64_t(1)}}))};
        }};
    auto perChannel = [](Graph& g, const std::string& name, int64_t c, uint32_t seed) {
      return g.addConstant(name, std::make_shared<const TensorData>(randomTensor({c}, seed)));
    };
    m["instance norm"] = {
        {2, 4, 3, 5}, [=](Graph& g, ValueId x) {
          return std::vector{one(g, "InstanceNormalization",
                                 {x, perChannel(g, "s", 4, 1), perChannel(g, "b", 4, 2)},
                                 f32({2, 4, 3, 5}))};
        }};
    m["group norm"] = {
        {2, 6, 3, 5}, [=](Graph& g, ValueId x) {
          return std::vector{one(g, "GroupNormalization",
                                 {x, perChannel(g, "s", 6, 1), perChannel(g, "b", 6, 2)},
                                 f32({2, 6, 3, 5}), attrs({{"num_groups", int64_t(3)}}))};
        }};
    m["batch norm"] = {
        {2, 4, 3, 5}, [=](Graph& g, ValueId x) {
          ValueId var = g.addConstant(
              "v", std::make_shared<const TensorData>(randomTensor({4}, 4, 0.5f, 2.f)));
          return std::vector{one(g, "BatchNormalization",
                                 {x, perChannel(g, "s", 4, 1), perChannel(g, "b", 4, 2),
                                  perChannel(g, "m", 4, 3), var},
                                 f32({2, 4, 3, 5}), attrs({{"epsilon", 1e-3}}))};
        }};
    auto convT = [](Shape w, Shape out, bool bias, Attributes a) {
      return [=](Graph& g, ValueId x) {
        std::vector<ValueId> ins = {
            x, g.addConstant("w", std::make_shared<const TensorData>(randomTensor(w, 11)))};
        if (bias)
          ins.push_back(
              g.addConstant("b", std::make_shared<const TensorData>(randomTensor({out[1]}, 12))));
        return std::vector{one(g, "ConvTranspose", ins, f32(out), a)};
      };
    };
    m["conv transpose pads strides bias"] = {
        {1, 3, 4, 3},
        convT({3, 2, 3, 3}, {1, 2, 8, 6}, true,
              attrs({{"pads", std::vector<int64_t>{1, 0, 0, 1}},
                     {"strides", std::vector<int64_t>{2, 2}}}))};
    m["conv transpose 1d"] = {
        {1, 2, 5},
        convT({2, 2, 4}, {1, 2, 16}, false, attrs({{"strides", std::vector<int64_t>{3}}}))};
    m["conv transpose groups dilation outpad"] = {
        {1, 4, 3, 3},
        convT({4, 3, 2, 2}, {1, 6, 7, 11}, false,
              attrs({{"dilations", std::vector<int64_t>{1, 2}},
                     {"group", int64_t(2)},
                     {"output_padding", std::vector<int64_t>{1, 2}},
                     {"strides", std::vector<int64_t>{2, 3}}}))};
    m["conv transpose output_shape"] = {{1, 2, 4, 3},
                                        convT({2, 3, 3, 3}, {1, 3, 8, 7}, false,
                                              attrs({{"output_shape", std::vector<int64_t>{8, 7}},
                                                     {"strides", std::vector<int64_t>{2, 2}}}))};
    m["conv transpose same_upper"] = {{1, 2, 4, 3},
                                      convT({2, 3, 3, 3}, {1, 3, 8, 6}, false,
                                            attrs({{"auto_pad", std::string("SAME_UPPER")},
                                                   {"strides", std::vector<int64_t>{2, 2}}}))};
    auto einsum = [](std::string eq, std::vector<Shape> more, Shape out) {
      return [=](Graph& g, ValueId x) {
        std::vector<ValueId> ins = {x};
        for (size_t i = 0; i < more.size(); ++i)
          ins.push_back(g.addConstant("e" + std::to_string(i), std::make_shared<const TensorData>(
                                                                   randomTensor(more[i], 20 + i))));
        return std::vector{one(g, "Einsum", ins, f32(out), attrs({{"equation", eq}}))};
      };
    };
    m["einsum matmul"] = {{3, 4}, einsum("ij,jk->ik", {{4, 5}}, {3, 5})};
    m["einsum batch transpose"] = {{2, 3, 4}, einsum("bij,bkj->bki", {{2, 5, 4}}, {2, 5, 3})};
    m["einsum ellipsis implicit"] = {{2, 3, 4}, einsum("...ij,...jk", {{1, 4, 2}}, {2, 3, 2})};
    m["einsum outer reduce"] = {{3}, einsum("i,j,ij->j", {{4}, {3, 4}}, {4})};
    m["einsum trace"] = {{4, 4}, einsum("ii->", {}, {})};
    m["topk largest"] = {{3, 6}, [](Graph& g, ValueId x) {
                           NodeId id = g.addNode(
                               "TopK", {x, ints(g, "k", {1}, {3})},
                               {{"v", f32({3, 3})}, {"i", TensorType::of(DType::I64, {3, 3})}},
                               attrs({{"axis", int64_t(-1)}}), "topk");
                           return g.node(id).outputs;
                         }};
    m["topk smallest axis 0"] = {
        {5, 3}, [](Graph& g, ValueId x) {
          NodeId id = g.addNode("TopK", {x, ints(g, "k", {1}, {2})},
                                {{"v", f32({2, 3})}, {"i", TensorType::of(DType::I64, {2, 3})}},
                                attrs({{"axis", int64_t(0)}, {"largest", int64_t(0)}}), "topk");
          return g.node(id).outputs;
        }};
    m["layer norm mean and inv std"] = {
        {2, 4, 3, 5}, [](Graph& g, ValueId x) {
          ValueId s =
              g.addConstant("s", std::make_shared<const TensorData>(randomTensor({3, 5}, 1)));
          NodeId id = g.addNode(
              "LayerNormalization", {x, s},
              {{"y", f32({2, 4, 3, 5})}, {"mean", f32({2, 4, 1, 1})}, {"inv", f32({2, 4, 1, 1})}},
              attrs({{"axis", int64_t(-2)}, {"epsilon", 1e-4}}), "ln");
          return g.node(id).outputs;
        }};
    m["max pool indices"] = {
        {1, 4, 7, 6}, [](Graph& g, ValueId x) {
          NodeId id =
              g.addNode("MaxPool", {x},
                        {{"y", f32({1, 4, 4, 3})}, {"i", TensorType::of(DType::I64, {1, 4, 4, 3})}},
                        attrs({{"ceil_mode", int64_t(1)},
                               {"kernel_shape", std::vector<int64_t>{2, 2}},
                               {"strides", std::vector<int64_t>{2, 2}}}),
                        "pool");
          return g.node(id).outputs;
        }};
    auto scatter = [](std::string op, Shape q, std::vector<int64_t> idx, Shape u, Attributes a) {
      return [=](Graph& g, ValueId x) {
        ValueId upd = g.addConstant("u", std::make_shared<const TensorData>(randomTensor(u, 31)));
        return std::vector{one(g, op, {x, ints(g, "i", q, idx), upd}, g.value(x).type, a)};
      };
    };
    m["scatter elements"] = {{3, 4},
                             scatter("ScatterElements", {3, 2}, {3, 0, 1, -2, 2, 1}, {3, 2},
                                     attrs({{"axis", int64_t(1)}}))};
    m["scatter elements max, duplicates"] = {
        {3, 4},
        scatter("ScatterElements", {2, 4}, {0, 1, 2, 0, 0, 1, 2, 2}, {2, 4},
                attrs({{"axis", int64_t(0)}, {"reduction", std::string("max")}}))};
    m["scatter nd"] = {{2, 3, 4}, scatter("ScatterND", {2, 2}, {1, 0, 0, 2}, {2, 4}, {})};
    m["scatter nd add, duplicates"] = {{2, 3, 4},
                                       scatter("ScatterND", {2, 1}, {1, 1}, {2, 3, 4},
                                               attrs({{"reduction", std::string("add")}}))};
    m["log softmax axis 1"] = {{2, 3, 4}, [](Graph& g, ValueId x) {
                                 return std::vector{one(g, "LogSoftmax", {x}, f32({2, 3, 4}),
                                                        attrs({{"axis", int64_t(1)}}))};
                               }};
    m["log softmax long rows"] = {{3, 70}, [](Graph& g, ValueId x) {
                                    return std::vector{one(g, "LogSoftmax", {x}, f32({3, 70}))};
                                  }};
    m["reduce log sum"] = {{2, 3, 4}, [](Graph& g, ValueId x) {
                             ValueId ax = ints(g, "a", {1}, {1});
                             ValueId y = one(g, "Abs", {x}, f32({2, 3, 4}));
                             return std::vector{one(g, "ReduceLogSum", {y, ax}, f32({2, 1, 4}))};
                           }};
    m["reduce log sum exp"] = {
        {2, 3, 40}, [](Graph& g, ValueId x) {
          return std::vector{one(g, "ReduceLogSumExp", {x, ints(g, "a", {2}, {0, -1})}, f32({3}),
                                 attrs({{"keepdims", int64_t(0)}}))};
        }};
    m["gather i32 index"] = {{2, 3, 4}, [](Graph& g, ValueId x) {
                               ValueId i = g.addConstant(
                                   "i", std::make_shared<const TensorData>(TensorData::fromVector(
                                            DType::I32, {2}, std::vector<int32_t>{1, -2})));
                               return std::vector{one(g, "Gather", {x, i}, f32({2, 3, 4}))};
                             }};
    m["one hot, negative index"] = {
        {2, 2}, [](Graph& g, ValueId) {
          ValueId i = g.addInput("idx", TensorType::of(DType::I64, {2, 2}));
          ValueId depth = ints(g, "d", {}, {4});
          ValueId y = one(g, "OneHot", {i, depth, floats(g, "v", {-1, 2})}, f32({2, 4, 2}),
                          attrs({{"axis", int64_t(1)}}));
          return std::vector{y};
        }};
    m["resize linear antialias down"] = {
        {1, 2, 6, 9},
        resize("linear", "half_pixel", {1, 2, 3, 4}, {1, 1, 0.5, 0.5},
               attrs({{"antialias", int64_t(1)}}))};
    m["resize cubic antialias, axes"] = {
        {1, 2, 6, 9}, [](Graph& g, ValueId x) {
          Attributes a = attrs({{"antialias", int64_t(1)},
                                {"axes", std::vector<int64_t>{3, 2}},
                                {"mode", std::string("cubic")}});
          return std::vector{one(g, "Resize", {x, ValueId(), floats(g, "s", {0.45f, 0.7f})},
                                 f32({1, 2, 4, 4}), a)};
        }};
    m["resize sizes keep not_larger"] = {
        {1, 1, 6, 7}, [](Graph& g, ValueId x) {
          Attributes a = attrs({{"keep_aspect_ratio_policy", std::string("not_larger")},
                                {"axes", std::vector<int64_t>{2, 3}},
                                {"mode", std::string("linear")}});
          return std::vector{one(g, "Resize", {x, ValueId(), ValueId(), ints(g, "sz", {2}, {3, 7})},
                                 f32({1, 1, 3, 4}), a)};
        }};
    m["max pool indices column-major"] = {
        {1, 2, 5, 6}, [](Graph& g, ValueId x) {
          NodeId id =
              g.addNode("MaxPool", {x},
                        {{"y", f32({1, 2, 4, 6})}, {"i", TensorType::of(DType::I64, {1, 2, 4, 6})}},
                        attrs({{"storage_order", int64_t(1)},
                               {"kernel_shape", std::vector<int64_t>{2, 2}},
                               {"pads", std::vector<int64_t>{0, 1, 0, 0}}}),
                        "pool");
          return g.node(id).outputs;
        }};
    m["cumsum i32"] = {{3, 4},
                       [](Graph& g, ValueId x) {
                         ValueId xi = one(g, "Cast", {x}, TensorType::of(DType::I32, {3, 4}),
                                          attrs({{"to", int64_t(6)}}));
                         return std::vector{one(g, "CumSum", {xi, ints(g, "a", {}, {-1})},
                                                TensorType::of(DType::I32, {3, 4}))};
                       },
                       false};
    // Recurrent cells on X [4, 2, 3] with hidden size 5 (scalar gates), 16 or
    // 24 (gates packed into vectors: G*H a multiple of the vector), weights random.
    auto rnn = [](std::string op, int64_t gates, int64_t dirs, bool lens, Attributes a,
                  int64_t hid = 5) {
      return [=](Graph& g, ValueId x) {
        auto w = [&](const char* name, Shape s, uint32_t seed) {
          return g.addConstant(name, std::make_shared<const TensorData>(randomTensor(s, seed)));
        };
        std::vector<ValueId> ins = {x, w("W", {dirs, gates * hid, 3}, 41),
                                    w("R", {dirs, gates * hid, hid}, 42),
                                    w("B", {dirs, 2 * gates * hid}, 43)};
        ins.push_back(
            lens ? g.addConstant("lens", std::make_shared<const TensorData>(TensorData::fromVector(
                                             DType::I32, {2}, std::vector<int32_t>{4, 2})))
                 : ValueId());
        ins.push_back(w("h0", {dirs, 2, hid}, 44));
        std::vector<OutputSpec> outs = {{"y", f32({4, dirs, 2, hid})}, {"yh", f32({dirs, 2, hid})}};
        if (op == "LSTM") {
          ins.push_back(w("c0", {dirs, 2, hid}, 45));
          ins.push_back(w("P", {dirs, 3 * hid}, 46));
          outs.push_back({"yc", f32({dirs, 2, hid})});
        }
        Attributes all = a;
        all.set("hidden_size", hid);
        return g.node(g.addNode(op, ins, outs, all, op)).outputs;
      };
    };
    m["rnn reverse, seq lens"] = {
        {4, 2, 3}, rnn("RNN", 1, 1, true, attrs({{"direction", std::string("reverse")}}))};
    m["rnn relu"] = {
        {4, 2, 3},
        rnn("RNN", 1, 1, false, attrs({{"activations", std::vector<std::string>{"Relu"}}}))};
    m["gru bidirectional"] = {
        {4, 2, 3}, rnn("GRU", 3, 2, false, attrs({{"direction", std::string("bidirectional")}}))};
    m["gru linear before reset, seq lens"] = {
        {4, 2, 3},
        rnn("GRU", 3, 2, true,
            attrs({{"direction", std::string("bidirectional")},
                   {"linear_before_reset", int64_t(1)}}))};
    m["lstm bidirectional peepholes"] = {
        {4, 2, 3}, rnn("LSTM", 4, 2, false, attrs({{"direction", std::string("bidirectional")}}))};
    m["lstm clip, input_forget, seq lens"] = {
        {4, 2, 3}, rnn("LSTM", 4, 1, true, attrs({{"clip", 0.5}, {"input_forget", int64_t(1)}}))};
    m["lstm hidden 16: packed gates, bidirectional peepholes, seq lens"] = {
        {4, 2, 3},
        rnn("LSTM", 4, 2, true, attrs({{"direction", std::string("bidirectional")}}), 16)};
    m["lstm hidden 24: packed gates, clip"] = {
        {4, 2, 3}, rnn("LSTM", 4, 1, false, attrs({{"clip", 0.5}}), 24)};
    m["rnn hidden 16: packed gates, reverse"] = {
        {4, 2, 3}, rnn("RNN", 1, 1, false, attrs({{"direction", std::string("reverse")}}), 16)};
    m["matmul i64, batch broadcast"] = {
        {2, 3, 4},
        [](Graph& g, ValueId x) {
          ValueId xi = one(g, "Cast", {x}, TensorType::of(DType::I64, {2, 3, 4}),
                           attrs({{"to", int64_t(7)}}));
          ValueId w = ints(g, "w", {4, 2}, {1, -2, 3, 0, 5, 1, -1, 2});
          return std::vector{one(g, "MatMul", {xi, w}, TensorType::of(DType::I64, {2, 3, 2}))};
        },
        false};
    return m;
  }();
  return c;
}

}  // namespace

class CodegenDataTest : public QObject {
  Q_OBJECT

 private slots:
  void op_data();
  void op();
  void badIndicesTypeIsAnError();
};

void CodegenDataTest::op_data() {
  QTest::addColumn<QString>("name");
  QTest::addColumn<bool>("fused");
  for (const auto& [name, c] : cases()) {
    QTest::newRow((name + ", alone").c_str()) << QString::fromStdString(name) << false;
    if (c.floatOut)
      QTest::newRow((name + ", fused").c_str()) << QString::fromStdString(name) << true;
  }
}

void CodegenDataTest::op() {
  QFETCH(QString, name);
  QFETCH(bool, fused);
  const Case& c = cases().at(name.toStdString());
  Graph g;
  ValueId x = g.addInput("x", f32(c.in));
  for (ValueId y : c.build(g, x)) {
    if (fused && g.value(y).type.dtype == DType::F32) {
      Shape s = *g.value(y).type.staticShape();
      y = g.node(g.addNode("Tanh", {y}, {{g.value(y).name + "_t", f32(s)}})).outputs[0];
    }
    g.addOutput(y);
  }
  g.markAsOriginal();
  std::string info;
  std::map<std::string, TensorData> in = {{"x", randomTensor(c.in, 7, -2, 2)}};
  if (g.inputs().size() > 1)  // indices of the one-hot case
    in["idx"] = TensorData::fromVector(DType::I64, {2, 2}, std::vector<int64_t>{0, 3, -1, 5});
  double err = test::compiledVsEager(g, in, fused ? defaultPipeline() : "", &info);
  QVERIFY2(err <= 2e-6, info.c_str());
}

void CodegenDataTest::badIndicesTypeIsAnError() {
  Graph g;
  ValueId x = g.addInput("x", f32({4, 3}));
  ValueId i = g.addInput("i", TensorType::of(DType::F32, {2}));
  g.addOutput(g.node(g.addNode("Gather", {x, i}, {{"y", f32({2, 3})}}, {}, "g")).outputs[0]);
  CompileOptions opts;
  opts.fallback = false;
  auto m = compileGraph(g, opts);
  QVERIFY(!m.isOk());
  QCOMPARE(m.message(),
           std::string("node 'g' (Gather): indices of type f32 have no code generation (i32 "
                       "and i64 do)"));
}

QTEST_GUILESS_MAIN(CodegenDataTest)
#include "codegen_data_test.moc"
