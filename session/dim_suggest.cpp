// Suggestions for unbound dims: metadata first (the model's author knows),
// then the dim's name, then the input's name and axis, then a small value.
#include "session/dim_suggest.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include "core/onnx/import.h"

namespace fuselens {
namespace {

constexpr int64_t kBatch = 1, kSequence = 128, kImage = 224, kSmall = 8;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

std::optional<int64_t> positive(const std::string& text) {
  if (text.empty() || text.size() > 12) return std::nullopt;
  for (char c : text)
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  const int64_t v = std::stoll(text);
  return v >= 1 ? std::optional<int64_t>(v) : std::nullopt;
}

// A hint "seq", "dim.seq", "dim:seq" or "fuselens.dim.seq" -> "128".
bool fromMetadata(const std::map<std::string, std::string>& metadata, DimSuggestion& s) {
  const std::string name = lower(s.name);
  for (const auto& [key, text] : metadata) {
    const std::string k = lower(key);
    if (k != name && k != "dim." + name && k != "dim:" + name && k != "fuselens.dim." + name)
      continue;
    if (auto v = positive(text)) {
      s.value = *v;
      s.reason = "from the model's metadata (" + key + "=" + text + ")";
      return true;
    }
  }
  return false;
}

// A static height or width beside a symbolic one: the image is likely square.
std::optional<int64_t> staticSibling(const Graph& g, const DimUse& use) {
  for (ValueId v : g.inputs()) {
    const TensorType& t = g.value(v).type;
    if (g.value(v).name != use.input || t.rank() != 4 || use.axis < 2) continue;
    const Dim& other = t.shape[use.axis == 2 ? 3 : 2];
    if (other.isStatic() && other.value > 0) return other.value;
  }
  return std::nullopt;
}

bool imageLike(const Graph& g, DimSuggestion& s, const std::string& why) {
  if (auto side = staticSibling(g, s.uses.front())) {
    s.value = *side;
    s.reason = why + ", as large as the static side " + std::to_string(*side) + " of '" +
               s.uses.front().input + "'";
  } else {
    s.value = kImage;
    s.reason = why + ", a common image size";
  }
  return true;
}

bool fromDimName(const Graph& g, DimSuggestion& s) {
  const std::string n = lower(s.name);
  if (has(n, "batch") || n == "n" || n == "b" || n == "bs") {
    s.value = kBatch;
    s.reason = "named like a batch size";
    return true;
  }
  if (has(n, "seq") || has(n, "len") || has(n, "token")) {
    s.value = kSequence;
    s.reason = "named like a sequence length";
    return true;
  }
  if (has(n, "height") || has(n, "width") || n == "h" || n == "w")
    return imageLike(g, s, "named like an image side");
  return false;
}

bool fromInputName(const Graph& g, DimSuggestion& s) {
  const DimUse& use = s.uses.front();
  const std::string in = lower(use.input);
  const bool tokens = has(in, "ids") || has(in, "token") || has(in, "mask") || has(in, "text");
  if (use.axis == 0) {
    s.value = kBatch;
    s.reason = "axis 0 of '" + use.input + "', usually the batch";
    return true;
  }
  if (tokens && use.axis == 1) {
    s.value = kSequence;
    s.reason = "axis 1 of '" + use.input + "', a token sequence";
    return true;
  }
  for (ValueId v : g.inputs())
    if (g.value(v).name == use.input && g.value(v).type.rank() == 4 && use.axis >= 2)
      return imageLike(
          g, s, "axis " + std::to_string(use.axis) + " of the 4-d input '" + use.input + "'");
  return false;
}

}  // namespace

std::string DimSuggestion::usesText() const {
  std::string out;
  for (const DimUse& u : uses)
    out += (out.empty() ? "" : ", ") + u.input + "[" + std::to_string(u.axis) + "]";
  return out;
}

std::vector<DimSuggestion> suggestDims(const Graph& g,
                                       const std::map<std::string, std::string>& metadata) {
  std::vector<DimSuggestion> out;
  for (ValueId v : g.inputs()) {
    const Value& val = g.value(v);
    if (!val.type.rankKnown) continue;
    for (size_t axis = 0; axis < val.type.rank(); ++axis) {
      const std::string& sym = val.type.shape[axis].symbol;
      if (sym.empty() || val.type.shape[axis].isStatic()) continue;
      auto it = std::find_if(out.begin(), out.end(), [&](auto& s) { return s.name == sym; });
      if (it == out.end()) it = out.insert(out.end(), DimSuggestion{sym, {}, kSmall, {}});
      it->uses.push_back({val.name, axis});
    }
  }
  for (DimSuggestion& s : out)
    if (!fromMetadata(metadata, s) && !fromDimName(g, s) && !fromInputName(g, s))
      s.reason = "a small value that compiles fast";
  return out;
}

Expected<std::vector<DimSuggestion>> suggestDimsOfFile(const std::string& modelPath) {
  auto model = importOnnxFile(modelPath);
  if (!model) return model.status();
  return suggestDims(model->graph, model->metadata);
}

InputShapes shapesForDims(const Graph& g, const std::map<std::string, int64_t>& dims) {
  InputShapes out;
  for (ValueId v : g.inputs()) {
    const TensorType& t = g.value(v).type;
    if (!t.rankKnown || t.isStatic()) continue;
    std::vector<int64_t> shape;
    for (const Dim& d : t.shape) {
      auto it = dims.find(d.symbol);
      if (d.isStatic())
        shape.push_back(d.value);
      else if (!d.symbol.empty() && it != dims.end())
        shape.push_back(it->second);
      else
        break;
    }
    if (shape.size() == t.rank()) out[g.value(v).name] = std::move(shape);
  }
  return out;
}

std::map<std::string, int64_t> dimsFromShapes(const std::vector<DimSuggestion>& dims,
                                              const InputShapes& shapes) {
  std::map<std::string, int64_t> out;
  for (const DimSuggestion& d : dims)
    for (const DimUse& u : d.uses)
      if (auto it = shapes.find(u.input); it != shapes.end() && u.axis < it->second.size()) {
        out[d.name] = it->second[u.axis];
        break;
      }
  return out;
}

std::string suggestedDimFlag(const Graph& g, const std::string& name,
                             const std::map<std::string, std::string>& metadata) {
  for (const DimSuggestion& s : suggestDims(g, metadata))
    if (s.name == name) return " (suggested: --dim " + name + "=" + std::to_string(s.value) + ")";
  return {};
}

}  // namespace fuselens
