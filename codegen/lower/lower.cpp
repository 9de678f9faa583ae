// Lowers one kernel to a LoopFunc, in three steps:
//   1. check the body (lower_check.cpp) and plan where reduction results live
//      (fusion_plan.cpp);
//   2. make buffers: params for the body's inputs and outputs, embedded
//      constants, temps for materialized reductions;
//   3. emit one loop nest per root in topological order: each materialized
//      reduction, and each kernel output (with its reduction accumulator, when
//      the plan fused one in). Same-shape elementwise outputs share one nest;
//      subexpressions read twice become locals (hoist_shared.cpp).
// A single compute op is lowered as a one-node body, so both paths are one.
// A tapped group (kTapOutputsAttr) is planned from its own outputs alone; each
// tap is then stored where its value exists (placeTaps).
#include "codegen/lower/lower.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "codegen/lower/compute_table.h"
#include "codegen/lower/hoist_shared.h"
#include "codegen/lower/lower_internal.h"

namespace fuselens {

namespace {

Graph singleOpBody(const Graph& g, const Node& n) {
  return graphOfNode(g, n, [&](Graph& body, size_t i) {
    return body.addInput(g.value(n.inputs[i]).name, g.value(n.inputs[i]).type);
  });
}

// C identifiers for buffer names, unique within the function, never shaped like
// the loop IR's own variables (i0, acc0, ...).
class BufferNames {
 public:
  std::string make(const std::string& raw, const std::string& fallback) {
    std::string s;
    for (char c : raw) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    if (s.empty()) s = fallback;
    if (std::isdigit(static_cast<unsigned char>(s[0]))) s = "v" + s;
    size_t digits = s.find_first_of("0123456789");
    if (digits != std::string::npos &&
        s.find_first_not_of("0123456789", digits) == std::string::npos) {
      std::string prefix = s.substr(0, digits);
      if (prefix == "i" || prefix == "acc" || prefix == "max" || prefix == "sum" || prefix == "v" ||
          prefix == "e")
        s += "_";
    }
    std::string name = s;
    for (int k = 1; !used_.insert(name).second; ++k) name = s + "_" + std::to_string(k);
    return name;
  }

 private:
  std::set<std::string> used_;
};

class BodyLowering {
 public:
  BodyLowering(const Graph& body, LoopFunc& fn, const Schedule& sched, size_t taps = 0)
      : body_(body), fn_(fn), kb_(body, fn, sched) {
    const std::vector<ValueId>& outs = body.outputs();
    const size_t own = outs.size() - std::min(taps, outs.size());
    outputs_.assign(outs.begin(), outs.begin() + std::ptrdiff_t(own));
    taps_.assign(outs.begin() + std::ptrdiff_t(own), outs.end());
  }

  // Kernel inputs whose values are constants of the outer graph, by input position.
  void setOuterConstants(const Graph& g, const Node& n) {
    for (size_t i = 0, j = 0; i < n.inputs.size(); ++i) {
      if (!n.inputs[i].valid()) continue;
      if (j >= body_.inputs().size()) break;
      if (auto c = g.value(n.inputs[i]).constant) kb_.setOuterConstant(body_.inputs()[j], c);
      ++j;
    }
  }

  Status run() {
    auto order = body_.topoOrder();
    if (!order) return Status::error("the kernel body has a cycle", "graph '" + body_.name + "'");
    FL_RETURN_IF_ERROR(checkKernelBody(body_, *order));
    order_ = *order;
    for (size_t i = 0; i < order_.size(); ++i) position_[order_[i].index] = int(i);
    plan_ = planFusion(body_, order_, outputs_);
    makeParams();
    std::vector<BufferId> temps = makeInternalBuffers();
    FL_RETURN_IF_ERROR(placeTaps());
    std::vector<StmtRef> stmts = emitRoots();
    for (StmtRef& s : tapNests()) stmts.push_back(std::move(s));
    FL_RETURN_IF_ERROR(kb_.error());
    StmtRef root = seq(std::move(stmts));
    for (size_t k = temps.size(); k-- > 0;) root = allocate(fn_.buffer(temps[k]), {root});
    fn_.body = root;
    hoistSharedExprs(fn_);
    return Status::ok();
  }

 private:
  std::vector<int64_t> shapeOf(ValueId v) const { return kb_.shapeOf(v); }

