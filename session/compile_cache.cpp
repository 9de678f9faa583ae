// Entry layout: "fuselens-compile-cache 1 <sha256 of the body>\n" then the
// body, a JSON object with the key's parts, the kernel count and the compile
// seconds. The key parts inside guard against a file copied under another name.
#include "session/compile_cache.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "codegen/llvm/kernel_key.h"
#include "codegen/llvm/object_cache.h"
#include "codegen/schedule/schedule.h"
#include "codegen/target.h"
#include "core/ir/printer.h"
#include "core/support/atomic_file.h"
#include "session/session.h"

namespace fuselens {
namespace {

namespace fs = std::filesystem;
constexpr const char* kMagic = "fuselens-compile-cache 1 ";

std::string keyOf(const CompileCacheEntry& e) {
  return sha256Hex({e.graphHash, e.shapes, e.target});
}

// Why the text of an entry cannot be trusted; empty when it can.
std::string corruption(const std::string& text, const CompileCacheEntry& key,
                       CompileCacheEntry& out) {
  const size_t magic = std::string(kMagic).size(), eol = text.find('\n');
  if (text.compare(0, magic, kMagic) != 0 || eol == std::string::npos || eol != magic + 64)
    return "its header is not a compile-cache header";
  const std::string body = text.substr(eol + 1);
  if (text.compare(magic, 64, sha256Hex({body})) != 0) return "its checksum does not match";
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return "its body is not JSON";
  try {
    out.graphHash = j.at("graph_hash").get<std::string>();
    out.shapes = j.at("shapes").get<std::string>();
    out.target = j.at("target").get<std::string>();
    out.kernels = j.at("kernels").get<size_t>();
    out.compileSeconds = j.at("compile_seconds").get<double>();
  } catch (const nlohmann::json::exception&) {
    return "a field is missing or of the wrong kind";
  }
  if (out.graphHash != key.graphHash || out.shapes != key.shapes || out.target != key.target)
    return "it holds another key";
  return {};
}

}  // namespace

CompileCache CompileCache::fromEnvironment() {
  ObjectCache objects = ObjectCache::fromEnvironment();
  if (!objects.enabled()) return {};
  std::string dir = (fs::path(objects.dir()).parent_path() / "modules").string();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return {};
  return CompileCache(dir);
}

std::string CompileCache::pathOf(const CompileCacheEntry& e) const {
  return dir_ + "/" + keyOf(e) + ".json";
}

Expected<std::optional<CompileCacheEntry>> CompileCache::load(const CompileCacheEntry& key) const {
  using Result = Expected<std::optional<CompileCacheEntry>>;
  if (!enabled()) return Result(std::nullopt);
  const std::string path = pathOf(key);
  std::ifstream in(path, std::ios::binary);
  if (!in) return Result(std::nullopt);
  std::stringstream text;
  text << in.rdbuf();
  CompileCacheEntry entry;
  std::string why = corruption(text.str(), key, entry);
  if (why.empty()) return Result(entry);
  std::error_code ec;
  fs::remove(path, ec);  // the recompile stores a good one
  return Result::error("the compile-cache entry for " + key.shapes + " is corrupt (" + why +
                           "): refused, removed, and the module compiled again",
                       path);
}

void CompileCache::store(const CompileCacheEntry& e) const {
  if (!enabled()) return;
  const std::string body = nlohmann::json{
      {"graph_hash", e.graphHash},
      {"shapes", e.shapes},
      {"target", e.target},
      {"kernels", e.kernels},
      {"compile_seconds",
       e.compileSeconds}}.dump(2);
  (void)writeFileAtomically(pathOf(e), kMagic + sha256Hex({body}) + "\n" + body);
}

std::string compileCacheGraphHash(const Graph& g, const std::string& pipeline) {
  std::vector<std::string_view> parts;
  const std::string text = printGraph(g);
  parts.push_back(text);
  parts.push_back(pipeline);
  for (ValueId v : g.constants())
    if (const auto& c = g.value(v).constant)
      parts.emplace_back(reinterpret_cast<const char*>(c->bytes.data()), c->bytes.size());
  return sha256Hex(parts);
}

std::string compileCacheTarget() {
  const CpuTarget& t = hostTarget();
  return t.cpu + "/" + t.features + "/" + std::to_string(t.threads) + "t/O" +
         std::to_string(CompileOptions{}.optLevel) +
         (Schedule::defaults().conv.winograd ? "" : "/direct-conv");
}

Expected<CachedCompile> compileCached(Session& session, const CompileCache& cache,
                                      CompileCacheEntry key, std::string& note,
                                      const CancelToken& cancel, const CompileOptions& opts) {
  key.target = compileCacheTarget();
  auto found = cache.load(key);
  if (!found) note = found.status().message();
  const bool known = found && found->has_value();
  auto start = std::chrono::steady_clock::now();
  FL_RETURN_IF_ERROR(session.compile(opts, {}, cancel));
  CachedCompile out;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const CompileStats stats = session.compiled()->stats();
  out.hit = known && stats.compiledKernels == 0;
  if (out.hit) out.firstSeconds = (*found)->compileSeconds;
  if (!known) {
    key.kernels = stats.kernels;
    key.compileSeconds = out.seconds;
    cache.store(key);
  }
  return out;
}

}  // namespace fuselens
