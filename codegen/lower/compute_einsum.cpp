// Compute definition of Einsum as one generic reduction nest: a loop nest over
// the output's letters, and inside it loops over the letters that appear in
// inputs only (the contracted ones), accumulating the product of every
// operand read at its letters' positions. This covers matmul-like and batched
// contractions, transposes, outer products, diagonals and traces (a letter
// repeated in one operand reads it at equal positions), and ellipses
// (broadcast like numpy: an operand's size-1 dim reads index 0). Implicit
// output (no "->"): the letters used once, in alphabetical order, after the
// ellipsis dims.
#include "codegen/lower/compute_einsum.h"

#include <algorithm>
#include <cctype>
#include <map>

namespace fuselens {
namespace {

// Term letters per operand with "..." expanded to letters '0', '1', ... (the
// ellipsis dims, right-aligned across operands), and the output term.
struct Equation {
  std::vector<std::string> inputs;
  std::string output;
  std::map<char, int64_t> size;
};

std::optional<Equation> parse(const std::string& eq,
                              const std::vector<std::vector<int64_t>>& shapes, std::string* why) {
  std::string s;
  for (char c : eq)
    if (!std::isspace(static_cast<unsigned char>(c))) s += c;
  size_t arrow = s.find("->");
  std::string lhs = s.substr(0, arrow), rhs = arrow == std::string::npos ? "" : s.substr(arrow + 2);
  std::vector<std::string> terms;
  for (size_t p = 0;;) {
    size_t q = lhs.find(',', p);
    terms.push_back(lhs.substr(p, q == std::string::npos ? std::string::npos : q - p));
    if (q == std::string::npos) break;
    p = q + 1;
  }
  if (terms.size() != shapes.size())
    return *why = "the equation names " + std::to_string(terms.size()) +
                  " operands, the node has " + std::to_string(shapes.size()),
           std::nullopt;
  Equation e;
  int64_t ellRank = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    size_t dots = terms[i].find("...");
    int64_t letters = int64_t(terms[i].size()) - (dots == std::string::npos ? 0 : 3);
    if (dots == std::string::npos && letters != int64_t(shapes[i].size()))
      return *why =
                 "term '" + terms[i] + "' does not match the rank of operand " + std::to_string(i),
             std::nullopt;
    if (dots != std::string::npos) ellRank = std::max(ellRank, int64_t(shapes[i].size()) - letters);
  }
  auto expand = [&](const std::string& t, int64_t rank) {
    size_t dots = t.find("...");
    if (dots == std::string::npos) return t;
    std::string ell;
    for (int64_t k = ellRank - rank; k < ellRank; ++k) ell += char('0' + k);
    return t.substr(0, dots) + ell + t.substr(dots + 3);
  };
  for (size_t i = 0; i < terms.size(); ++i) {
    size_t dots = terms[i].find("...");
    int64_t ell =
        dots == std::string::npos ? 0 : int64_t(shapes[i].size()) - int64_t(terms[i].size() - 3);
    std::string t = expand(terms[i], ell);
    if (t.size() != shapes[i].size())
      return *why = "term '" + terms[i] + "' does not match operand " + std::to_string(i),
             std::nullopt;
    for (size_t k = 0; k < t.size(); ++k) {
      int64_t& sz = e.size.try_emplace(t[k], 1).first->second;
      if (shapes[i][k] != 1 && sz != 1 && sz != shapes[i][k])
        return *why = std::string("letter '") + t[k] + "' has sizes " + std::to_string(sz) +
                      " and " + std::to_string(shapes[i][k]),
               std::nullopt;
      if (shapes[i][k] != 1) sz = shapes[i][k];
    }
    e.inputs.push_back(t);
  }
  if (arrow != std::string::npos) {
    e.output = expand(rhs, ellRank);
  } else {
    for (int64_t k = 0; k < ellRank; ++k) e.output += char('0' + k);
    std::map<char, int> count;
    for (const std::string& t : e.inputs)
      for (char c : t) ++count[c];
    for (auto& [c, n] : count)
      if (n == 1 && std::isalpha(static_cast<unsigned char>(c))) e.output += c;
  }
  for (char c : e.output)
    if (!e.size.count(c))
      return *why = std::string("output letter '") + c + "' is in no operand", std::nullopt;
  return e;
}

}  // namespace