  void makeParams() {
    for (ValueId v : body_.inputs()) {
      const Value& val = body_.value(v);
      BufferId b = fn_.addBuffer(names_.make(val.name, "in"), BufferKind::Input, val.type.dtype,
                                 *val.type.staticShape());
      fn_.params.push_back(b);
      kb_.bindBuffer(v, b);
    }
    fn_.numInputs = fn_.params.size();
    for (size_t i = 0; i < body_.outputs().size(); ++i) {
      ValueId v = body_.outputs()[i];
      const Value& val = body_.value(v);
      BufferId b = fn_.addBuffer(names_.make(val.name, "out"), BufferKind::Output, val.type.dtype,
                                 *val.type.staticShape());
      fn_.params.push_back(b);
      if (i < outputs_.size())
        outBufs_[v.index].push_back(b);
      else
        tapBufs_[v.index] = b;  // placed by placeTaps, once the plan is known
    }
  }

  // Constants the body holds itself, and the buffers of materialized reductions.
  std::vector<BufferId> makeInternalBuffers() {
    for (ValueId v : body_.constants()) {
      const Value& val = body_.value(v);
      if (val.constant->numel() == 1) continue;  // a literal (valueAt)
      BufferId b = fn_.addBuffer(names_.make(val.name, "c"), BufferKind::Constant,
                                 val.constant->dtype, val.constant->shape);
      fn_.buffers[b.index].data = val.constant;
      kb_.bindBuffer(v, b);
    }
    std::vector<BufferId> temps;
    // Further outputs of multi-output reductions: their output buffer, or a temp when
    // only the group reads them; stored through the builder's output sink.
    for (ValueId v : plan_.materialized) {
      const Node& p = body_.node(body_.value(v).producer);
      for (size_t k = 1; k < p.outputs.size(); ++k) {
        ValueId o = p.outputs[k];
        if (outBufs_.count(o.index)) {
          kb_.bindBuffer(o, outBufs_[o.index][0]);
        } else if (!body_.value(o).users.empty()) {
          BufferId b = fn_.addBuffer(names_.make(body_.value(o).name, "t"), BufferKind::Temp,
                                     body_.value(o).type.dtype, shapeOf(o));
          temps.push_back(b);
          outBufs_[o.index] = {b};
          kb_.bindBuffer(o, b);
        }
      }
    }
    kb_.setOutputSink([this](ValueId o, const Index& at, ExprRef value) {
      return outBufs_.count(o.index) ? stores(o, at, std::move(value)) : std::vector<StmtRef>{};
    });
    for (ValueId v : plan_.materialized) {
      if (auto it = outBufs_.find(v.index); it != outBufs_.end()) {
        kb_.bindBuffer(v, it->second[0]);
        continue;
      }
      BufferId b = fn_.addBuffer(names_.make(body_.value(v).name, "t"), BufferKind::Temp,
                                 body_.value(v).type.dtype, shapeOf(v));
      temps.push_back(b);
      outBufs_[v.index] = {b};
      kb_.bindBuffer(v, b);
    }
    return temps;
  }

  std::vector<StmtRef> stores(ValueId v, const Index& at, ExprRef value) {
    std::vector<StmtRef> out;
    const std::vector<BufferId>& targets = outBufs_[v.index];
    if (targets.size() > 1 && value->kind != ExprKind::VarRef) {
      Var t = kb_.newLocal("v", value->type);
      out.push_back(let(t, value));
      value = varRef(t);
    }
    for (BufferId b : targets) out.push_back(store(fn_.buffer(b), at.flatExpr(), value));
    return out;
  }

  std::vector<StmtRef> lowerReduction(const Node& n, const KernelBuilder::Sink& sink) {
    if (const ReductionRow* row = reductionRow(n)) return row->lower(kb_, n, sink);
    kb_.fail(Status::error("internal: no lowering in the dispatch table", nodePlace(n)));
    return {};
  }

  // Output o computed in the loop nest of reduction result v: the accumulator
  // stands for v while o's expression is inlined.
  KernelBuilder::Sink epilogueSink(ValueId o, ValueId v) {
    return [this, o, v](const Index& at, ExprRef value) {
      std::vector<StmtRef> out;
      if (value->kind != ExprKind::VarRef) {
        Var t = kb_.newLocal("v", value->type);
        out.push_back(let(t, value));
        value = varRef(t);
      }
      kb_.substitute(v, value);
      std::vector<int64_t> oShape = shapeOf(o);
      Index oAt = oShape == at.shape ? at : Index::ofFlat(oShape, at.flatExpr());
      ExprRef e = kb_.valueAt(o, oAt);
      std::vector<StmtRef> taps = epilogueTapStores(o, v, at, oAt);
      kb_.clearSubstitution();
      for (StmtRef& s : stores(o, oAt, e)) out.push_back(std::move(s));
      for (StmtRef& s : taps) out.push_back(std::move(s));
      return out;
    };
  }

