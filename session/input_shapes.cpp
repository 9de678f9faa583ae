#include "session/input_shapes.h"

#include <cctype>
#include <cstdlib>

#include "session/requests.h"

namespace fuselens {
namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

}  // namespace

Expected<InputShapes> parseInputShapes(const std::string& text) {
  InputShapes shapes;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(';', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = trim(text.substr(start, end - start));
    start = end + 1;
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    const std::string name = eq == std::string::npos ? "" : trim(item.substr(0, eq));
    if (name.empty())
      return Status::error("expected name=AxBxC, e.g. x=1x3x224x224", "input shape '" + item + "'");
    std::vector<int64_t> dims;
    const std::string spec = trim(item.substr(eq + 1));
    size_t p = 0;
    while (p < spec.size()) {
      size_t q = spec.find_first_of("xX", p);
      if (q == std::string::npos) q = spec.size();
      const std::string num = trim(spec.substr(p, q - p));
      char* stop = nullptr;
      const long long v = num.empty() || !std::isdigit(static_cast<unsigned char>(num[0]))
                              ? -1
                              : std::strtoll(num.c_str(), &stop, 10);
      if (v < 0 || (stop && *stop != '\0'))
        return Status::error("'" + num + "' is not a non-negative dim",
                             "input shape '" + item + "'");
      dims.push_back(v);
      p = q + 1;
      if (q + 1 == spec.size())
        return Status::error("a dim is missing after the last 'x'", "input shape '" + item + "'");
    }
    if (!shapes.emplace(name, dims).second)
      return Status::error("input '" + name + "' is given twice", "input shape '" + item + "'");
  }
  return shapes;
}

Expected<std::map<std::string, int64_t>> parseDimBindings(const std::vector<std::string>& items) {
  std::map<std::string, int64_t> dims;
  for (const std::string& arg : items) {
    size_t eq = arg.find('=');
    char* end = nullptr;
    long long v =
        eq == std::string::npos || eq == 0 ? -1 : std::strtoll(arg.c_str() + eq + 1, &end, 10);
    bool ok = v >= 0 && end && *end == '\0' && end != arg.c_str() + eq + 1;
    if (!ok || !dims.emplace(arg.substr(0, eq), v).second)
      return Status::error("expected name=value with a non-negative integer, each name once",
                           "--dim " + arg);
  }
  return dims;
}

}  // namespace fuselens
