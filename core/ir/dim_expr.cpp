// Symbolic dim arithmetic (see dim_expr.h): construction that keeps every
// expression in canonical form, printing and evaluation (parsing is in
// dim_expr_parse.cpp).
#include "core/ir/dim_expr.h"

#include <algorithm>
#include <numeric>

namespace fuselens {
namespace {

using Opt = std::optional<int64_t>;

constexpr size_t kMaxTerms = 64;

Opt addI(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
Opt mulI(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}
// Rounds towards minus infinity, as ONNX's floor of a negative quotient does.
int64_t floorDivI(int64_t a, int64_t d) { return a / d - ((a % d != 0) && ((a < 0) != (d < 0))); }

// A numerator needs parentheses in `floor(N/d)` unless it is one product term.
std::string numeratorText(const DimExpr& e) {
  std::string s = e.str();
  bool simple = s.find_first_of("+-(") == std::string::npos;
  return simple ? s : "(" + s + ")";
}

DimAtom productAtom(std::vector<std::string> symbols) {
  std::sort(symbols.begin(), symbols.end());
  DimAtom a;
  for (size_t i = 0; i < symbols.size(); ++i) a.key += (i ? "*" : "") + symbols[i];
  a.symbols = std::move(symbols);
  return a;
}

DimAtom divAtom(DimAtom::Kind kind, DimExpr num, int64_t den) {
  DimAtom a;
  a.kind = kind;
  a.key = std::string(kind == DimAtom::Kind::Floor ? "floor(" : "ceil(") + numeratorText(num) +
          "/" + std::to_string(den) + ")";
  a.num = std::make_shared<const DimExpr>(std::move(num));
  a.den = den;
  return a;
}

}  // namespace

DimExpr DimExpr::constant(int64_t c) {
  DimExpr e;
  e.constant_ = c;
  return e;
}

DimExpr DimExpr::symbol(const std::string& name) {
  DimExpr e;
  e.terms_.push_back({productAtom({name}), 1});
  return e;
}

std::optional<DimExpr> DimExpr::of(const Dim& d) {
  if (d.isStatic()) return constant(d.value);
  if (d.symbol.empty()) return std::nullopt;
  auto e = parse(d.symbol);
  // A name that folds to a number ("-1" from some exporter) is still a name.
  return e && !e->isConstant() ? *e : symbol(d.symbol);
}

std::optional<DimExpr> DimExpr::make(int64_t constant, std::vector<Term> terms) {
  std::sort(terms.begin(), terms.end(),
            [](const Term& a, const Term& b) { return a.first.key < b.first.key; });
  DimExpr e;
  e.constant_ = constant;
  for (Term& t : terms) {
    if (!e.terms_.empty() && e.terms_.back().first.key == t.first.key) {
      auto c = addI(e.terms_.back().second, t.second);
      if (!c) return std::nullopt;
      e.terms_.back().second = *c;
    } else {
      e.terms_.push_back(std::move(t));
    }
    if (e.terms_.back().second == 0) e.terms_.pop_back();
  }
  // Shapes need a few terms; a product of long sums (fuzzed text) is not a shape.
  if (e.terms_.size() > kMaxTerms) return std::nullopt;
  return e;
}

std::string DimExpr::str() const {
  std::string s;
  for (const auto& [atom, coef] : terms_) {
    s += coef < 0 ? "-" : (s.empty() ? "" : "+");
    s += atom.key;
    if (coef != 1 && coef != -1) s += "*" + std::to_string(coef < 0 ? -uint64_t(coef) : coef);
  }
  if (s.empty()) return std::to_string(constant_);
  if (constant_ > 0) s += "+" + std::to_string(constant_);
  if (constant_ < 0) s += "-" + std::to_string(-uint64_t(constant_));
  return s;
}

Dim DimExpr::toDim() const { return isConstant() ? Dim::fixed(constant_) : Dim::named(str()); }

std::set<std::string> DimExpr::symbols() const {
  std::set<std::string> out;
  for (const auto& [atom, coef] : terms_) {
    out.insert(atom.symbols.begin(), atom.symbols.end());
    if (atom.num) out.merge(atom.num->symbols());
  }
  return out;
}

std::optional<DimExpr> DimExpr::substitute(const std::map<std::string, int64_t>& bindings) const {
  std::optional<DimExpr> acc = constant(constant_);
  for (const auto& [atom, coef] : terms_) {
    std::optional<DimExpr> t = constant(coef);
    for (const std::string& s : atom.symbols) {
      auto it = bindings.find(s);
      if (t) t = multiply(*t, it == bindings.end() ? symbol(s) : constant(it->second));
    }
    if (atom.num) {
      auto num = atom.num->substitute(bindings);
      if (num && atom.kind == DimAtom::Kind::Ceil)
        num = ceilDiv(*num, atom.den);
      else if (num)
        num = floorDiv(*num, atom.den);
      t = num && t ? multiply(*t, *num) : std::nullopt;
    }
    acc = acc && t ? add(*acc, *t) : std::nullopt;
  }
  return acc;
}

std::optional<int64_t> DimExpr::evaluate(const std::map<std::string, int64_t>& bindings) const {
  auto e = substitute(bindings);
  if (!e || !e->isConstant()) return std::nullopt;
  return e->constant_;
}

std::optional<DimExpr> add(const DimExpr& a, const DimExpr& b) {
  auto c = addI(a.constant_, b.constant_);
  if (!c) return std::nullopt;
  std::vector<DimExpr::Term> terms = a.terms_;
  terms.insert(terms.end(), b.terms_.begin(), b.terms_.end());
  return DimExpr::make(*c, std::move(terms));
}

std::optional<DimExpr> subtract(const DimExpr& a, const DimExpr& b) {
  auto nb = scale(b, -1);
  return nb ? add(a, *nb) : std::nullopt;
}

std::optional<DimExpr> scale(const DimExpr& a, int64_t k) {
  auto c = mulI(a.constant_, k);
  if (!c) return std::nullopt;
  std::vector<DimExpr::Term> terms = a.terms_;
  for (auto& t : terms) {
    auto m = mulI(t.second, k);
    if (!m) return std::nullopt;
    t.second = *m;
  }
  return DimExpr::make(*c, std::move(terms));
}

std::optional<DimExpr> multiply(const DimExpr& a, const DimExpr& b) {
  if (b.isConstant()) return scale(a, b.constant_);
  if (a.isConstant()) return scale(b, a.constant_);
  for (const DimExpr* e : {&a, &b})
    for (const auto& t : e->terms_)
      if (t.first.kind != DimAtom::Kind::Product) return std::nullopt;
  // (ca + sum) * (cb + sum): every pair of terms, constants as empty products.
  auto withConstant = [](const DimExpr& e) {
    std::vector<DimExpr::Term> t = e.terms_;
    if (e.constant_ != 0) t.push_back({productAtom({}), e.constant_});
    return t;
  };
  if ((a.terms_.size() + 1) * (b.terms_.size() + 1) > 4 * kMaxTerms) return std::nullopt;
  int64_t constant = 0;
  std::vector<DimExpr::Term> terms;
  for (const auto& [x, cx] : withConstant(a))
    for (const auto& [y, cy] : withConstant(b)) {
      auto c = mulI(cx, cy);
      if (!c) return std::nullopt;
      std::vector<std::string> syms = x.symbols;
      syms.insert(syms.end(), y.symbols.begin(), y.symbols.end());
      if (syms.empty()) {
        auto s = addI(constant, *c);
        if (!s) return std::nullopt;
        constant = *s;
      } else {
        terms.push_back({productAtom(std::move(syms)), *c});
      }
    }
  return DimExpr::make(constant, std::move(terms));
}

std::optional<DimExpr> floorDiv(const DimExpr& a, int64_t d) {
  if (d <= 0) return std::nullopt;
  if (d == 1) return a;
  // a = d*q + r with every remainder coefficient in [0, d): floor(a/d) = q + floor(r/d).
  int64_t qc = floorDivI(a.constant_, d), rc = a.constant_ - qc * d;
  std::vector<DimExpr::Term> quot, rem;
  for (const auto& [atom, coef] : a.terms_) {
    int64_t q = floorDivI(coef, d), r = coef - q * d;
    if (q) quot.push_back({atom, q});
    if (r) rem.push_back({atom, r});
  }
  auto q = DimExpr::make(qc, std::move(quot));
  if (!q || rem.empty()) return q;  // 0 <= rc < d: the division leaves nothing
  int64_t g = std::gcd(d, rc);
  for (const auto& t : rem) g = std::gcd(g, t.second);
  for (auto& t : rem) t.second /= g;
  rc /= g;
  d /= g;
  if (d == 1) {
    auto exact = DimExpr::make(rc, std::move(rem));
    return exact ? add(*q, *exact) : std::nullopt;
  }
  // floor((floor(N/a) + r)/d) = floor((N + r*a)/(a*d)); ceil(N/a) = floor((N+a-1)/a).
  if (rem.size() == 1 && rem[0].second == 1 && rem[0].first.num) {
    const DimAtom& inner = rem[0].first;
    auto ad = mulI(inner.den, d);
    auto ra = mulI(rc, inner.den);
    int64_t bias = inner.kind == DimAtom::Kind::Ceil ? inner.den - 1 : 0;
    auto shift = ra ? addI(*ra, bias) : std::nullopt;
    auto num = shift ? add(*inner.num, DimExpr::constant(*shift)) : std::nullopt;
    auto merged = num && ad ? floorDiv(*num, *ad) : std::nullopt;
    return merged ? add(*q, *merged) : std::nullopt;
  }
  // floor((N+rc)/d) == ceil((N+rc-d+1)/d): keep the form with the smaller constant.
  bool asCeil = static_cast<__int128>(rc) * 2 > static_cast<__int128>(d) - 1;  // no overflow
  auto num = DimExpr::make(asCeil ? rc - d + 1 : rc, std::move(rem));
  if (!num) return std::nullopt;
  auto kind = asCeil ? DimAtom::Kind::Ceil : DimAtom::Kind::Floor;
  DimExpr div;
  div.terms_.push_back({divAtom(kind, *num, d), 1});
  return add(*q, div);
}

std::optional<DimExpr> ceilDiv(const DimExpr& a, int64_t d) {
  if (d <= 0) return std::nullopt;
  auto shifted = add(a, DimExpr::constant(d - 1));
  return shifted ? floorDiv(*shifted, d) : std::nullopt;
}

std::optional<DimExpr> divideExact(const DimExpr& a, const DimExpr& b) {
  if (b.isConstant()) {
    int64_t d = b.constant_;
    if (d == 0) return std::nullopt;
    if (d < 0) {
      auto na = scale(a, -1);
      return na ? divideExact(*na, DimExpr::constant(-d)) : std::nullopt;
    }
    if (a.constant_ % d) return std::nullopt;
    for (const auto& t : a.terms_)
      if (t.second % d) return std::nullopt;
    return floorDiv(a, d);
  }
  if (b.terms_.size() != 1 || b.constant_ != 0 || b.terms_[0].first.kind != DimAtom::Kind::Product)
    return std::nullopt;
  if (a.constant_ != 0) return std::nullopt;
  const auto& [divisor, dc] = b.terms_[0];
  std::vector<DimExpr::Term> terms;
  for (const auto& [atom, coef] : a.terms_) {
    if (atom.kind != DimAtom::Kind::Product || coef % dc) return std::nullopt;
    std::vector<std::string> left = atom.symbols;
    for (const std::string& s : divisor.symbols) {
      auto it = std::find(left.begin(), left.end(), s);
      if (it == left.end()) return std::nullopt;
      left.erase(it);
    }
    terms.push_back({productAtom(std::move(left)), coef / dc});
  }
  // A term whose symbols all cancelled is a constant.
  int64_t constant = 0;
  std::vector<DimExpr::Term> kept;
  for (auto& t : terms) {
    if (!t.first.symbols.empty()) {
      kept.push_back(std::move(t));
      continue;
    }
    auto s = addI(constant, t.second);
    if (!s) return std::nullopt;
    constant = *s;
  }
  return DimExpr::make(constant, std::move(kept));
}

// ---- Dim-level forms ----

namespace {
template <class F>
Dim onExprs(const Dim& a, const Dim& b, F f) {
  auto x = DimExpr::of(a), y = DimExpr::of(b);
  if (!x || !y) return Dim::unknown();
  std::optional<DimExpr> r = f(*x, *y);
  return r ? r->toDim() : Dim::unknown();
}
}  // namespace

Dim dimAdd(const Dim& a, const Dim& b) {
  return onExprs(a, b, [](const DimExpr& x, const DimExpr& y) { return add(x, y); });
}
Dim dimAdd(const Dim& a, int64_t c) {
  auto x = DimExpr::of(a);
  auto r = x ? add(*x, DimExpr::constant(c)) : std::nullopt;
  return r ? r->toDim() : Dim::unknown();
}
Dim dimSub(const Dim& a, const Dim& b) { return onExprs(a, b, subtract); }
Dim dimMul(const Dim& a, const Dim& b) { return onExprs(a, b, multiply); }
Dim dimDivExact(const Dim& a, const Dim& b) { return onExprs(a, b, divideExact); }

Dim dimFloorDiv(const Dim& a, int64_t d) {
  auto x = DimExpr::of(a);
  auto r = x ? floorDiv(*x, d) : std::nullopt;
  return r ? r->toDim() : Dim::unknown();
}

Dim dimCeilDiv(const Dim& a, int64_t d) {
  auto x = DimExpr::of(a);
  auto r = x ? ceilDiv(*x, d) : std::nullopt;
  return r ? r->toDim() : Dim::unknown();
}

Dim bindDim(const Dim& d, const std::map<std::string, int64_t>& bindings) {
  if (d.isStatic() || d.symbol.empty()) return d;
  auto e = DimExpr::of(d);
  auto s = e ? e->substitute(bindings) : std::nullopt;
  if (!s) return Dim::unknown();
  if (s->isConstant() && s->constantPart() < 0) return Dim::unknown();
  return s->toDim();
}

std::set<std::string> dimSymbols(const Dim& d) {
  if (d.isStatic() || d.symbol.empty()) return {};
  auto e = DimExpr::of(d);
  return e ? e->symbols() : std::set<std::string>{d.symbol};
}

std::string canonicalSymbol(const std::string& text) {
  auto e = DimExpr::parse(text);
  // A name that is not an expression, or one that folds to a number, stays as written.
  return e && !e->isConstant() ? e->str() : text;
}

}  // namespace fuselens