// The reduction nest of `equation` over n's operands.
static std::vector<StmtRef> contraction(KernelBuilder& kb, const Node& n,
                                        const std::string& equation,
                                        const KernelBuilder::Sink& sink) {
  std::vector<std::vector<int64_t>> shapes;
  for (ValueId v : n.inputs) shapes.push_back(kb.shapeOf(v));
  std::string why;
  auto eq = parse(equation, shapes, &why);
  if (!eq) {
    kb.fail(Status::error("equation '" + equation + "': " + why, nodePlace(n)));
    return {};
  }
  std::vector<int64_t> out;
  for (char c : eq->output) out.push_back(eq->size[c]);
  if (kb.shapeOf(n.outputs[0]) != out) {
    kb.fail(Status::error("output shape " + formatShape(kb.shapeOf(n.outputs[0])) +
                              " differs from the computed " + formatShape(out),
                          nodePlace(n)));
    return {};
  }
  std::string reduced;
  for (auto& [c, sz] : eq->size)
    if (eq->output.find(c) == std::string::npos) reduced += c;
  return kb.loopNest(out, [&](const Index& at) -> std::vector<StmtRef> {
    std::map<char, ExprRef> pos;
    std::vector<ExprRef> od = at.dimExprs();
    for (size_t k = 0; k < eq->output.size(); ++k) pos[eq->output[k]] = od[k];
    std::vector<std::pair<Var, int64_t>> loops;
    for (char c : reduced) {
      if (eq->size[c] == 1) {
        pos[c] = intConst(0);
        continue;
      }
      Var v = kb.newLoopVar();
      pos[c] = varRef(v);
      loops.emplace_back(v, eq->size[c]);
    }
    ExprRef prod;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      std::vector<ExprRef> d;
      for (size_t k = 0; k < eq->inputs[i].size(); ++k)
        d.push_back(shapes[i][k] == 1 ? intConst(0) : pos[eq->inputs[i][k]]);
      ExprRef x = kb.valueAt(n.inputs[i], Index::ofDims(shapes[i], d));
      prod = prod ? mul(prod, x) : x;
    }
    if (loops.empty()) return sink(at, prod);
    Var acc = kb.newLocal("acc", prod->type);
    std::vector<StmtRef> inner = {assign(acc, add(varRef(acc), prod))};
    for (size_t i = loops.size(); i-- > 0;)
      inner = {forLoop(loops[i].first, loops[i].second, inner)};
    std::vector<StmtRef> body = {
        let(acc, prod->type == DType::I64 ? intConst(0) : floatConst(0, prod->type))};
    body.insert(body.end(), inner.begin(), inner.end());
    for (StmtRef& s : sink(at, varRef(acc))) body.push_back(std::move(s));
    return body;
  });
}

std::vector<StmtRef> lowerEinsum(KernelBuilder& kb, const Node& n,
                                 const KernelBuilder::Sink& sink) {
  return contraction(kb, n, n.attrs.getString("equation", ""), sink);
}

std::vector<StmtRef> lowerMatMulAsEinsum(KernelBuilder& kb, const Node& n,
                                         const KernelBuilder::Sink& sink) {
  bool av = kb.shapeOf(n.inputs[0]).size() == 1, bv = kb.shapeOf(n.inputs[1]).size() == 1;
  std::string out = av && bv ? "" : std::string("...") + (av ? "" : "i") + (bv ? "" : "k");
  return contraction(
      kb, n, std::string(av ? "j" : "...ij") + "," + (bv ? "j" : "...jk") + "->" + out, sink);
}

}  // namespace fuselens
