// Fitting: exact integer solutions of small linear systems, one column per
// monomial (and one for the split term's feature), solved in long double and
// accepted only when the rounded coefficients reproduce every sample exactly.
// Simpler families are tried first, so a constant stays a constant and an
// affine dim is never explained by a split.
#include "codegen/symbolic/sym_form.h"

#include <cmath>

namespace fuselens {
namespace {

using Column = std::vector<int64_t>;

int64_t monoValue(const std::vector<int>& mono, const std::vector<int64_t>& atoms) {
  int64_t v = 1;
  for (int a : mono) v *= atoms[size_t(a)];
  return v;
}

int64_t floorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
int64_t floorMod(int64_t a, int64_t b) { return a - floorDiv(a, b) * b; }

// Integer c with sum_j c[j] * cols[j][k] == values[k] for every k, if the
// system pins one down.
std::optional<std::vector<int64_t>> solveExact(const std::vector<Column>& cols,
                                               const std::vector<int64_t>& values) {
  const size_t k = values.size(), m = cols.size();
  std::vector<std::vector<long double>> a(k, std::vector<long double>(m + 1));
  for (size_t r = 0; r < k; ++r) {
    for (size_t c = 0; c < m; ++c) a[r][c] = (long double)cols[c][r];
    a[r][m] = (long double)values[r];
  }
  std::vector<int> pivotCol;
  size_t row = 0;
  for (size_t c = 0; c < m && row < k; ++c) {
    size_t best = row;
    for (size_t r = row + 1; r < k; ++r)
      if (std::fabs(a[r][c]) > std::fabs(a[best][c])) best = r;
    if (std::fabs(a[best][c]) < 1e-9L) continue;
    std::swap(a[row], a[best]);
    for (size_t r = 0; r < k; ++r) {
      if (r == row || a[r][c] == 0) continue;
      long double f = a[r][c] / a[row][c];
      for (size_t j = c; j <= m; ++j) a[r][j] -= f * a[row][j];
    }
    pivotCol.push_back(int(c));
    ++row;
  }
  std::vector<int64_t> coef(m, 0);
  for (size_t r = 0; r < pivotCol.size(); ++r) {
    long double v = a[r][m] / a[r][size_t(pivotCol[r])];
    if (std::fabs(v) > 1e15L) return std::nullopt;
    coef[size_t(pivotCol[r])] = int64_t(std::llround((double)v));
  }
  for (size_t r = 0; r < k; ++r) {
    __int128 s = 0;
    for (size_t c = 0; c < m; ++c) s += (__int128)coef[c] * cols[c][r];
    if (s != values[r]) return std::nullopt;
  }
  return coef;
}

std::vector<std::vector<int>> monomials(size_t atoms, int degree) {
  std::vector<std::vector<int>> out = {{}};
  for (size_t i = 0; i < atoms && degree >= 1; ++i) out.push_back({int(i)});
  for (size_t i = 0; i < atoms && degree >= 2; ++i)
    for (size_t j = i; j < atoms; ++j) out.push_back({int(i), int(j)});
  return out;
}

SymForm polyOf(const std::vector<std::vector<int>>& monos, const std::vector<int64_t>& coef) {
  SymForm f;
  for (size_t j = 0; j < monos.size(); ++j)
    if (coef[j] != 0) f.terms.push_back({coef[j], monos[j]});
  return f;
}

}  // namespace

int64_t SymForm::eval(const std::vector<int64_t>& atoms) const {
  int64_t v = 0;
  for (const Term& t : terms) v += t.coef * monoValue(t.atoms, atoms);
  if (split.coef != 0) {
    int64_t h = split.scale * monoValue(split.mono, atoms) + split.shift;
    v += split.coef * (split.mod ? floorMod(h, split.divisor) : floorDiv(h, split.divisor));
  }
  return v;
}

ExprRef SymForm::expr(const std::function<ExprRef(int)>& atom) const {
  auto monoExpr = [&](const std::vector<int>& mono) {
    ExprRef e = intConst(1);
    for (int a : mono) e = mul(e, atom(a));
    return e;
  };
  ExprRef e = intConst(0);
  for (const Term& t : terms) e = add(e, mul(intConst(t.coef), monoExpr(t.atoms)));
  if (split.coef != 0) {
    // Dims are never negative, so C's truncating / and % are floor's here.
    ExprRef h = add(mul(intConst(split.scale), monoExpr(split.mono)), intConst(split.shift));
    ExprRef g = binary(split.mod ? BinOp::Mod : BinOp::Div, h, intConst(split.divisor));
    e = add(e, mul(intConst(split.coef), g));
  }
  return e;
}

std::string SymForm::str() const {
  auto monoText = [](const std::vector<int>& mono) {
    std::string s;
    for (int a : mono) s += (s.empty() ? "" : "*") + std::string("d") + std::to_string(a);
    return s;
  };
  std::string s;
  auto addTerm = [&](int64_t coef, const std::string& body) {
    if (coef == 0) return;
    std::string mag = body.empty() ? std::to_string(coef < 0 ? -coef : coef)
                      : (coef == 1 || coef == -1)
                          ? body
                          : std::to_string(coef < 0 ? -coef : coef) + "*" + body;
    s += s.empty() ? (coef < 0 ? "-" : "") + mag : (coef < 0 ? "-" : "+") + mag;
  };
  for (const Term& t : terms) addTerm(t.coef, monoText(t.atoms));
  if (split.coef != 0) {
    std::string h =
        (split.scale != 1 ? std::to_string(split.scale) + "*" : "") + monoText(split.mono);
    if (split.shift) h = "(" + h + (split.shift < 0 ? "" : "+") + std::to_string(split.shift) + ")";
    addTerm(split.coef, (split.mod ? "mod(" : "floor(") + h + (split.mod ? "," : "/") +
                            std::to_string(split.divisor) + ")");
  }
  return s.empty() ? "0" : s;
}

std::optional<SymForm> fitForm(const std::vector<std::vector<int64_t>>& atoms,
                               const std::vector<int64_t>& values, bool affineOnly) {
  if (values.empty()) return std::nullopt;
  const size_t n = atoms.empty() ? 0 : atoms[0].size();
  auto columns = [&](const std::vector<std::vector<int>>& monos) {
    std::vector<Column> cols;
    for (const auto& mono : monos) {
      Column c;
      for (const auto& row : atoms) c.push_back(monoValue(mono, row));
      cols.push_back(std::move(c));
    }
    return cols;
  };
  for (int degree = 0; degree <= (affineOnly ? 1 : 2); ++degree) {
    auto monos = monomials(n, degree);
    if (monos.size() > values.size()) break;  // the samples cannot pin it down
    if (auto c = solveExact(columns(monos), values)) return polyOf(monos, *c);
  }
  if (affineOnly) return std::nullopt;
  // A split term over a rest that is none, a constant, then affine: the
  // loops a schedule splits by a factor. The bare term is tried first, so with
  // no sample a multiple of 16, ceil(d0/16) is found rather than 1+floor(d0/16).
  static const int64_t kDivisors[] = {2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 24, 32, 48, 64};
  for (int restDegree = -1; restDegree <= 1; ++restDegree) {
    auto rest = restDegree < 0 ? std::vector<std::vector<int>>{} : monomials(n, restDegree);
    auto restCols = columns(rest);
    if (rest.size() + 1 > values.size()) break;
    for (const auto& mono : monomials(n, 2)) {
      if (mono.empty()) continue;
      for (int64_t scale = 1; scale <= 16; ++scale)
        for (int64_t d : kDivisors)
          for (int64_t shift : {int64_t(0), d - 1})
            for (bool mod : {false, true}) {
              Column g;
              for (const auto& row : atoms) {
                int64_t h = scale * monoValue(mono, row) + shift;
                g.push_back(mod ? floorMod(h, d) : floorDiv(h, d));
              }
              auto cols = restCols;
              cols.push_back(g);
              auto c = solveExact(cols, values);
              if (!c || c->back() == 0) continue;
              SymForm f = polyOf(rest, *c);
              f.split = {c->back(), mono, scale, shift, d, mod};
              return f;
            }
    }
  }
  return std::nullopt;
}

}  // namespace fuselens
