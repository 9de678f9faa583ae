// Reading the canonical form of a dim expression (dim_expr.h) back:
// a small recursive-descent parser that builds through the algebra, so what
// it reads is simplified as anything else built that way.
#include <cctype>

#include "core/ir/dim_expr.h"

namespace fuselens {
namespace {

// ---- parsing: expr := term (('+'|'-') term)*, term := factor ('*' factor)*,
// factor := INT | NAME | floor(expr/INT) | ceil(expr/INT) | (expr) | -factor

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  Expected<DimExpr> all() {
    auto e = expr();
    if (!e) return e;
    skip();
    if (pos_ != s_.size()) return fail("unexpected '" + std::string(1, s_[pos_]) + "'");
    return e;
  }

 private:
  Expected<DimExpr> fail(const std::string& why) {
    return Expected<DimExpr>::error(why + " at column " + std::to_string(pos_ + 1) + " of '" +
                                    std::string(s_) + "'");
  }
  void skip() {
    while (pos_ < s_.size() && s_[pos_] == ' ') ++pos_;
  }
  bool eat(char c) {
    skip();
    if (pos_ < s_.size() && s_[pos_] == c) return ++pos_, true;
    return false;
  }
  Expected<DimExpr> checked(std::optional<DimExpr> e, const char* what) {
    if (!e) return fail(std::string(what) + " the algebra cannot express");
    return *e;
  }

  Expected<DimExpr> expr() {
    auto sum = term();
    if (!sum) return sum;
    DimExpr acc = *sum;
    for (;;) {
      bool plus = eat('+');
      if (!plus && !eat('-')) return acc;
      auto t = term();
      if (!t) return t;
      auto next = plus ? add(acc, *t) : subtract(acc, *t);
      auto ok = checked(next, "a sum");
      if (!ok) return ok;
      acc = *ok;
    }
  }
  Expected<DimExpr> term() {
    auto f = factor();
    if (!f) return f;
    DimExpr acc = *f;
    while (eat('*')) {
      auto g = factor();
      if (!g) return g;
      auto ok = checked(multiply(acc, *g), "a product");
      if (!ok) return ok;
      acc = *ok;
    }
    return acc;
  }
  Expected<DimExpr> factor() {
    skip();
    if (eat('-')) {
      auto f = factor();
      if (!f) return f;
      return checked(scale(*f, -1), "a negation");
    }
    if (eat('(')) {
      if (++depth_ > kMaxDepth) return fail("nested too deeply");  // fuzzed IR text
      auto e = expr();
      --depth_;
      if (!e) return e;
      if (!eat(')')) return fail("expected ')'");
      return e;
    }
    if (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      int64_t v = 0;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, s_[pos_] - '0', &v))
          return fail("number too large");
        ++pos_;
      }
      return DimExpr::constant(v);
    }
    size_t start = pos_;
    while (pos_ < s_.size() &&
           (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_'))
      ++pos_;
    if (start == pos_)
      return pos_ < s_.size() ? fail("unexpected character") : fail("expected a term");
    std::string name(s_.substr(start, pos_ - start));
    if ((name == "floor" || name == "ceil") && eat('(')) return division(name == "ceil");
    return DimExpr::symbol(name);
  }
  Expected<DimExpr> division(bool ceil) {
    if (++depth_ > kMaxDepth) return fail("nested too deeply");
    auto num = expr();
    --depth_;
    if (!num) return num;
    if (!eat('/')) return fail("expected '/'");
    auto den = factor();
    if (!den) return den;
    if (!den->isConstant() || den->constantPart() <= 0)
      return fail("a division is by a positive number");
    if (!eat(')')) return fail("expected ')'");
    int64_t d = den->constantPart();
    return checked(ceil ? ceilDiv(*num, d) : floorDiv(*num, d), "a division");
  }

  static constexpr int kMaxDepth = 32;
  std::string_view s_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

Expected<DimExpr> DimExpr::parse(std::string_view text) { return Parser(text).all(); }

}  // namespace fuselens
