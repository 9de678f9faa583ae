// The default schedule: a parallel outermost loop for nests with enough work,
// vectorized innermost loops that store contiguously and carry no reduction,
// MatMul tiling sized for the host; and the JSON form of a schedule.
#include "codegen/schedule.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "codegen/target.h"

namespace fuselens {

std::optional<int64_t> strideIn(const ExprRef& e, VarId v) {
  switch (e->kind) {
    case ExprKind::IntConst:
      return 0;
    case ExprKind::VarRef:
      return e->var == v ? 1 : 0;
    case ExprKind::Binary: {
      auto a = strideIn(e->ops[0], v), b = strideIn(e->ops[1], v);
      if (!a || !b) return std::nullopt;
      if (e->bin == BinOp::Add) return *a + *b;
      if (e->bin == BinOp::Sub) return *a - *b;
      if (e->bin == BinOp::Mul) {
        if (e->ops[1]->kind == ExprKind::IntConst) return *a * e->ops[1]->i;
        if (e->ops[0]->kind == ExprKind::IntConst) return *b * e->ops[0]->i;
      }
      // Div, Mod, Max, Min: affine only when v does not occur.
      if (*a == 0 && *b == 0) return 0;
      return std::nullopt;
    }
    default:
      return std::nullopt;  // loads and float math: not index arithmetic
  }
}

namespace {

bool hasLoop(const StmtRef& s) {
  if (s->kind == StmtKind::For) return true;
  for (const auto& c : s->body)
    if (hasLoop(c)) return true;
  return false;
}

// Iterations of the innermost statements, a rough measure of a nest's work.
int64_t work(const StmtRef& s) {
  int64_t sum = s->body.empty() ? 1 : 0;
  for (const auto& c : s->body) sum += work(c);
  return s->kind == StmtKind::For ? s->extent * sum : sum;
}

// An innermost loop whose every store is contiguous in its counter and whose
// body updates no local declared outside it (that would be a reduction).
bool vectorizable(const StmtRef& loop) {
  std::set<int32_t> declared;
  bool anyStore = false;
  for (const auto& s : loop->body) {
    if (s->kind == StmtKind::Let) declared.insert(s->var.index);
    if (s->kind == StmtKind::Assign && !declared.count(s->var.index)) return false;
    if (s->kind == StmtKind::Store) {
      auto stride = strideIn(s->index, loop->var);
      if (!stride || *stride != 1) return false;
      anyStore = true;
    }
  }
  return anyStore;
}

void visit(const StmtRef& s, const Schedule& sched, int depth) {
  if (s->kind == StmtKind::For && s->pinned) return;
  if (s->kind == StmtKind::For) {
    bool inner = !std::any_of(s->body.begin(), s->body.end(), hasLoop);
    if (depth == 0 && sched.parallelOuter && s->extent >= 2 && work(s) >= sched.parallelMinWork)
      s->forKind = ForKind::Parallel;
    else if (inner && sched.vectorizeInner && vectorizable(s))
      s->forKind = ForKind::Vectorized;
    else
      s->forKind = ForKind::Serial;
  }
  for (const auto& c : s->body) visit(c, sched, depth + (s->kind == StmtKind::For ? 1 : 0));
}

}  // namespace

void applySchedule(LoopFunc& f, const Schedule& s) {
  if (f.body) visit(f.body, s, 0);
}

Schedule Schedule::defaultsFor(const CpuTarget& t) {
  Schedule s;
  // 32 vector registers with AVX-512: an 8 x 2-vector tile is 16 accumulators,
  // leaving room for B and broadcasts. 16 registers with AVX2: 6 x 2 vectors.
  int lanes = std::max(4, t.vectorLanes());
  s.matmul.nr = 2 * lanes;
  s.matmul.mr = t.vectorBits >= 512 ? 8 : 6;
  s.reduceLanes = lanes;
  return s;
}

Schedule Schedule::defaults() { return defaultsFor(hostTarget()); }

std::string Schedule::toJson() const {
  nlohmann::json j = {{"name", name},
                      {"parallel_outer", parallelOuter},
                      {"parallel_min_work", parallelMinWork},
                      {"vectorize_inner", vectorizeInner},
                      {"reduce_lanes", reduceLanes},
                      {"matmul",
                       {{"enabled", matmul.enabled},
                        {"mr", matmul.mr},
                        {"nr", matmul.nr},
                        {"nc_panels", matmul.ncPanels},
                        {"min_work", matmul.minWork},
                        {"rows_outer", matmul.rowsOuter}}}};
  return j.dump();
}

Expected<Schedule> scheduleFromJson(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Status::error("a schedule must be a JSON object");
  Schedule s;
  try {
    s.name = j.value("name", s.name);
    s.parallelOuter = j.value("parallel_outer", s.parallelOuter);
    s.parallelMinWork = j.value("parallel_min_work", s.parallelMinWork);
    s.vectorizeInner = j.value("vectorize_inner", s.vectorizeInner);
    s.reduceLanes = j.value("reduce_lanes", s.reduceLanes);
    if (j.contains("matmul")) {
      const auto& m = j["matmul"];
      s.matmul.enabled = m.value("enabled", s.matmul.enabled);
      s.matmul.mr = m.value("mr", s.matmul.mr);
      s.matmul.nr = m.value("nr", s.matmul.nr);
      s.matmul.ncPanels = m.value("nc_panels", s.matmul.ncPanels);
      s.matmul.minWork = m.value("min_work", s.matmul.minWork);
      s.matmul.rowsOuter = m.value("rows_outer", s.matmul.rowsOuter);
    }
  } catch (const nlohmann::json::exception& e) {
    return Status::error(std::string("bad schedule field: ") + e.what());
  }
  if (s.reduceLanes < 0 || s.reduceLanes > 64)
    return Status::error("reduce_lanes " + std::to_string(s.reduceLanes) + " is outside 0..64");
  if (s.matmul.mr < 1 || s.matmul.mr > 32 || s.matmul.nr < 1 || s.matmul.nr > 64)
    return Status::error("matmul tile " + std::to_string(s.matmul.mr) + "x" +
                         std::to_string(s.matmul.nr) + " is outside 1..32 x 1..64");
  return s;
}

}  // namespace fuselens
