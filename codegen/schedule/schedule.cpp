// The default schedule's presets (MatMul tiling sized for the host), index
// stride analysis, and the JSON form of a schedule. The default steps live in
// schedule_defaults.cpp.
#include "codegen/schedule/schedule.h"

#include <algorithm>
#include <cstdlib>
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

Schedule Schedule::defaults() {
  Schedule s = defaultsFor(codegenTarget());
  // FUSELENS_WINOGRAD=0: every 3x3 conv runs the direct nest, to tell a
  // divergence of Winograd's summation order from any other.
  if (const char* e = std::getenv("FUSELENS_WINOGRAD"); e && std::string(e) == "0")
    s.conv.winograd = false;
  return s;
}

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
  // Fields newer than the first logs are written only when set, so older
  // readers and golden manifests see the schedule they know.
  if (!computeAtRows) j["compute_at_rows"] = false;
  if (shapeStable) j["shape_stable"] = true;
  if (threads) j["threads"] = threads;
  if (conv.pixels || conv.ocBlocks || !conv.winograd) {
    j["conv"] = nlohmann::json::object();
    if (conv.pixels) j["conv"]["pixels"] = conv.pixels;
    if (conv.ocBlocks) j["conv"]["oc_blocks"] = conv.ocBlocks;
    if (!conv.winograd) j["conv"]["winograd"] = false;
  }
  if (!steps.empty()) {
    j["steps"] = nlohmann::json::array();
    for (const ScheduleStep& st : steps) {
      nlohmann::json o = {{"op", st.op}};
      if (!st.loop.empty()) o["loop"] = st.loop;
      if (!st.loops.empty()) o["loops"] = st.loops;
      if (st.factor) o["factor"] = st.factor;
      if (!st.buffer.empty()) o["buffer"] = st.buffer;
      j["steps"].push_back(o);
    }
  }
  return j.dump();
}

namespace {

// Every schedule field is an integer, a bool or a string. A float read as an
// integer is an out-of-range cast inside the JSON library when large (UB, found
// by fuzz_tuning_log), so a log holding one is refused before anything is read.
bool holdsFloat(const nlohmann::json& j) {
  if (j.is_number_float()) return true;
  if (j.is_structured())
    for (const auto& item : j)
      if (holdsFloat(item)) return true;
  return false;
}

}  // namespace

Expected<Schedule> scheduleFromJson(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Status::error("a schedule must be a JSON object");
  if (holdsFloat(j))
    return Status::error(
        "bad schedule field: a number with a fraction or an exponent; schedule fields are "
        "integers");
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
    s.computeAtRows = j.value("compute_at_rows", s.computeAtRows);
    s.shapeStable = j.value("shape_stable", s.shapeStable);
    s.threads = j.value("threads", s.threads);
    if (j.contains("conv")) {
      const auto& c = j["conv"];
      if (!c.is_object()) return Status::error("schedule \"conv\" must be a JSON object");
      s.conv.pixels = c.value("pixels", s.conv.pixels);
      s.conv.ocBlocks = c.value("oc_blocks", s.conv.ocBlocks);
      s.conv.winograd = c.value("winograd", s.conv.winograd);
    }
    if (j.contains("steps")) {
      if (!j["steps"].is_array()) return Status::error("schedule \"steps\" must be a JSON array");
      for (const auto& o : j["steps"]) {
        if (!o.is_object() || !o.contains("op"))
          return Status::error("a schedule step must be an object with an \"op\"");
        ScheduleStep st;
        st.op = o.at("op").get<std::string>();
        st.loop = o.value("loop", std::string());
        st.loops = o.value("loops", std::vector<std::string>());
        st.factor = o.value("factor", int64_t(0));
        st.buffer = o.value("buffer", std::string());
        s.steps.push_back(std::move(st));
      }
    }
  } catch (const nlohmann::json::exception& e) {
    return Status::error(std::string("bad schedule field: ") + e.what());
  }
  if (s.reduceLanes < 0 || s.reduceLanes > 64)
    return Status::error("reduce_lanes " + std::to_string(s.reduceLanes) + " is outside 0..64");
  if (s.matmul.mr < 1 || s.matmul.mr > 32 || s.matmul.nr < 1 || s.matmul.nr > 64)
    return Status::error("matmul tile " + std::to_string(s.matmul.mr) + "x" +
                         std::to_string(s.matmul.nr) + " is outside 1..32 x 1..64");
  if (s.conv.pixels < 0 || s.conv.pixels > 32)
    return Status::error("conv pixels " + std::to_string(s.conv.pixels) +
                         " is outside 0..32 (0 keeps the automatic tile)");
  if (s.conv.ocBlocks < 0 || s.conv.ocBlocks > 8)
    return Status::error("conv oc_blocks " + std::to_string(s.conv.ocBlocks) +
                         " is outside 0..8 (0 keeps the automatic tile)");
  if (s.threads < 0 || s.threads > 1)
    return Status::error("threads " + std::to_string(s.threads) + " must be 0 (the pool) or 1");
  static const std::set<std::string> kOps = {"split",    "reorder",    "fuse",   "vectorize",
                                             "parallel", "unroll",     "serial", "compute_at",
                                             "inline",   "cache_local"};
  for (const ScheduleStep& st : s.steps)
    if (!kOps.count(st.op)) return Status::error("unknown schedule step '" + st.op + "'");
  return s;
}

}  // namespace fuselens
