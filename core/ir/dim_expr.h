// Symbolic dim arithmetic: the extent of a dim as an integer expression over
// named symbols (`seq*2`, `seq-1`, `ceil(seq/8)`, `batch*seq`), so shape
// inference can say what Concat, Slice or a strided Conv makes of `seq`
// instead of giving up. An expression lives in `Dim::symbol` in its canonical
// printed form: a plain symbol is the simplest expression, equal expressions
// print the same, and `Dim::operator==` compares them for free.
//
// The algebra: a constant plus a sum of terms `coef * atom`, where an atom is
// a product of symbols or `floor(E/d)` / `ceil(E/d)` of an expression by a
// positive constant. Construction simplifies: like terms collect
// (`seq+seq` -> `seq*2`), multiples of d leave a division
// (`floor((seq*4+1)/2)` -> `seq*2`), nested divisions combine, and of the two
// equal forms `floor((E+r)/d)` and `ceil((E+r-d+1)/d)` the one with the
// smaller constant is kept (`floor((w-1)/2)+1` -> `ceil(w/2)`). Anything the
// algebra cannot say (a product of divisions, an overflow) is nullopt, which
// callers turn into an unknown dim.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/ir/tensor_type.h"
#include "core/support/status.h"

namespace fuselens {

class DimExpr;

// One atom of a sum: a product of symbols, or a floor/ceil division.
struct DimAtom {
  enum class Kind { Product, Floor, Ceil };
  Kind kind = Kind::Product;
  std::vector<std::string> symbols;    // Product: sorted, repeated for powers
  std::shared_ptr<const DimExpr> num;  // Floor/Ceil numerator
  int64_t den = 1;                     // Floor/Ceil: > 1
  std::string key;                     // the printed atom: sort and merge key
};

class DimExpr {
 public:
  DimExpr() = default;
  static DimExpr constant(int64_t c);
  static DimExpr symbol(const std::string& name);
  // Reads the canonical form (spaces allowed); any other text is an error.
  static Expected<DimExpr> parse(std::string_view text);
  // The expression a dim stands for: its value, its parsed symbol (a symbol
  // that does not parse or folds to a number, e.g. an ONNX dim_param
  // "batch size" or "-1", is one opaque name), nullopt when the dim is unknown.
  static std::optional<DimExpr> of(const Dim& d);

  bool isConstant() const { return terms_.empty(); }
  int64_t constantPart() const { return constant_; }
  std::string str() const;  // canonical
  // Fixed when constant, else named by the canonical form.
  Dim toDim() const;
  std::set<std::string> symbols() const;
  // nullopt when a symbol is unbound or the arithmetic overflows.
  std::optional<int64_t> evaluate(const std::map<std::string, int64_t>& bindings) const;
  // Replaces the bound symbols by their values and simplifies.
  std::optional<DimExpr> substitute(const std::map<std::string, int64_t>& bindings) const;

  bool operator==(const DimExpr& o) const { return str() == o.str(); }
  bool operator!=(const DimExpr& o) const { return !(*this == o); }

  friend std::optional<DimExpr> add(const DimExpr& a, const DimExpr& b);
  friend std::optional<DimExpr> scale(const DimExpr& a, int64_t k);
  friend std::optional<DimExpr> multiply(const DimExpr& a, const DimExpr& b);
  friend std::optional<DimExpr> floorDiv(const DimExpr& a, int64_t d);
  friend std::optional<DimExpr> divideExact(const DimExpr& a, const DimExpr& b);

 private:
  using Term = std::pair<DimAtom, int64_t>;  // atom, non-zero coefficient
  static std::optional<DimExpr> make(int64_t constant, std::vector<Term> terms);

  int64_t constant_ = 0;
  std::vector<Term> terms_;  // sorted by atom key, keys unique
};

std::optional<DimExpr> add(const DimExpr& a, const DimExpr& b);
std::optional<DimExpr> subtract(const DimExpr& a, const DimExpr& b);
std::optional<DimExpr> scale(const DimExpr& a, int64_t k);
// nullopt unless both sides are polynomials (no divisions) or one is constant.
std::optional<DimExpr> multiply(const DimExpr& a, const DimExpr& b);
// d > 0; rounds towards minus infinity for every value of the symbols.
std::optional<DimExpr> floorDiv(const DimExpr& a, int64_t d);
std::optional<DimExpr> ceilDiv(const DimExpr& a, int64_t d);
// a / b when b divides a for every value of the symbols (b a constant or a
// single term dividing each term of a), else nullopt.
std::optional<DimExpr> divideExact(const DimExpr& a, const DimExpr& b);

// Dim-level forms for shape inference: unknown in, or nothing to say, gives
// unknown out; constants fold to fixed dims.
Dim dimAdd(const Dim& a, const Dim& b);
// A dim plus a constant that may be negative (a Dim cannot hold -3).
Dim dimAdd(const Dim& a, int64_t c);
Dim dimSub(const Dim& a, const Dim& b);
Dim dimMul(const Dim& a, const Dim& b);
Dim dimFloorDiv(const Dim& a, int64_t d);
Dim dimCeilDiv(const Dim& a, int64_t d);
Dim dimDivExact(const Dim& a, const Dim& b);
// The dim with the bound symbols substituted: fixed when nothing is left
// (unknown when that value is negative), still symbolic otherwise.
Dim bindDim(const Dim& d, const std::map<std::string, int64_t>& bindings);
// The names a dim's expression is built from ({} for static and unknown dims).
std::set<std::string> dimSymbols(const Dim& d);
// A canonical spelling for a symbol read from a model or a text file.
std::string canonicalSymbol(const std::string& text);

}  // namespace fuselens
