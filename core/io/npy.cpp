// .npy files (NumPy format 1.0-3.0): little-endian, C order, numeric dtypes.
// Files come from users, so the header is parsed defensively: the shape must
// account for exactly the bytes that follow it before anything is allocated.
// Writes go through writeFileAtomically (temporary file, then rename). randomTensor gives
// seeded inputs (splitmix64) for a quick look at a model.
#include "core/io/npy.h"

#include <bit>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/support/atomic_file.h"

namespace fuselens {
namespace {

static_assert(std::endian::native == std::endian::little, "npy I/O assumes a little-endian host");

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMaxHeader = 1 << 20;  // numpy itself refuses headers over 10 kB by default

struct DescrRow {
  const char* descr;
  DType type;
};
// The descr FuseLens writes for each dtype; '|' and '=' are also read for 1-byte types.
constexpr DescrRow kDescrs[] = {{"<f4", DType::F32}, {"<f8", DType::F64}, {"<f2", DType::F16},
                                {"|i1", DType::I8},  {"|u1", DType::U8},  {"<i2", DType::I16},
                                {"<i4", DType::I32}, {"<i8", DType::I64}, {"|b1", DType::Bool}};

Expected<DType> dtypeOfDescr(std::string descr, const std::string& path) {
  if (descr.size() >= 2 && (descr[0] == '>' || descr[0] == '!') && descr.substr(1) != "i1" &&
      descr.substr(1) != "u1" && descr.substr(1) != "b1")
    return Expected<DType>::error("big-endian data ('" + descr + "') is not supported; save it " +
                                      "with a little-endian dtype ('<" + descr.substr(1) + "')",
                                  path);
  if (descr.find('O') != std::string::npos)
    return Expected<DType>::error("object arrays are not supported; save a numeric array", path);
  // One-byte types have no byte order: numpy may write any of '|', '<', '>', '='.
  if (descr.size() == 3 && descr[2] == '1') descr[0] = '|';
  if (descr.size() == 3 && descr[0] == '=') descr[0] = '<';
  for (const auto& r : kDescrs)
    if (descr == r.descr) return r.type;
  return Expected<DType>::error("dtype '" + descr + "' is not supported", path);
}

const char* descrOf(DType t) {
  for (const auto& r : kDescrs)
    if (r.type == t) return r.descr;
  return nullptr;
}

// Value text of `'key': <value>` in the header dict, up to the next ',' or '}'
// at depth 0 (the shape tuple has commas inside parentheses).
std::optional<std::string> dictValue(const std::string& h, const std::string& key) {
  size_t k = h.find("'" + key + "'");
  if (k == std::string::npos) k = h.find("\"" + key + "\"");
  if (k == std::string::npos) return std::nullopt;
  size_t colon = h.find(':', k + key.size() + 2);
  if (colon == std::string::npos) return std::nullopt;
  size_t i = colon + 1, depth = 0;
  std::string v;
  for (; i < h.size(); ++i) {
    char c = h[i];
    if (c == '(') ++depth;
    if (c == ')' && depth > 0) --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
    v += c;
  }
  if (depth != 0) return std::nullopt;
  size_t a = v.find_first_not_of(" \t"), b = v.find_last_not_of(" \t");
  return a == std::string::npos ? std::string() : v.substr(a, b - a + 1);
}

std::optional<std::vector<int64_t>> parseShape(const std::string& s) {
  if (s.size() < 2 || s.front() != '(' || s.back() != ')') return std::nullopt;
  std::vector<int64_t> shape;
  std::string inner = s.substr(1, s.size() - 2);
  size_t i = 0;
  while (i < inner.size()) {
    while (i < inner.size() && (inner[i] == ' ' || inner[i] == ',')) ++i;
    if (i == inner.size()) break;
    if (!std::isdigit(static_cast<unsigned char>(inner[i]))) return std::nullopt;
    int64_t d = 0;
    while (i < inner.size() && std::isdigit(static_cast<unsigned char>(inner[i]))) {
      if (d > (INT64_MAX - 9) / 10) return std::nullopt;
      d = d * 10 + (inner[i++] - '0');
    }
    shape.push_back(d);
  }
  return shape;
}

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Round-to-nearest-even float -> IEEE half, for |x| <= 1 (no overflow to handle).
uint16_t floatToHalf(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  int32_t exp = int32_t((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffffu;
  if (exp <= 0) {  // subnormal or zero in half
    if (exp < -10) return uint16_t(sign);
    mant |= 0x800000u;
    uint32_t shift = uint32_t(14 - exp);
    uint32_t h = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) ++h;
    return uint16_t(sign | h);
  }
  uint32_t h = (uint32_t(exp) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) ++h;
  return uint16_t(sign | h);
}

}  // namespace

Expected<TensorData> readNpy(const std::string& path) {
  using E = Expected<TensorData>;
  std::ifstream f(path, std::ios::binary);
  if (!f) return E::error("cannot open the file", path);
  std::error_code ec;
  uintmax_t fileSize = std::filesystem::file_size(path, ec);
  if (ec) return E::error("cannot read the file size", path);
  char pre[8];
  if (!f.read(pre, 8) || std::memcmp(pre, kMagic, 6) != 0)
    return E::error("not a .npy file (no \\x93NUMPY magic)", path);
  int major = static_cast<unsigned char>(pre[6]);
  size_t headerLen = 0, prefix = 0;
  if (major == 1) {
    unsigned char b[2];
    if (!f.read(reinterpret_cast<char*>(b), 2)) return E::error("truncated .npy header", path);
    headerLen = b[0] | (size_t(b[1]) << 8);
    prefix = 10;
  } else if (major == 2 || major == 3) {
    unsigned char b[4];
    if (!f.read(reinterpret_cast<char*>(b), 4)) return E::error("truncated .npy header", path);
    headerLen = b[0] | (size_t(b[1]) << 8) | (size_t(b[2]) << 16) | (size_t(b[3]) << 24);
    prefix = 12;
  } else {
    return E::error(".npy format version " + std::to_string(major) + " is not supported", path);
  }
  if (headerLen > kMaxHeader || prefix + headerLen > fileSize)
    return E::error(
        "the .npy header length " + std::to_string(headerLen) + " does not fit in the file", path);
  std::string header(headerLen, '\0');
  if (!f.read(header.data(), std::streamsize(headerLen)))
    return E::error("truncated .npy header", path);

  auto descr = dictValue(header, "descr");
  auto fortran = dictValue(header, "fortran_order");
  auto shapeText = dictValue(header, "shape");
  if (!descr || !fortran || !shapeText || descr->size() < 2)
    return E::error("the .npy header lacks descr, fortran_order or shape", path);
  if (*fortran != "False")
    return E::error("Fortran-order arrays are not supported; save with np.ascontiguousarray", path);
  auto dtype = dtypeOfDescr(descr->substr(1, descr->size() - 2), path);
  if (!dtype) return dtype.status();
  auto shape = parseShape(*shapeText);
  if (!shape) return E::error("the .npy header has a malformed shape " + *shapeText, path);

  // The data size the header claims, checked for overflow, must be what the file holds.
  uint64_t bytes = dtypeSize(*dtype);
  for (int64_t d : *shape)
    if (__builtin_mul_overflow(bytes, uint64_t(d), &bytes))
      return E::error("the .npy shape " + *shapeText + " is too large", path);
  uint64_t available = fileSize - prefix - headerLen;
  if (bytes != available)
    return E::error("the header's shape " + *shapeText + " needs " + std::to_string(bytes) +
                        " data bytes but the file holds " + std::to_string(available) +
                        (bytes > available ? " (truncated file?)" : ""),
                    path);
  TensorData t(*dtype, *shape);
  if (!f.read(reinterpret_cast<char*>(t.bytes.data()), std::streamsize(bytes)))
    return E::error("reading the data failed", path);
  return t;
}

Status writeNpy(const std::string& path, const TensorData& t) {
  const char* descr = descrOf(t.dtype);
  if (!descr)
    return Status::error("dtype " + std::string(dtypeName(t.dtype)) + " has no .npy equivalent",
                         path);
  if (t.bytes.size() != size_t(t.numel()) * dtypeSize(t.dtype))
    return Status::error("the tensor's byte count does not match its shape", path);
  std::string shape = "(";
  for (size_t i = 0; i < t.rank(); ++i) shape += std::to_string(t.shape[i]) + ", ";
  if (t.rank() > 1) shape.resize(shape.size() - 2);
  if (t.rank() == 1) shape.pop_back();  // "(5,)": a one-tuple keeps its comma
  shape += ")";
  std::string header =
      "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad with spaces to a 64-byte boundary, newline last, as numpy does.
  bool v2 = header.size() + 11 > 65535;
  size_t prefix = v2 ? 12 : 10;
  size_t total = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(total - prefix - header.size() - 1, ' ');
  header += '\n';

  std::string out(kMagic, 6);
  out += char(v2 ? 2 : 1);
  out += char(0);
  uint32_t len = uint32_t(header.size());
  for (size_t i = 0; i < (v2 ? 4u : 2u); ++i) out += char((len >> (8 * i)) & 0xff);
  out += header;
  out.append(reinterpret_cast<const char*>(t.bytes.data()), t.bytes.size());
  return writeFileAtomically(path, out);
}

Expected<TensorData> randomTensor(const TensorType& type, uint64_t seed) {
  auto shape = type.staticShape();
  if (!shape)
    return Expected<TensorData>::error("cannot make random data for " + type.str() +
                                       ": every dim needs a value");
  uint64_t bytes = dtypeSize(type.dtype);
  for (int64_t d : *shape)
    if (__builtin_mul_overflow(bytes, uint64_t(d), &bytes) || bytes > (uint64_t(1) << 34))
      return Expected<TensorData>::error("cannot make random data for " + type.str() +
                                         ": it is larger than 16 GiB");
  TensorData t(type.dtype, *shape);
  uint64_t state = seed;
  for (int64_t i = 0; i < t.numel(); ++i) {
    uint64_t r = splitmix64(state);
    double u = double(r >> 11) * 0x1.0p-53 * 2.0 - 1.0;  // [-1, 1)
    int64_t small = int64_t(r % 10);                     // [0, 10)
    switch (t.dtype) {
      case DType::F32:
        t.data<float>()[i] = float(u);
        break;
      case DType::F64:
        t.data<double>()[i] = u;
        break;
      case DType::F16:
        t.data<uint16_t>()[i] = floatToHalf(float(u));
        break;
      case DType::BF16:  // truncation: any bf16 value in [-1, 1) will do
        t.data<uint16_t>()[i] = uint16_t(std::bit_cast<uint32_t>(float(u)) >> 16);
        break;
      case DType::I8:
        t.data<int8_t>()[i] = int8_t(small);
        break;
      case DType::U8:
        t.data<uint8_t>()[i] = uint8_t(small);
        break;
      case DType::I16:
        t.data<int16_t>()[i] = int16_t(small);
        break;
      case DType::I32:
        t.data<int32_t>()[i] = int32_t(small);
        break;
      case DType::I64:
        t.data<int64_t>()[i] = small;
        break;
      case DType::Bool:
        t.data<uint8_t>()[i] = uint8_t(r & 1);
        break;
    }
  }
  return t;
}

}  // namespace fuselens
