// The attribute schema of every ONNX-domain op in the registry: the kind ONNX
// gives each attribute the op reads, in any opset (older forms included, since
// the importer checks a node before canonicalizing it to the latest form). The
// importer refuses a node whose attribute has another kind, in one sentence,
// instead of the typed getters silently falling back to a default. A test
// checks that every registered ONNX op has a row here, even an empty one.
#include "core/ops/op_util.h"

namespace fuselens::ops {
namespace {

constexpr AttrKind I = AttrKind::Int, F = AttrKind::Float, S = AttrKind::String,
                   Is = AttrKind::Ints, Fs = AttrKind::Floats, Ss = AttrKind::Strings,
                   T = AttrKind::Tensor, G = AttrKind::Graph;

struct Row {
  const char* op;
  std::vector<AttrSpec> attrs;
};

// Reduce* and the binary ops share their attributes; listed once each.
const std::vector<AttrSpec> kReduce = {{"axes", Is}, {"keepdims", I}, {"noop_with_empty_axes", I}};
const std::vector<AttrSpec> kLegacyBroadcast = {{"broadcast", I}, {"axis", I}};
const std::vector<AttrSpec> kConsumed = {{"consumed_inputs", Is}};  // opset 1-5, ignored
const std::vector<AttrSpec> kPool = {
    {"auto_pad", S}, {"ceil_mode", I}, {"dilations", Is},    {"kernel_shape", Is},
    {"pads", Is},    {"strides", Is},  {"storage_order", I}, {"count_include_pad", I}};
const std::vector<AttrSpec> kRnn = {{"activation_alpha", Fs},
                                    {"activation_beta", Fs},
                                    {"activations", Ss},
                                    {"clip", F},
                                    {"direction", S},
                                    {"hidden_size", I},
                                    {"layout", I},
                                    {"linear_before_reset", I},
                                    {"input_forget", I}};

std::vector<Row> table() {
  return {
      // ---- elementwise ----
      {"Add", kLegacyBroadcast},
      {"Sub", kLegacyBroadcast},
      {"Mul", kLegacyBroadcast},
      {"Div", kLegacyBroadcast},
      {"Pow", kLegacyBroadcast},
      {"Equal", kLegacyBroadcast},
      {"Less", kLegacyBroadcast},
      {"Greater", kLegacyBroadcast},
      {"And", kLegacyBroadcast},
      {"Or", kLegacyBroadcast},
      {"Xor", kLegacyBroadcast},
      {"Mod", {{"fmod", I}}},
      {"BitShift", {{"direction", S}}},
      {"Min", kConsumed},
      {"Max", kConsumed},
      {"Sum", kConsumed},
      {"Mean", kConsumed},
      {"LessOrEqual", {}},
      {"GreaterOrEqual", {}},
      {"Not", {}},
      {"Where", {}},
      {"IsNaN", {}},
      {"IsInf", {{"detect_negative", I}, {"detect_positive", I}}},
      {"Abs", kConsumed},
      {"Neg", kConsumed},
      {"Sign", {}},
      {"Relu", kConsumed},
      {"Sqrt", kConsumed},
      {"Reciprocal", kConsumed},
      {"Exp", kConsumed},
      {"Log", kConsumed},
      {"Erf", {}},
      {"Sin", {}},
      {"Cos", {}},
      {"Tan", {}},
      {"Atan", {}},
      {"Floor", kConsumed},
      {"Ceil", kConsumed},
      {"Round", {}},
      {"Tanh", kConsumed},
      {"Sigmoid", kConsumed},
      {"LeakyRelu", {{"alpha", F}}},
      {"Elu", {{"alpha", F}}},
      {"Selu", {{"alpha", F}, {"gamma", F}}},
      {"Celu", {{"alpha", F}}},
      {"HardSigmoid", {{"alpha", F}, {"beta", F}}},
      {"HardSwish", {}},
      {"Softplus", {}},
      {"Softsign", {}},
      {"ThresholdedRelu", {{"alpha", F}}},
      {"Mish", {}},
      {"Gelu", {{"approximate", S}}},
      {"PRelu", kConsumed},
      {"Clip", {{"min", F}, {"max", F}}},
      {"Identity", {}},
      {"Dropout", {{"ratio", F}, {"is_test", I}, {"seed", I}}},
      // ---- matmul and reductions ----
      {"Einsum", {{"equation", S}}},
      {"MatMul", {}},
      {"Gemm", {{"alpha", F}, {"beta", F}, {"transA", I}, {"transB", I}, {"broadcast", I}}},
      {"ReduceSum", kReduce},
      {"ReduceMean", kReduce},
      {"ReduceMax", kReduce},
      {"ReduceMin", kReduce},
      {"ReduceProd", kReduce},
      {"ReduceL1", kReduce},
      {"ReduceL2", kReduce},
      {"ReduceSumSquare", kReduce},
      {"ReduceLogSum", kReduce},
      {"ReduceLogSumExp", kReduce},
      {"ArgMax", {{"axis", I}, {"keepdims", I}, {"select_last_index", I}}},
      {"ArgMin", {{"axis", I}, {"keepdims", I}, {"select_last_index", I}}},
      {"Softmax", {{"axis", I}}},
      {"LogSoftmax", {{"axis", I}}},
      {"CumSum", {{"exclusive", I}, {"reverse", I}}},
      {"TopK", {{"axis", I}, {"largest", I}, {"sorted", I}, {"k", I}}},
      // ---- shape and data movement ----
      {"Reshape", {{"shape", Is}, {"allowzero", I}}},
      {"Transpose", {{"perm", Is}}},
      {"Flatten", {{"axis", I}}},
      {"Squeeze", {{"axes", Is}}},
      {"Unsqueeze", {{"axes", Is}}},
      {"Concat", {{"axis", I}}},
      {"Split", {{"axis", I}, {"split", Is}, {"num_outputs", I}}},
      {"Slice", {{"starts", Is}, {"ends", Is}, {"axes", Is}}},
      {"Expand", {}},
      {"Tile", {}},
      {"Pad", {{"mode", S}, {"pads", Is}, {"paddings", Is}, {"value", F}}},
      {"DepthToSpace", {{"blocksize", I}, {"mode", S}}},
      {"SpaceToDepth", {{"blocksize", I}}},
      {"Gather", {{"axis", I}}},
      {"GatherElements", {{"axis", I}}},
      {"GatherND", {{"batch_dims", I}}},
      {"ScatterND", {{"reduction", S}}},
      {"ScatterElements", {{"axis", I}, {"reduction", S}}},
      {"Shape", {{"start", I}, {"end", I}}},
      {"Size", {}},
      {"ConstantOfShape", {{"value", T}}},
      {"Range", {}},
      {"NonZero", {}},
      {"OneHot", {{"axis", I}}},
      {"Cast", {{"to", I}, {"saturate", I}}},
      {"CastLike", {{"saturate", I}}},
      // ---- convolution, pooling, normalization ----
      {"Conv",
       {{"auto_pad", S},
        {"dilations", Is},
        {"group", I},
        {"kernel_shape", Is},
        {"pads", Is},
        {"strides", Is}}},
      {"ConvTranspose",
       {{"auto_pad", S},
        {"dilations", Is},
        {"group", I},
        {"kernel_shape", Is},
        {"output_padding", Is},
        {"output_shape", Is},
        {"pads", Is},
        {"strides", Is}}},
      {"MaxPool", kPool},
      {"AveragePool", kPool},
      {"GlobalAveragePool", {}},
      {"GlobalMaxPool", {}},
      {"BatchNormalization",
       {{"epsilon", F},
        {"momentum", F},
        {"spatial", I},
        {"training_mode", I},
        {"is_test", I},
        {"consumed_inputs", Is}}},
      {"InstanceNormalization", {{"epsilon", F}}},
      {"LayerNormalization", {{"axis", I}, {"epsilon", F}, {"stash_type", I}}},
      {"GroupNormalization", {{"epsilon", F}, {"num_groups", I}, {"stash_type", I}}},
      {"RNN", kRnn},
      {"GRU", kRnn},
      {"LSTM", kRnn},
      // ---- control flow, quantization, resize ----
      {"If", {{"then_branch", G}, {"else_branch", G}}},
      {"Loop", {{"body", G}}},
      {"Scan",
       {{"body", G},
        {"num_scan_inputs", I},
        {"directions", Is},
        {"scan_input_axes", Is},
        {"scan_input_directions", Is},
        {"scan_output_axes", Is},
        {"scan_output_directions", Is}}},
      {"QuantizeLinear", {{"axis", I}, {"saturate", I}, {"block_size", I}, {"output_dtype", I}}},
      {"DequantizeLinear", {{"axis", I}, {"block_size", I}}},
      {"Resize",
       {{"antialias", I},
        {"axes", Is},
        {"coordinate_transformation_mode", S},
        {"cubic_coeff_a", F},
        {"exclude_outside", I},
        {"extrapolation_value", F},
        {"keep_aspect_ratio_policy", S},
        {"mode", S},
        {"nearest_mode", S}}},
      {"Upsample", {{"mode", S}, {"scales", Fs}, {"height_scale", F}, {"width_scale", F}}},
  };
}

}  // namespace

void addAttributeSchemas(OpRegistry& r) {
  for (Row& row : table()) r.setAttributes("", row.op, std::move(row.attrs));
}

}  // namespace fuselens::ops
