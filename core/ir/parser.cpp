// The IR text parser: reads what printer.cpp writes. A small hand-written
// lexer and recursive-descent parser; every error names line and column.
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <type_traits>

#include "core/ir/dim_expr.h"
#include "core/ir/printer.h"

namespace fuselens {
namespace {

enum class Tok { Ident, Ref, Number, String, Punct, End };

struct Token {
  Tok kind = Tok::End;
  std::string text;  // for Ref: the name without '%'; for String: unescaped
  int line = 1, col = 1;
  size_t offset = 0;  // where the token starts in the text
};

class Lexer {
 public:
  explicit Lexer(const std::string& s) : s_(s) {}

  Expected<Token> next() {
    skipSpace();
    Token t;
    t.line = line_;
    t.col = col_;
    t.offset = i_;
    if (i_ >= s_.size()) return t;
    char c = s_[i_];
    if (c == '%') {
      get();
      t.kind = Tok::Ref;
      if (peekc() == '"') {
        auto str = quoted();
        if (!str) return str.status();
        t.text = *str;
      } else {
        t.text = ident();
        if (t.text.empty()) return err(t, "expected a value name after '%'");
      }
      return t;
    }
    if (c == '"') {
      auto str = quoted();
      if (!str) return str.status();
      t.kind = Tok::String;
      t.text = *str;
      return t;
    }
    bool negNumber = c == '-' && i_ + 1 < s_.size() && s_[i_ + 1] != '>';
    if (std::isdigit(static_cast<unsigned char>(c)) || negNumber) {
      t.kind = Tok::Number;
      t.text += get();
      while (i_ < s_.size() &&
             (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.' ||
              ((s_[i_] == '-' || s_[i_] == '+') && (s_[i_ - 1] == 'e' || s_[i_ - 1] == 'E'))))
        t.text += get();
      return t;
    }
    if (s_.compare(i_, 3, "...") == 0) {  // an elided constant, dense<...>
      get(), get(), get();
      t.kind = Tok::Ident;
      t.text = "...";
      return t;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      t.kind = Tok::Ident;
      t.text = ident();
      return t;
    }
    t.kind = Tok::Punct;
    if (c == '-' && i_ + 1 < s_.size() && s_[i_ + 1] == '>') {
      get();
      get();
      t.text = "->";
      return t;
    }
    if (std::string("(){}[]<>,:=@*?").find(c) == std::string::npos)
      return err(t, std::string("unexpected character '") + c + "'");
    t.text = std::string(1, get());
    return t;
  }

  // The text of one dim of a shape, from `start` to the ',' or ']' that ends
  // it: a dim is an expression (`seq*2`, `ceil(w/8)`), which the token rules
  // for the rest of the IR would split.
  Token rawDim(const Token& start) {
    i_ = start.offset;
    line_ = start.line;
    col_ = start.col;
    Token t = start;
    t.kind = Tok::Ident;
    t.text.clear();
    int depth = 0;
    while (i_ < s_.size() && s_[i_] != '\n') {
      char c = s_[i_];
      if (depth == 0 && (c == ',' || c == ']')) break;
      depth += c == '(' ? 1 : c == ')' ? -1 : 0;
      if (c != ' ') t.text += c;
      get();
    }
    return t;
  }

  static Status err(const Token& t, const std::string& msg) {
    return Status::error(msg,
                         "line " + std::to_string(t.line) + ", column " + std::to_string(t.col));
  }

