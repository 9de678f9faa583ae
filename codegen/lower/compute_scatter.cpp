// Compute definitions of ScatterND and ScatterElements (reduction none, add,
// mul, max, min): a copy of the data into the result, then a serial loop over
// the updates that combines each into the result at its gathered position:
//
//   out = data;  for u in updates: out[pos(u)] = combine(out[pos(u)], updates[u])
//
// The update loop reads the result back, so the result is always materialized
// (fusion_plan never fuses a scatter into an epilogue) and the loop is pinned
// serial: two updates may target one position.
#include "codegen/lower/compute_scatter.h"

#include "codegen/lower/compute_data.h"

namespace fuselens {
namespace {

ExprRef clampTo(ExprRef i, int64_t len) {
  return binary(BinOp::Max, intConst(0), binary(BinOp::Min, std::move(i), intConst(len - 1)));
}

ExprRef normalized(ExprRef i, int64_t len) {
  return clampTo(select(compare(CmpOp::LT, i, intConst(0)), add(i, intConst(len)), i), len);
}

std::vector<StmtRef> pinSerial(std::vector<StmtRef> nest) {
  for (StmtRef& s : nest)
    if (s->kind == StmtKind::For) {
      s->pinned = true;
      pinSerial(s->body);
    }
  return nest;
}

}  // namespace

bool isScatterOp(const std::string& op) { return op == "ScatterND" || op == "ScatterElements"; }

Status checkScatterOp(const Graph& body, const Node& n) {
  if (n.inputs.size() != 3 || n.outputs.size() != 1)
    return Status::error(n.op + " needs data, indices and updates, and one output", nodePlace(n));
  for (ValueId v : {n.inputs[0], n.inputs[1], n.inputs[2], n.outputs[0]}) {
    if (!v.valid()) return Status::error("an input is missing", nodePlace(n));
    const Value& val = body.value(v);
    if (!val.type.rankKnown || !val.type.isStatic())
      return Status::error("value '" + val.name + "' has the dynamic shape " + val.type.str() +
                               "; code generation needs static shapes for now",
                           nodePlace(n));
  }
  DType data = body.value(n.inputs[0]).type.dtype, idx = body.value(n.inputs[1]).type.dtype;
  if (data != DType::F32 || body.value(n.inputs[2]).type.dtype != DType::F32 || idx != DType::I64)
    return Status::error("code generation supports f32 data and updates with i64 indices here",
                         nodePlace(n));
  std::string red = n.attrs.getString("reduction", "none");
  if (red != "none" && red != "add" && red != "mul" && red != "max" && red != "min")
    return Status::error("reduction '" + red + "' is not none, add, mul, max or min", nodePlace(n));
  std::vector<int64_t> d = *body.value(n.inputs[0]).type.staticShape();
  std::vector<int64_t> q = *body.value(n.inputs[1]).type.staticShape();
  std::vector<int64_t> u = *body.value(n.inputs[2]).type.staticShape();
  std::vector<int64_t> want = q;
  if (n.op == "ScatterND") {
    if (q.empty() || q.back() > int64_t(d.size()))
      return Status::error(
          "indices of shape " + formatShape(q) + " do not fit data of shape " + formatShape(d),
          nodePlace(n));
    want.pop_back();
    want.insert(want.end(), d.begin() + q.back(), d.end());
  }
  if (u != want || *body.value(n.outputs[0]).type.staticShape() != d)
    return Status::error("updates of shape " + formatShape(u) + " do not fit indices " +
                             formatShape(q) + " and data " + formatShape(d),
                         nodePlace(n));
  return Status::ok();
}

std::vector<StmtRef> lowerScatter(KernelBuilder& kb, const Node& n,
                                  const KernelBuilder::Sink& sink) {
  std::vector<int64_t> d = kb.shapeOf(n.inputs[0]), q = kb.shapeOf(n.inputs[1]);
  std::vector<int64_t> u = kb.shapeOf(n.inputs[2]);
  int64_t r = int64_t(d.size());
  std::vector<StmtRef> out =
      kb.loopNest(d, [&](const Index& at) { return sink(at, kb.valueAt(n.inputs[0], at)); });
  std::string red = n.attrs.getString("reduction", "none");
  std::vector<StmtRef> scatter = kb.loopNest(u, [&](const Index& at) -> std::vector<StmtRef> {
    std::vector<ExprRef> ud = at.dimExprs(), pos;
    if (n.op == "ScatterElements") {
      int64_t a = n.attrs.getInt("axis", 0);
      if (a < 0) a += r;
      pos = ud;
      pos[size_t(a)] = normalized(indexValueAt(kb, n.inputs[1], at), d[size_t(a)]);
    } else {
      int64_t k = q.back(), lead = int64_t(q.size()) - 1;
      std::vector<ExprRef> qd(ud.begin(), ud.begin() + lead);
      qd.push_back(nullptr);
      for (int64_t j = 0; j < k; ++j) {
        qd.back() = intConst(j);
        pos.push_back(
            normalized(indexValueAt(kb, n.inputs[1], Index::ofDims(q, qd)), d[size_t(j)]));
      }
      pos.insert(pos.end(), ud.begin() + lead, ud.end());
    }
    Index p = Index::ofDims(d, pos);
    ExprRef upd = kb.valueAt(n.inputs[2], at);
    if (red != "none") {
      ExprRef cur = kb.valueAt(n.outputs[0], p);
      upd = red == "add"   ? add(cur, upd)
            : red == "mul" ? mul(cur, upd)
            : red == "max" ? binary(BinOp::Max, cur, upd)
                           : binary(BinOp::Min, cur, upd);
    }
    return sink(p, upd);
  });
  for (StmtRef& s : pinSerial(std::move(scatter))) out.push_back(std::move(s));
  return out;
}

}  // namespace fuselens