  struct Root {
    int position;
    ValueId value;
    bool reduction;
  };

  std::vector<Root> roots() const {
    std::vector<Root> rs;
    for (ValueId v : plan_.materialized)
      rs.push_back({position_.at(body_.value(v).producer.index), v, true});
    std::set<int32_t> seen;
    for (ValueId o : outputs_) {
      if (!seen.insert(o.index).second) continue;
      NodeId p = body_.value(o).producer;
      if (p.valid() && computeClassOf(body_.node(p)) == ComputeClass::Reduction) continue;
      rs.push_back({p.valid() ? position_.at(p.index) : -1, o, false});
    }
    std::stable_sort(rs.begin(), rs.end(),
                     [](const Root& a, const Root& b) { return a.position < b.position; });
    return rs;
  }

  std::vector<StmtRef> emitRoots() {
    std::vector<StmtRef> stmts;
    std::vector<Root> rs = roots();
    for (size_t i = 0; i < rs.size();) {
      const Root& r = rs[i];
      auto fusedIt = plan_.epilogueOf.find(r.value.index);
      std::vector<StmtRef> nest;
      if (r.reduction) {
        nest = lowerReduction(
            body_.node(body_.value(r.value).producer),
            [this, v = r.value](const Index& at, ExprRef value) { return stores(v, at, value); });
        ++i;
      } else if (fusedIt != plan_.epilogueOf.end()) {
        ValueId v = fusedIt->second;
        nest = lowerReduction(body_.node(body_.value(v).producer), epilogueSink(r.value, v));
        ++i;
      } else {
        nest = elementwiseNest(rs, i);
      }
      for (StmtRef& s : nest) stmts.push_back(std::move(s));
    }
    return stmts;
  }

  // One nest for the plain outputs rs[i..] that share a shape; advances i past them.
  std::vector<StmtRef> elementwiseNest(const std::vector<Root>& rs, size_t& i) {
    std::vector<int64_t> shape = shapeOf(rs[i].value);
    std::vector<ValueId> group;
    for (; i < rs.size() && !rs[i].reduction && !plan_.epilogueOf.count(rs[i].value.index) &&
           shapeOf(rs[i].value) == shape;
         ++i)
      group.push_back(rs[i].value);
    return kb_.loopNest(
        shape,
        [&](const Index& at) {
          std::vector<StmtRef> out;
          for (ValueId o : group)
            for (StmtRef& s : stores(o, at, kb_.valueAt(o, at))) out.push_back(std::move(s));
          return out;
        },
        transposeOrder(shape));
  }

  // The 4-D nests of a group holding a FromNCHWc run (n, h, c, w), not
  // (n, c, h, w): a nest reading NCHW<b>c back then reads one row of blocks
  // (W * b floats, in L1) for every c instead of streaming the whole blocked
  // tensor once per channel; a plain NCHW nest beside it stays contiguous in w.
  std::vector<size_t> transposeOrder(const std::vector<int64_t>& shape) const {
    if (shape.size() != 4) return {};
    for (NodeId id : body_.nodeIds())
      if (body_.node(id).op == "FromNCHWc") return {0, 2, 1, 3};
    return {};
  }

  // ---- taps ----
  // Where each tap is stored, so that no loop of the group's own outputs changes:
  //   a materialized reduction result  -> one more target of its existing store;
  //   a fused accumulator, or a value computed inline from one -> a store beside
  //     the epilogue's (the accumulator exists nowhere else);
  //   any other inlined value -> a nest of its own after the outputs' nests,
  //     computing the same expression (inlining builds it the same way).
  Status placeTaps() {
    for (ValueId t : taps_) {
      const Value& val = body_.value(t);
      auto cannot = [&](const std::string& why) {
        return Status::error("'" + val.name + "' cannot be tapped: " + why);
      };
      if (!val.producer.valid()) return cannot("it is not computed inside the group");
      const Node& p = body_.node(val.producer);
      std::optional<ValueId> acc = fusedAccumulatorOf(body_, plan_, t);
      if (acc) {
        ValueId owner;
        for (const auto& [o, a] : plan_.epilogueOf)
          if (a == *acc) owner = ValueId(o);
        if (numel(shapeOf(t)) != numel(shapeOf(owner)))
          return cannot("it is computed inside the epilogue of '" + body_.value(owner).name +
                        "' at positions that output does not cover");
        epilogueTaps_[owner.index].push_back(t);
        continue;
      }
      switch (computeClassOf(p)) {
        case ComputeClass::Reduction:
          // Its nest stores it (a temp, or through the builder's output sink).
          if (p.outputs[0] == t && !outBufs_.count(t.index))
            return cannot("its " + p.op + " result is never stored by the group");
          outBufs_[t.index].push_back(tapBufs_.at(t.index));
          break;
        case ComputeClass::Elementwise:
        case ComputeClass::IndexMap:
        case ComputeClass::Injective:
          nestTaps_.push_back(t);
          break;
        default:
          return cannot(p.op + " has no lowering that can store it");
      }
    }
    return Status::ok();
  }