 private:
  char peekc() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  char get() {
    char c = s_[i_++];
    if (c == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    return c;
  }
  void skipSpace() {
    while (i_ < s_.size()) {
      if (std::isspace(static_cast<unsigned char>(s_[i_]))) {
        get();
      } else if (s_.compare(i_, 2, "//") == 0) {  // comments, for hand-written test IR
        while (i_ < s_.size() && s_[i_] != '\n') get();
      } else {
        break;
      }
    }
  }
  std::string ident() {
    std::string out;
    while (i_ < s_.size() &&
           (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_' || s_[i_] == '.'))
      out += get();
    return out;
  }
  Expected<std::string> quoted() {
    Token start;
    start.line = line_;
    start.col = col_;
    get();  // opening quote
    std::string out;
    while (i_ < s_.size() && s_[i_] != '"') {
      if (s_[i_] == '\\') get();
      if (i_ >= s_.size()) break;
      out += get();
    }
    if (i_ >= s_.size()) return err(start, "unterminated string");
    get();
    return out;
  }

  const std::string& s_;
  size_t i_ = 0;
  int line_ = 1, col_ = 1;
};

// False when v lies outside an integer element type, where the cast would be UB.
template <class T>
bool setAs(TensorData& t, int64_t i, double v) {
  if constexpr (std::is_integral_v<T>)
    if (!(v >= double(std::numeric_limits<T>::lowest()) &&
          v < double(std::numeric_limits<T>::max()) + 1))
      return false;
  t.data<T>()[i] = static_cast<T>(v);
  return true;
}

// An i64 written as an integer, read exactly: through a double, 2^63-1 (a
// Slice's "to the end") would round out of range.
bool setExactInt(TensorData& t, int64_t i, const std::string& text) {
  if (t.dtype != DType::I64 || text.find_first_of(".eEin") != std::string::npos) return false;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  t.data<int64_t>()[i] = v;
  return true;
}

bool setElement(TensorData& t, int64_t i, double v) {
  switch (t.dtype) {
    case DType::F32:
      return setAs<float>(t, i, v);
    case DType::F64:
      return setAs<double>(t, i, v);
    case DType::I8:
      return setAs<int8_t>(t, i, v);
    case DType::U8:
      return setAs<uint8_t>(t, i, v);
    case DType::Bool:
      t.data<uint8_t>()[i] = v != 0;
      return true;
    case DType::I16:
      return setAs<int16_t>(t, i, v);
    case DType::I32:
      return setAs<int32_t>(t, i, v);
    case DType::I64:
      return setAs<int64_t>(t, i, v);
    case DType::F16:
    case DType::BF16:
      break;  // rejected before this is reached
  }
  return false;
}

class Parser {
 public:
  explicit Parser(const std::string& text) : lex_(text) {}

  Expected<Graph> parseTop() {
    FL_RETURN_IF_ERROR(advance());
    auto g = parseGraph();
    if (!g) return g.status();
    if (tok_.kind != Tok::End) return Lexer::err(tok_, "unexpected text after the graph");
    return g;
  }

 private:
  using Scope = std::map<std::string, ValueId>;

  Status advance() {
    auto t = lex_.next();
    if (!t) return t.status();
    tok_ = *t;
    return Status::ok();
  }
  bool isPunct(const char* p) const { return tok_.kind == Tok::Punct && tok_.text == p; }
  bool isIdent(const char* p) const { return tok_.kind == Tok::Ident && tok_.text == p; }
  Status expectPunct(const char* p) {
    if (!isPunct(p)) return Lexer::err(tok_, std::string("expected '") + p + "'" + found());
    return advance();
  }
  Status expectIdent(const char* p) {
    if (!isIdent(p)) return Lexer::err(tok_, std::string("expected '") + p + "'" + found());
    return advance();
  }
  std::string found() const {
    return tok_.kind == Tok::End ? ", found the end of the text" : ", found '" + tok_.text + "'";
  }

  Expected<Graph> parseGraph() {
    Graph g;
    Scope scope;
    FL_RETURN_IF_ERROR(expectIdent("graph"));
    FL_RETURN_IF_ERROR(expectPunct("@"));
    if (tok_.kind != Tok::Ident) return Lexer::err(tok_, "expected the graph's name" + found());
    g.name = tok_.text;
    FL_RETURN_IF_ERROR(advance());
    FL_RETURN_IF_ERROR(expectPunct("("));
    while (!isPunct(")")) {
      Token at = tok_;
      auto name = refName();
      if (!name) return name.status();
      FL_RETURN_IF_ERROR(expectPunct(":"));
      auto type = parseType();
      if (!type) return type.status();
      auto layout = parseLayout(*type);
      if (!layout) return layout.status();
      if (scope.count(*name)) return Lexer::err(at, "value %" + *name + " is defined twice");
      scope[*name] = g.addInput(*name, *type);
      g.mutableValue(scope[*name]).layout = *layout;
      if (!isPunct(")")) FL_RETURN_IF_ERROR(expectPunct(","));
    }
    FL_RETURN_IF_ERROR(advance());
    FL_RETURN_IF_ERROR(expectPunct("->"));
    FL_RETURN_IF_ERROR(expectPunct("("));
    std::vector<TensorType> resultTypes;
    while (!isPunct(")")) {
      auto type = parseType();
      if (!type) return type.status();
      resultTypes.push_back(*type);
      if (!isPunct(")")) FL_RETURN_IF_ERROR(expectPunct(","));
    }
    FL_RETURN_IF_ERROR(advance());
    FL_RETURN_IF_ERROR(expectPunct("{"));
    while (!isIdent("return")) {
      if (tok_.kind == Tok::End)
        return Lexer::err(tok_, "expected 'return' before the end of the graph");
      FL_RETURN_IF_ERROR(parseStatement(g, scope));
    }
    FL_RETURN_IF_ERROR(advance());
    while (tok_.kind == Tok::Ref) {
      Token at = tok_;
      auto v = lookup(scope);
      if (!v) return v.status();
      g.addOutput(*v);
      if (g.outputs().size() > resultTypes.size())
        return Lexer::err(at, "more returned values than the graph's result types");
      if (g.value(*v).type != resultTypes[g.outputs().size() - 1])
        return Lexer::err(at, "returned %" + g.value(*v).name + " has type " +
                                  g.value(*v).type.str() + " but the signature says " +
                                  resultTypes[g.outputs().size() - 1].str());
      if (isPunct(",")) FL_RETURN_IF_ERROR(advance());
    }
    if (g.outputs().size() != resultTypes.size())
      return Lexer::err(tok_, "the graph returns " + std::to_string(g.outputs().size()) +
                                  " values but its signature has " +
                                  std::to_string(resultTypes.size()));
    FL_RETURN_IF_ERROR(expectPunct("}"));
    return g;
  }

  Expected<std::string> refName() {
    if (tok_.kind != Tok::Ref) return Lexer::err(tok_, "expected a value (%name)" + found());
    std::string name = tok_.text;
    FL_RETURN_IF_ERROR(advance());
    return name;
  }

  Expected<ValueId> lookup(const Scope& scope) {
    Token at = tok_;
    auto name = refName();
    if (!name) return name.status();
    auto it = scope.find(*name);
    if (it == scope.end())
      return Lexer::err(at, "value %" + *name + " is used before it is defined");
    return it->second;
  }

  // A number, a name, or an expression over names in canonical form.
  Expected<Dim> parseDim() {
    const std::string single = tok_.kind == Tok::Ident ? tok_.text : std::string();
    Token raw = lex_.rawDim(tok_);
    tok_ = raw;                                         // errors point at the dim's start
    if (raw.text == single) return Dim::named(single);  // a plain name, '.' allowed
    auto e = DimExpr::parse(raw.text);
    if (!e)
      return Lexer::err(raw,
                        "expected a dimension (a number, a name or an expression "
                        "such as seq*2), found '" +
                            raw.text + "'");
    if (e->isConstant() && e->constantPart() < 0)
      return Lexer::err(raw, "a dimension must be a non-negative integer");
    return e->toDim();
  }

  Expected<TensorType> parseType() {
    if (tok_.kind != Tok::Ident)
      return Lexer::err(tok_, "expected a tensor type such as f32[1,4]" + found());
    auto dt = parseDType(tok_.text);
    if (!dt) return Lexer::err(tok_, "unknown element type '" + tok_.text + "'");
    TensorType t;
    t.dtype = *dt;
    FL_RETURN_IF_ERROR(advance());
    FL_RETURN_IF_ERROR(expectPunct("["));
    if (isPunct("*")) {
      t.rankKnown = false;
      FL_RETURN_IF_ERROR(advance());
      FL_RETURN_IF_ERROR(expectPunct("]"));
      return t;
    }
    while (!isPunct("]")) {
      if (tok_.kind == Tok::Number || tok_.kind == Tok::Ident) {
        auto dim = parseDim();
        if (!dim) return dim.status();
        t.shape.push_back(*dim);
      } else if (isPunct("?")) {
        t.shape.push_back(Dim::unknown());
      } else {
        return Lexer::err(tok_, "expected a dimension" + found());
      }
      FL_RETURN_IF_ERROR(advance());
      if (!isPunct("]")) FL_RETURN_IF_ERROR(expectPunct(","));
    }
    FL_RETURN_IF_ERROR(advance());
    return t;
  }

  Status parseStatement(Graph& g, Scope& scope) {
    std::vector<std::pair<std::string, Token>> results;
    while (tok_.kind == Tok::Ref) {
      results.push_back({tok_.text, tok_});
      FL_RETURN_IF_ERROR(advance());
      if (isPunct(",")) FL_RETURN_IF_ERROR(advance());
    }
    for (const auto& [name, at] : results)
      if (scope.count(name)) return Lexer::err(at, "value %" + name + " is defined twice");
    if (!results.empty()) FL_RETURN_IF_ERROR(expectPunct("="));
    if (tok_.kind != Tok::Ident) return Lexer::err(tok_, "expected an op name" + found());
    if (tok_.text == "Constant" && results.size() == 1)
      return parseConstant(g, scope, results[0].first);
    return parseNode(g, scope, results);
  }

  Status parseConstant(Graph& g, Scope& scope, const std::string& name) {
    FL_RETURN_IF_ERROR(advance());
    FL_RETURN_IF_ERROR(expectPunct(":"));
    auto type = parseType();
    if (!type) return type.status();
    auto shape = type->staticShape();
    if (!shape) return Lexer::err(tok_, "constant %" + name + " needs a static shape");
    if (type->dtype == DType::F16 || type->dtype == DType::BF16)
      return Lexer::err(tok_,
                        "constant %" + name + ": 16-bit float constants have no text form yet");
    FL_RETURN_IF_ERROR(expectIdent("dense"));
    FL_RETURN_IF_ERROR(expectPunct("<"));
    if (tok_.kind == Tok::Ident && tok_.text == "...")
      return Lexer::err(tok_, "constant %" + name +
                                  " was printed elided (dense<...>); print with "
                                  "elideConstantsOver=-1 to read it back");
    Token at = tok_;
    std::vector<std::string> texts;
    auto values = numberList(&texts);
    if (!values) return values.status();
    // Counted before allocating: a few bytes of text may name f32[1000000000000].
    int64_t need = 1;
    bool huge = false;
    for (int64_t d : *shape) huge = huge || __builtin_mul_overflow(need, d, &need);
    if (huge || int64_t(values->size()) != need)
      return Lexer::err(at, "constant %" + name + " has " + std::to_string(values->size()) +
                                " values but its type " + type->str() + " needs " +
                                (huge ? "more than 2^63" : std::to_string(need)));
    auto data = std::make_shared<TensorData>(type->dtype, *shape);
    for (size_t i = 0; i < values->size(); ++i)
      if (!setExactInt(*data, int64_t(i), texts[i]) && !setElement(*data, int64_t(i), (*values)[i]))
        return Lexer::err(at, "constant %" + name + ": value #" + std::to_string(i) +
                                  " is out of the range of " + type->str());
    FL_RETURN_IF_ERROR(expectPunct(">"));
    scope[name] = g.addConstant(name, data);
    return skipOrigin();
  }

  Status skipOrigin() {
    if (!isIdent("origin")) return Status::ok();
    FL_RETURN_IF_ERROR(advance());
    FL_RETURN_IF_ERROR(expectPunct("("));
    FL_RETURN_IF_ERROR(advance());
    return expectPunct(")");
  }

  // `texts`, when given, gets each number as written (i64 needs all its digits).
  Expected<std::vector<double>> numberList(std::vector<std::string>* texts = nullptr) {
    std::vector<double> out;
    FL_RETURN_IF_ERROR(expectPunct("["));
    while (!isPunct("]")) {
      if (tok_.kind != Tok::Number &&
          !(tok_.kind == Tok::Ident && (tok_.text == "inf" || tok_.text == "nan")))
        return Lexer::err(tok_, "expected a number" + found());
      out.push_back(std::strtod(tok_.text.c_str(), nullptr));
      if (texts) texts->push_back(tok_.text);
      FL_RETURN_IF_ERROR(advance());
      if (!isPunct("]")) FL_RETURN_IF_ERROR(expectPunct(","));
    }
    FL_RETURN_IF_ERROR(advance());
    return out;
  }

  Status parseNode(Graph& g, Scope& scope,
                   const std::vector<std::pair<std::string, Token>>& results) {
    std::string op = tok_.text, domain;
    if (auto dot = op.rfind('.'); dot != std::string::npos) {
      domain = op.substr(0, dot);
      op = op.substr(dot + 1);
    }
    FL_RETURN_IF_ERROR(advance());
    FL_RETURN_IF_ERROR(expectPunct("("));
    std::vector<ValueId> inputs;
    while (!isPunct(")")) {
      if (isIdent("none")) {
        inputs.push_back(ValueId());
        FL_RETURN_IF_ERROR(advance());
      } else {
        auto v = lookup(scope);
        if (!v) return v.status();
        inputs.push_back(*v);
      }
      if (!isPunct(")")) FL_RETURN_IF_ERROR(expectPunct(","));
    }
    FL_RETURN_IF_ERROR(advance());
    Attributes attrs;
    if (isPunct("{")) FL_RETURN_IF_ERROR(parseAttributes(attrs));
    FL_RETURN_IF_ERROR(expectPunct(":"));
    std::vector<OutputSpec> outs;
    std::vector<Layout> layouts;
    for (size_t i = 0; i < results.size(); ++i) {
      if (i) FL_RETURN_IF_ERROR(expectPunct(","));
      auto type = parseType();
      if (!type) return type.status();
      auto layout = parseLayout(*type);
      if (!layout) return layout.status();
      outs.push_back({results[i].first, *type});
      layouts.push_back(*layout);
    }
    std::string name;
    if (isIdent("loc")) {
      FL_RETURN_IF_ERROR(advance());
      FL_RETURN_IF_ERROR(expectPunct("("));
      if (tok_.kind != Tok::String)
        return Lexer::err(tok_, "expected a quoted node name" + found());
      name = tok_.text;
      FL_RETURN_IF_ERROR(advance());
      FL_RETURN_IF_ERROR(expectPunct(")"));
    }
    std::shared_ptr<const Graph> body;
    if (isPunct("{")) {
      FL_RETURN_IF_ERROR(advance());
      auto b = parseGraph();
      if (!b) return b.status();
      body = std::make_shared<const Graph>(std::move(*b));
      FL_RETURN_IF_ERROR(expectPunct("}"));
    }
    NodeId n = g.addNode(op, inputs, outs, attrs, name);
    g.mutableNode(n).domain = domain;
    g.mutableNode(n).body = body;
    for (size_t i = 0; i < results.size(); ++i) {
      scope[results[i].first] = g.node(n).outputs[i];
      g.mutableValue(g.node(n).outputs[i]).layout = layouts[i];
    }
    return Status::ok();
  }

  // The optional " layout(NCHW8c, C=3)" after a value's type (printer.cpp).
  Expected<Layout> parseLayout(const TensorType& type) {
    if (!isIdent("layout")) return Layout{};
    Token at = tok_;
    FL_RETURN_IF_ERROR(advance());
    FL_RETURN_IF_ERROR(expectPunct("("));
    std::string name = tok_.kind == Tok::Ident ? tok_.text : std::string();
    int block = 0;
    if (name.size() > 5 && name.rfind("NCHW", 0) == 0 && name.back() == 'c')
      block = std::atoi(name.substr(4, name.size() - 5).c_str());
    if (block <= 0) return Lexer::err(tok_, "expected a layout such as NCHW8c" + found());
    FL_RETURN_IF_ERROR(advance());
    FL_RETURN_IF_ERROR(expectPunct(","));
    FL_RETURN_IF_ERROR(expectIdent("C"));
    FL_RETURN_IF_ERROR(expectPunct("="));
    if (tok_.kind != Tok::Number) return Lexer::err(tok_, "expected the channel count" + found());
    Layout l = Layout::blockedNCHW(block, std::strtoll(tok_.text.c_str(), nullptr, 10));
    FL_RETURN_IF_ERROR(advance());
    FL_RETURN_IF_ERROR(expectPunct(")"));
    if (!l.logicalType(type))
      return Lexer::err(at, "type " + type.str() + " is not " + l.name() + " of " +
                                std::to_string(l.channels) + " channels");
    return l;
  }

  Status parseAttributes(Attributes& attrs) {
    FL_RETURN_IF_ERROR(advance());
    while (!isPunct("}")) {
      if (tok_.kind != Tok::Ident) return Lexer::err(tok_, "expected an attribute name" + found());
      std::string key = tok_.text;
      FL_RETURN_IF_ERROR(advance());
      FL_RETURN_IF_ERROR(expectPunct("="));
      auto a = parseAttributeValue(key);
      if (!a) return a.status();
      attrs.set(key, *a);
      if (!isPunct("}")) FL_RETURN_IF_ERROR(expectPunct(","));
    }
    return advance();
  }

  static bool looksFloat(const std::string& s) {
    return s.find_first_of(".eEn") != std::string::npos;
  }

  Expected<Attribute> parseAttributeValue(const std::string& key) {
    if (tok_.kind == Tok::Number) {
      std::string text = tok_.text;
      FL_RETURN_IF_ERROR(advance());
      if (looksFloat(text)) return Attribute(std::strtod(text.c_str(), nullptr));
      return Attribute(int64_t(std::strtoll(text.c_str(), nullptr, 10)));
    }
    if (tok_.kind == Tok::String) {
      std::string text = tok_.text;
      FL_RETURN_IF_ERROR(advance());
      return Attribute(text);
    }
    if (isPunct("[")) return parseListAttribute();
    if (isIdent("graph")) {  // an If/Loop/Scan body, printed inline
      auto body = parseGraph();
      if (!body) return body.status();
      auto g = std::make_shared<Graph>(std::move(*body));
      g->markAsOriginal();  // as the importer leaves a body
      return Attribute(std::shared_ptr<const Graph>(std::move(g)));
    }
    return Lexer::err(
        tok_, "attribute '" + key + "' has a value the text format cannot read back" + found());
  }

  Expected<Attribute> parseListAttribute() {
    FL_RETURN_IF_ERROR(advance());
    std::vector<std::string> items;
    bool strings = false, floats = false;
    while (!isPunct("]")) {
      if (tok_.kind == Tok::String)
        strings = true;
      else if (tok_.kind == Tok::Number)
        floats = floats || looksFloat(tok_.text);
      else
        return Lexer::err(tok_, "expected a list element" + found());
      items.push_back(tok_.text);
      FL_RETURN_IF_ERROR(advance());
      if (!isPunct("]")) FL_RETURN_IF_ERROR(expectPunct(","));
    }
    FL_RETURN_IF_ERROR(advance());
    if (strings) return Attribute(items);
    if (floats) {
      std::vector<double> v;
      for (auto& s : items) v.push_back(std::strtod(s.c_str(), nullptr));
      return Attribute(v);
    }
    std::vector<int64_t> v;
    for (auto& s : items) v.push_back(std::strtoll(s.c_str(), nullptr, 10));
    return Attribute(v);
  }

  Lexer lex_;
  Token tok_;
};

}  // namespace

Expected<Graph> parseGraph(const std::string& text) {
  Parser p(text);
  auto g = p.parseTop();
  if (g) g->markAsOriginal();
  return g;
}

}  // namespace fuselens
