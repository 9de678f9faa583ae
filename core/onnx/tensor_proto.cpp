// TensorProto / TypeProto conversion for the ONNX importer (see tensor_proto.h).
// Model files are untrusted: dims are checked for overflow, and the element
// count is checked against raw_data, the typed fields or the external file
// before a buffer of that size is allocated.
#include "core/onnx/tensor_proto.h"

#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/ir/dim_expr.h"

namespace fuselens::onnximport {
namespace {

namespace fs = std::filesystem;
using TP = onnx::TensorProto;

static_assert(std::endian::native == std::endian::little,
              "ONNX raw_data is little-endian; this importer assumes the host is too");

// Element count and byte size of the dims, or an error when they are negative or overflow.
Expected<std::pair<int64_t, uint64_t>> sizeOf(const TP& t, DType dt, const std::string& what) {
  uint64_t n = 1;
  for (int64_t d : t.dims()) {
    if (d < 0) return Status::error("has a negative dimension " + std::to_string(d), what);
    if (__builtin_mul_overflow(n, uint64_t(d), &n) || n > (uint64_t(1) << 62))
      return Status::error("has dimensions whose product is absurdly large", what);
  }
  return std::pair<int64_t, uint64_t>{int64_t(n), n * dtypeSize(dt)};
}

// Reads `length` bytes at `offset` of a file named by external_data, which must
// lie inside the model's folder: a model must not read arbitrary files.
Expected<std::string> externalBytes(const TP& t, const std::string& what,
                                    const std::string& baseDir, uint64_t expected) {
  std::string location;
  uint64_t offset = 0, length = expected;
  for (const auto& kv : t.external_data()) {
    try {
      if (kv.key() == "location") location = kv.value();
      if (kv.key() == "offset") offset = std::stoull(kv.value());
      if (kv.key() == "length") length = std::stoull(kv.value());
    } catch (...) {
      return Status::error("has a malformed external_data entry '" + kv.key() + "'", what);
    }
  }
  if (baseDir.empty())
    return Status::error("uses external data, which needs the model's folder", what);
  fs::path rel(location);
  std::error_code ec;
  fs::path base = fs::weakly_canonical(fs::path(baseDir), ec);
  fs::path file = fs::weakly_canonical(base / rel, ec);
  auto [b, f] = std::mismatch(base.begin(), base.end(), file.begin(), file.end());
  if (location.empty() || rel.is_absolute() || ec || b != base.end())
    return Status::error("external data '" + location + "' is outside the model's folder", what);
  if (length != expected)
    return Status::error("external data length " + std::to_string(length) +
                             " does not match its shape (" + std::to_string(expected) + " bytes)",
                         what);
  uint64_t size = fs::file_size(file, ec);
  if (ec || offset > size || size - offset < length)
    return Status::error("external data file '" + location + "' is missing or too short", what);
  std::ifstream in(file, std::ios::binary);
  std::string bytes(length, '\0');
  in.seekg(std::streamoff(offset));
  if (!in.read(bytes.data(), std::streamsize(length)))
    return Status::error("cannot read external data file '" + location + "'", what);
  return bytes;
}

// Copies a typed repeated field (already checked to hold n values), converting
// each element to the tensor's type.
template <class Dst, class Field>
void copyTyped(TensorData& out, const Field& field, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out.data<Dst>()[i] = static_cast<Dst>(field.Get(int(i)));
}

}  // namespace

std::optional<DType> dtypeOfOnnx(int32_t e) {
  switch (e) {
    case TP::FLOAT:
      return DType::F32;
    case TP::DOUBLE:
      return DType::F64;
    case TP::FLOAT16:
      return DType::F16;
    case TP::BFLOAT16:
      return DType::BF16;
    case TP::INT8:
      return DType::I8;
    case TP::UINT8:
      return DType::U8;
    case TP::INT16:
      return DType::I16;
    case TP::INT32:
      return DType::I32;
    case TP::INT64:
      return DType::I64;
    case TP::BOOL:
      return DType::Bool;
    default:
      return std::nullopt;
  }
}

std::string onnxTypeName(int32_t e) {
  std::string name = onnx::TensorProto_DataType_IsValid(e) ? TP::DataType_Name(e) : "";
  return name.empty() ? "type " + std::to_string(e) : name;
}

Expected<TensorData> tensorFromProto(const TP& t, const std::string& what,
                                     const std::string& baseDir) {
  auto dt = dtypeOfOnnx(t.data_type());
  if (!dt)
    return Status::error(
        "has element type " + onnxTypeName(t.data_type()) + ", which FuseLens does not support",
        what);
  auto size = sizeOf(t, *dt, what);
  if (!size) return size.status();
  auto [n, bytes] = *size;

  std::string external;
  const std::string* raw = nullptr;
  if (t.data_location() == TP::EXTERNAL) {
    auto e = externalBytes(t, what, baseDir, bytes);
    if (!e) return e.status();
    external = std::move(*e);
    raw = &external;
  } else if (t.has_raw_data()) {
    raw = &t.raw_data();
  }
  if (raw) {
    if (raw->size() != bytes)
      return Status::error("has " + std::to_string(raw->size()) + " bytes of data but its shape " +
                               "needs " + std::to_string(bytes),
                           what);
    std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
    TensorData out(*dt, dims);
    if (bytes) std::memcpy(out.bytes.data(), raw->data(), bytes);
    return out;
  }

  // Typed fields: their element count bounds the allocation before it happens.
  int64_t stored = 0;
  switch (*dt) {
    case DType::F32:
      stored = t.float_data_size();
      break;
    case DType::F64:
      stored = t.double_data_size();
      break;
    case DType::I64:
      stored = t.int64_data_size();
      break;
    default:
      stored = t.int32_data_size();
      break;  // f16/bf16 bits, small ints, bool
  }
  if (stored != n)
    return Status::error(
        "holds " + std::to_string(stored) + " values but its shape needs " + std::to_string(n),
        what);
  TensorData out(*dt, std::vector<int64_t>(t.dims().begin(), t.dims().end()));
  switch (*dt) {
    case DType::F32:
      copyTyped<float>(out, t.float_data(), n);
      break;
    case DType::F64:
      copyTyped<double>(out, t.double_data(), n);
      break;
    case DType::I64:
      copyTyped<int64_t>(out, t.int64_data(), n);
      break;
    case DType::I32:
      copyTyped<int32_t>(out, t.int32_data(), n);
      break;
    case DType::I16:
      copyTyped<int16_t>(out, t.int32_data(), n);
      break;
    case DType::I8:
      copyTyped<int8_t>(out, t.int32_data(), n);
      break;
    case DType::F16:
    case DType::BF16:
      copyTyped<uint16_t>(out, t.int32_data(), n);
      break;
    case DType::U8:
    case DType::Bool:
      copyTyped<uint8_t>(out, t.int32_data(), n);
      break;
  }
  return out;
}

Expected<TensorType> typeFromProto(const onnx::TypeProto& t, const std::string& what) {
  if (!t.has_tensor_type())
    return Status::error("is not a tensor (sequences, maps and optionals are not supported)", what);
  const auto& tt = t.tensor_type();
  auto dt = dtypeOfOnnx(tt.elem_type());
  if (!dt)
    return Status::error(
        "has element type " + onnxTypeName(tt.elem_type()) + ", which FuseLens does not support",
        what);
  TensorType out;
  out.dtype = *dt;
  if (!tt.has_shape()) {
    out.rankKnown = false;
    return out;
  }
  for (const auto& d : tt.shape().dim()) {
    if (d.has_dim_value() && d.dim_value() >= 0) out.shape.push_back(Dim::fixed(d.dim_value()));
    // Paddle2ONNX writes "?" for "any size": an unknown dim, not a symbol that
    // would bind every "?" of the model to one size.
    else if (d.has_dim_param() && !d.dim_param().empty() && d.dim_param() != "?")
      out.shape.push_back(Dim::named(canonicalSymbol(d.dim_param())));  // "s0 + 1" is s0+1
    else
      out.shape.push_back(Dim::unknown());
  }
  return out;
}

}  // namespace fuselens::onnximport
