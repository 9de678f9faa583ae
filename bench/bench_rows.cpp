// The result table, timing helpers and Session plumbing shared by every
// benchmark family; see bench_rows.h.
#include "bench_rows.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <random>
#include <thread>

namespace fuselens::bench {

int gThreads = 2;
bool gQuick = false;
double gCopy = 0;
double gPeak = 0;
nlohmann::json gJson = nlohmann::json::object();

namespace {

void dumpModule(const CompiledModule& m) {
  const char* dir = std::getenv("FUSELENS_BENCH_DUMP");
  if (!dir) return;
  static int n = 0;
  std::string base = std::string(dir) + "/m" + std::to_string(n++);
  std::ofstream(base + ".loop") << m.loopIrText();
  std::ofstream(base + ".ll") << m.llvmIrText();
}

void mustSucceed(const Status& s, const char* what) {
  if (s) return;
  std::fprintf(stderr, "%s failed: %s\n", what, s.message().c_str());
  std::exit(1);
}

}  // namespace

void printHeader() {
  std::printf("%-44s %10s %-8s %-22s %7s %s\n", "benchmark", "value", "unit", "vs", "ratio",
              "note");
}

void addRow(const Row& r) {
  double ratio = r.reference > 0 ? r.value / r.reference : 0;
  std::string percent = r.reference > 0 ? std::to_string(int(ratio * 100 + 0.5)) + "%" : "";
  std::printf("%-44s %10.2f %-8s %-22s %7s %s\n", r.name.c_str(), r.value, r.metric.c_str(),
              r.refName.c_str(), percent.c_str(), r.note.c_str());
  std::fflush(stdout);
  gJson["rows"].push_back({{"name", r.name},
                           {"metric", r.metric},
                           {"value", r.value},
                           {"reference", r.refName},
                           {"reference_value", r.reference},
                           {"ratio", ratio},
                           {"note", r.note}});
}

std::string ofPeak(double gflops) {
  if (gPeak <= 0) return "";
  return "; " + std::to_string(int(100 * gflops / gPeak + 0.5)) + "% of the measured FMA peak";
}

double secondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double medianSeconds(const std::function<void()>& f, int runs) {
  f();  // warm-up
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    auto t0 = Clock::now();
    f();
    t.push_back(secondsSince(t0));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void parallelRange(int64_t n, const std::function<void(int64_t, int64_t)>& f) {
  std::vector<std::thread> ts;
  for (int t = 1; t < gThreads; ++t)
    ts.emplace_back([&, t] { f(n * t / gThreads, n * (t + 1) / gThreads); });
  f(0, n / gThreads);
  for (auto& t : ts) t.join();
}

bool writeModel(const std::string& script, const std::string& args, const std::string& out) {
  std::string path = std::string(FUSELENS_SOURCE_DIR) + "/bench/" + script;
  return std::system(("python3 " + path + " " + args + " --out " + out + " 2>/dev/null").c_str()) ==
         0;
}

TensorData randomTensor(const std::vector<int64_t>& shape, uint32_t seed) {
  TensorData t(DType::F32, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = d(rng);
  return t;
}

TensorType f32(const std::vector<int64_t>& shape) { return TensorType::of(DType::F32, shape); }

ValueId scalar(Graph& g, float v, const std::string& name) {
  return g.addConstant(name, std::make_shared<const TensorData>(
                                 TensorData::fromVector(DType::F32, {}, std::vector<float>{v})));
}

Status compileModule(Session& s) {
  FL_RETURN_IF_ERROR(s.compile());
  dumpModule(*s.compiled());
  return Status::ok();
}

const CompiledModule& compileGraphIn(Session& s, Graph g, const std::string& label,
                                     const std::string& pipeline) {
  mustSucceed(s.open(std::move(g), label), ("open " + label).c_str());
  if (!pipeline.empty()) mustSucceed(s.optimize(pipeline), ("pipeline on " + label).c_str());
  mustSucceed(compileModule(s), ("compile " + label).c_str());
  return *s.compiled();
}

double timeModule(const CompiledModule& m, const std::map<std::string, TensorData>& in, int runs) {
  std::map<std::string, TensorData> out;
  return medianSeconds([&] { mustSucceed(m.runInto(in, out), "run"); }, runs);
}

}  // namespace fuselens::bench
