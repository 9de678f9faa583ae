// Entry layout: "FLKOBJ01" | u64 payload length | u64 FNV-1a of the payload |
// u64 key length | key | payload. The key inside the entry guards against a
// file copied or renamed under another key's name.
#include "codegen/llvm/object_cache.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace fuselens {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'F', 'L', 'K', 'O', 'B', 'J', '0', '1'};
constexpr size_t kHeaderBytes = 8 + 3 * sizeof(uint64_t);

uint64_t fnv1a(const char* p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ uint8_t(p[i])) * 1099511628211ull;
  return h;
}

void putU64(std::string& s, uint64_t v) { s.append(reinterpret_cast<const char*>(&v), 8); }
uint64_t getU64(const std::string& s, size_t at) {
  uint64_t v;
  std::memcpy(&v, s.data() + at, 8);
  return v;
}

std::string envOr(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

// A temp name no other process or thread uses at the same time.
std::string tempPathFor(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  std::ostringstream os;
  os << path << ".tmp." << ::getpid() << "."
     << std::hash<std::thread::id>()(std::this_thread::get_id()) << "." << counter++;
  return os.str();
}

}  // namespace

ObjectCache::ObjectCache(std::string dir, int64_t maxBytes)
    : dir_(std::move(dir)), maxBytes_(maxBytes) {}

ObjectCache ObjectCache::fromEnvironment() {
  if (envOr("FUSELENS_CACHE", "1") == "0") return {};
  std::string base = envOr("XDG_CACHE_HOME", "");
  if (base.empty()) {
    std::string home = envOr("HOME", "");
    if (home.empty()) return {};
    base = home + "/.cache";
  }
  int64_t mb = std::atoll(envOr("FUSELENS_CACHE_MAX_MB", "512").c_str());
  if (mb <= 0) return {};
  std::string dir = base + "/fuselens/kernels";
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return {};
  return ObjectCache(dir, mb * 1024 * 1024);
}

std::string ObjectCache::pathOf(const std::string& key) const { return dir_ + "/" + key + ".o"; }

std::optional<std::string> ObjectCache::load(const std::string& key) const {
  if (!enabled()) return std::nullopt;
  std::string path = pathOf(key);
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  bool ok = data.size() >= kHeaderBytes && std::memcmp(data.data(), kMagic, 8) == 0;
  uint64_t length = ok ? getU64(data, 8) : 0, sum = ok ? getU64(data, 16) : 0;
  uint64_t keyLength = ok ? getU64(data, 24) : 0;
  ok = ok && keyLength == key.size() && data.size() == kHeaderBytes + keyLength + length &&
       data.compare(kHeaderBytes, keyLength, key) == 0;
  const char* payload = data.data() + kHeaderBytes + keyLength;
  if (!ok || fnv1a(payload, length) != sum) {
    std::error_code ec;
    fs::remove(path, ec);  // a later store writes a good one
    return std::nullopt;
  }
  std::error_code ec;
  fs::last_write_time(path, fs::file_time_type::clock::now(), ec);  // recently used
  return std::string(payload, length);
}

void ObjectCache::store(const std::string& key, const std::string& payload) const {
  if (!enabled()) return;
  std::string entry(kMagic, 8);
  putU64(entry, payload.size());
  putU64(entry, fnv1a(payload.data(), payload.size()));
  putU64(entry, key.size());
  entry += key;
  entry += payload;
  std::string path = pathOf(key), tmp = tempPathFor(path);
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return;
  bool ok = std::fwrite(entry.data(), 1, entry.size(), f) == entry.size();
  ok = std::fclose(f) == 0 && ok;
  std::error_code ec;
  if (ok) fs::rename(tmp, path, ec);
  if (!ok || ec) fs::remove(tmp, ec);
}

void ObjectCache::trim() const {
  if (!enabled()) return;
  struct Entry {
    fs::file_time_type time;
    int64_t bytes;
    fs::path path;
  };
  std::vector<Entry> entries;
  int64_t total = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code e2;
    if (!it->is_regular_file(e2)) continue;
    if (it->path().extension() != ".o") {
      // A temp file a crashed writer left behind; a live writer renames within seconds.
      auto age = fs::file_time_type::clock::now() - it->last_write_time(e2);
      if (!e2 && it->path().string().find(".o.tmp.") != std::string::npos &&
          age > std::chrono::hours(1))
        fs::remove(it->path(), e2);
      continue;
    }
    Entry en{it->last_write_time(e2), int64_t(it->file_size(e2)), it->path()};
    if (e2) continue;  // removed by another process meanwhile
    total += en.bytes;
    entries.push_back(std::move(en));
  }
  if (total <= maxBytes_) return;
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.time < b.time; });
  // Down to 90% of the limit, so the next compiles do not trim again at once.
  for (const Entry& en : entries) {
    if (total <= maxBytes_ * 9 / 10) break;
    std::error_code e2;
    if (fs::remove(en.path, e2)) total -= en.bytes;
  }
}

}  // namespace fuselens