  // Inside the epilogue of output o, while `acc` stands for the accumulator.
  std::vector<StmtRef> epilogueTapStores(ValueId o, ValueId acc, const Index& accAt,
                                         const Index& oAt) {
    std::vector<StmtRef> out;
    auto it = epilogueTaps_.find(o.index);
    if (it == epilogueTaps_.end()) return out;
    for (ValueId t : it->second) {
      std::vector<int64_t> shape = shapeOf(t);
      const Index& from = t == acc ? accAt : oAt;
      Index at = shape == from.shape ? from : Index::ofFlat(shape, from.flatExpr());
      out.push_back(store(fn_.buffer(tapBufs_.at(t.index)), at.flatExpr(), kb_.valueAt(t, at)));
    }
    return out;
  }

  std::vector<StmtRef> tapNests() {
    std::vector<StmtRef> out;
    for (ValueId t : nestTaps_) {
      BufferId b = tapBufs_.at(t.index);
      for (StmtRef& s : kb_.loopNest(shapeOf(t), [&](const Index& at) {
             return std::vector<StmtRef>{store(fn_.buffer(b), at.flatExpr(), kb_.valueAt(t, at))};
           }))
        out.push_back(std::move(s));
    }
    return out;
  }

  static int64_t numel(const std::vector<int64_t>& shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }

  const Graph& body_;
  LoopFunc& fn_;
  KernelBuilder kb_;
  std::vector<ValueId> outputs_;  // the group's own outputs
  std::vector<ValueId> taps_;     // further body outputs that are taps
  std::map<int32_t, BufferId> tapBufs_;
  std::map<int32_t, std::vector<ValueId>> epilogueTaps_;  // kernel output -> taps in its nest
  std::vector<ValueId> nestTaps_;                         // taps with a nest of their own
  BufferNames names_;
  std::vector<NodeId> order_;
  std::map<int32_t, int> position_;
  FusionPlan plan_;
  std::map<int32_t, std::vector<BufferId>> outBufs_;
};

}  // namespace

Expected<LoopFunc> lowerKernel(const Graph& g, const Node& n, const std::string& name,
                               const Schedule& sched) {
  LoopFunc fn;
  fn.name = name;
  bool fusedGroup = n.op == kFusedOp && n.domain == kFuseLensDomain;
  if (fusedGroup && !n.body) return Status::error("the fused group has no body", nodePlace(n));
  if (fusedGroup) {
    const Graph& body = *n.body;
    if (body.inputs().size() != n.inputs.size() || body.outputs().size() != n.outputs.size())
      return Status::error("the group body has " + std::to_string(body.inputs().size()) +
                               " inputs and " + std::to_string(body.outputs().size()) +
                               " outputs, the node " + std::to_string(n.inputs.size()) + " and " +
                               std::to_string(n.outputs.size()),
                           nodePlace(n));
    for (ValueId v : n.inputs)
      if (!v.valid()) return Status::error("a fused group cannot omit an input", nodePlace(n));
    BodyLowering bl(body, fn, sched, tapOutputCount(n));
    bl.setOuterConstants(g, n);
    FL_RETURN_IF_ERROR(bl.run());
    return fn;
  }
  if (computeClassOf(n) == ComputeClass::Unsupported)
    return Status::error("no code generation for op " + n.op, nodePlace(n));
  Graph body = singleOpBody(g, n);
  BodyLowering bl(body, fn, sched);
  bl.setOuterConstants(g, n);
  FL_RETURN_IF_ERROR(bl.run());
  return fn;
}

}  // namespace fuselens
