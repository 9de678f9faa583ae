#include "codegen/llvm/kernel_key.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/SHA256.h>

#include <cstring>

namespace fuselens {
namespace {

void floatBits(const ExprRef& e, std::string& out) {
  if (e->kind == ExprKind::FloatConst) {
    char bits[sizeof(double)];
    std::memcpy(bits, &e->f, sizeof bits);
    out.append(bits, sizeof bits);
  }
  for (const ExprRef& o : e->ops) floatBits(o, out);
}

void floatBits(const StmtRef& s, std::string& out) {
  if (s->index) floatBits(s->index, out);
  if (s->value) floatBits(s->value, out);
  for (const StmtRef& c : s->body) floatBits(c, out);
}

std::string hexOf(llvm::ArrayRef<uint8_t> digest) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (uint8_t byte : digest) {
    out += hex[byte >> 4];
    out += hex[byte & 15];
  }
  return out;
}

}  // namespace

std::string sha256Hex(const std::vector<std::string_view>& parts) {
  llvm::SHA256 h;
  for (std::string_view s : parts) {  // length-prefixed, so parts cannot run together
    uint64_t n = s.size();
    h.update(llvm::StringRef(reinterpret_cast<const char*>(&n), sizeof n));
    h.update(llvm::StringRef(s.data(), s.size()));
  }
  return hexOf(h.final());
}

std::string canonicalLoopText(const LoopFunc& f) {
  LoopFunc c = f;  // shares the statement tree; only the name tables are copied
  c.name = "k";
  for (size_t i = 0; i < c.buffers.size(); ++i) c.buffers[i].name = "b" + std::to_string(i);
  for (size_t i = 0; i < c.vars.size(); ++i) c.vars[i].name = "v" + std::to_string(i);
  return printLoopFunc(c);
}

std::string kernelKey(const LoopFunc& f, const std::string& context) {
  llvm::SHA256 h;
  auto part = [&](llvm::StringRef s) {  // length-prefixed, so parts cannot run together
    uint64_t n = s.size();
    h.update(llvm::StringRef(reinterpret_cast<const char*>(&n), sizeof n));
    h.update(s);
  };
  part(context);
  part(canonicalLoopText(f));
  std::string bits;
  if (f.body) floatBits(f.body, bits);
  part(bits);
  for (const Buffer& b : f.buffers) {
    if (b.kind != BufferKind::Constant) continue;
    part(b.data ? llvm::StringRef(reinterpret_cast<const char*>(b.data->bytes.data()),
                                  b.data->bytes.size())
                : llvm::StringRef("<no data>"));
  }
  return hexOf(h.final());
}

}  // namespace fuselens
