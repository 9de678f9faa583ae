// The IR printer. Values print by name when the name is a plain identifier,
// quoted otherwise, and as %v<id> when unnamed, so dumps stay readable and the
// parser can read them back.
#include "core/ir/printer.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "core/ir/text_syntax.h"

namespace fuselens {
namespace {

class Printer {
 public:
  Printer(const PrintOptions& opts) : opts_(opts) {}

  // `inlined`: an attribute value (an If/Loop/Scan body), printed where the
  // attribute stands: no leading indent, no newline after the closing brace.
  void graph(const Graph& g, int indent, bool inlined = false) {
    if (!inlined) pad(indent);
    out_ << "graph @" << g.name << "(";
    for (size_t i = 0; i < g.inputs().size(); ++i) {
      const Value& v = g.value(g.inputs()[i]);
      out_ << (i ? ", " : "") << valueRef(g, v.id) << ": " << v.type.str() << layoutSuffix(v);
    }
    out_ << ") -> (";
    for (size_t i = 0; i < g.outputs().size(); ++i)
      out_ << (i ? ", " : "") << g.value(g.outputs()[i]).type.str();
    out_ << ") {\n";
    for (ValueId c : g.constants()) constant(g, c, indent + 2);
    auto order = g.topoOrder();
    for (NodeId n : order ? *order : g.nodeIds()) node(g, g.node(n), indent + 2);
    pad(indent + 2);
    out_ << "return";
    for (size_t i = 0; i < g.outputs().size(); ++i)
      out_ << (i ? ", " : " ") << valueRef(g, g.outputs()[i]);
    out_ << "\n";
    pad(indent);
    out_ << (inlined ? "}" : "}\n");
  }

  std::string str() const { return out_.str(); }

 private:
  void pad(int n) { out_ << std::string(static_cast<size_t>(n), ' '); }

  void constant(const Graph& g, ValueId id, int indent) {
    const Value& v = g.value(id);
    pad(indent);
    out_ << valueRef(g, id) << " = Constant : " << v.type.str() << " ";
    const TensorData& t = *v.constant;
    if (opts_.elideConstantsOver >= 0 && t.numel() > opts_.elideConstantsOver) {
      out_ << "dense<...>";
    } else {
      out_ << "dense<[";
      for (int64_t i = 0; i < t.numel(); ++i)
        out_ << (i ? ", " : "")
             << (isFloat(t.dtype)        ? floatLiteral(t.at(i), digitsFor(t.dtype))
                 : t.dtype == DType::I64 ? std::to_string(t.data<int64_t>()[i])  // every digit
                                         : number(t.at(i)));
      out_ << "]>";
    }
    origin(g, v);
    out_ << "\n";
  }

  void node(const Graph& g, const Node& n, int indent) {
    pad(indent);
    for (size_t i = 0; i < n.outputs.size(); ++i)
      out_ << (i ? ", " : "") << valueRef(g, n.outputs[i]);
    if (!n.outputs.empty()) out_ << " = ";
    if (!n.domain.empty()) out_ << n.domain << ".";
    out_ << n.op << "(";
    for (size_t i = 0; i < n.inputs.size(); ++i)
      out_ << (i ? ", " : "") << (n.inputs[i].valid() ? valueRef(g, n.inputs[i]) : "none");
    out_ << ")";
    if (!n.attrs.empty()) {
      out_ << " {";
      bool first = true;
      for (const auto& [k, a] : n.attrs.all()) {
        out_ << (first ? "" : ", ") << k << "=";
        attribute(a, indent);
        first = false;
      }
      out_ << "}";
    }
    out_ << " :";
    for (size_t i = 0; i < n.outputs.size(); ++i)
      out_ << (i ? ", " : " ") << g.value(n.outputs[i]).type.str()
           << layoutSuffix(g.value(n.outputs[i]));
    if (!n.name.empty()) out_ << " loc(" << quote(n.name) << ")";
    if (n.body) {
      out_ << " {\n";
      graph(*n.body, indent + 2);
      pad(indent);
      out_ << "}";
    }
    out_ << "\n";
  }

  void attribute(const Attribute& a, int indent) {
    std::visit(
        [&](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, int64_t>) {
            out_ << x;
          } else if constexpr (std::is_same_v<T, double>) {
            out_ << floatLiteral(x);
          } else if constexpr (std::is_same_v<T, std::string>) {
            out_ << quote(x);
          } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
            list(x, [&](int64_t v) { out_ << v; });
          } else if constexpr (std::is_same_v<T, std::vector<double>>) {
            list(x, [&](double v) { out_ << floatLiteral(v); });
          } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
            list(x, [&](const std::string& v) { out_ << quote(v); });
          } else if constexpr (std::is_same_v<T, std::shared_ptr<const TensorData>>) {
            out_ << "tensor<" << x->type().str() << ">";
          } else {
            graph(*x, indent + 2, true);  // so the text reads back with its bodies
          }
        },
        a);
  }

  template <class V, class F>
  void list(const std::vector<V>& v, F f) {
    out_ << "[";
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) out_ << ", ";
      f(v[i]);
    }
    out_ << "]";
  }

  // " layout(NCHW8c, C=3)" after the type of a blocked value; nothing for plain ones.
  static std::string layoutSuffix(const Value& v) {
    if (!v.layout.blocked()) return {};
    return " layout(" + v.layout.name() + ", C=" + std::to_string(v.layout.channels) + ")";
  }

  void origin(const Graph& g, const Value& v) {
    if (opts_.showOrigins && v.origin.valid() && v.origin != v.id)
      out_ << " origin(" << v.origin.index << ")";
  }

  // The shortest text that reads back to the same value: f64 constants keep
  // every bit, and 0.1 still prints as 0.1.
  static int digitsFor(DType t) { return t == DType::F64 ? 17 : 9; }
  static std::string number(double d, int maxDigits = 9) {
    char buf[40];
    for (int digits = 6; digits <= maxDigits; ++digits) {
      std::snprintf(buf, sizeof buf, "%.*g", digits, d);
      double back = std::strtod(buf, nullptr);
      bool same = maxDigits > 9 ? back == d : static_cast<float>(back) == static_cast<float>(d);
      if (same || std::isnan(d)) break;
    }
    return buf;
  }
  static std::string floatLiteral(double d, int digits = 9) {
    std::string s = number(d, digits);
    if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
    return s;
  }

  const PrintOptions& opts_;
  std::ostringstream out_;
};

}  // namespace

std::string valueRef(const Graph& g, ValueId id) {
  const std::string& name = g.value(id).name;
  if (name.empty()) return "%v" + std::to_string(id.index);
  return "%" + (isPlainIdentifier(name) ? name : quote(name));
}

std::string printGraph(const Graph& g, const PrintOptions& opts) {
  Printer p(opts);
  p.graph(g, 0);
  return p.str();
}

}  // namespace fuselens
