#include "codegen/runtime/machine_peaks.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace fuselens {
namespace {

// Independent chains to cover FMA latency times ports, within the register file.
constexpr int kAcc512 = 24, kAcc256 = 12;
// ~12 M vector FMAs per thread and trial; several short trials, best kept, so a
// busy machine (a build beside the profile) still shows its peak in one of them.
constexpr long kIters = 1L << 19;
constexpr int kTrials = 8;

__attribute__((target("avx512f"))) float fma512(float seed) {
  __m512 acc[kAcc512];
  for (int i = 0; i < kAcc512; ++i) acc[i] = _mm512_set1_ps(seed + float(i));
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (long it = 0; it < kIters; ++it)
#pragma GCC unroll 24
    for (int i = 0; i < kAcc512; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  __m512 s = acc[0];
  for (int i = 1; i < kAcc512; ++i) s = _mm512_add_ps(s, acc[i]);
  alignas(64) float out[16];
  _mm512_store_ps(out, s);
  return out[0] + out[15];
}

__attribute__((target("avx2,fma"))) float fma256(float seed) {
  __m256 acc[kAcc256];
  for (int i = 0; i < kAcc256; ++i) acc[i] = _mm256_set1_ps(seed + float(i));
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (long it = 0; it < kIters; ++it)
#pragma GCC unroll 12
    for (int i = 0; i < kAcc256; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  __m256 s = acc[0];
  for (int i = 1; i < kAcc256; ++i) s = _mm256_add_ps(s, acc[i]);
  alignas(32) float out[8];
  _mm256_store_ps(out, s);
  return out[0] + out[7];
}

// Runs body(t) on `threads` threads at once; returns the slowest thread's seconds.
template <class F>
double timeThreads(int threads, F body) {
  std::vector<double> secs(size_t(threads), 0.0);
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&, t] {
      auto t0 = std::chrono::steady_clock::now();
      body(t);
      secs[size_t(t)] =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    });
  for (auto& t : ts) t.join();
  return *std::max_element(secs.begin(), secs.end());
}

double fmaPeak(int threads) {
  __builtin_cpu_init();
  int lanes = __builtin_cpu_supports("avx512f") ? 16 : __builtin_cpu_supports("fma") ? 8 : 0;
  if (lanes == 0) return 0;
  double flops = 2.0 * lanes * (lanes == 16 ? kAcc512 : kAcc256) * double(kIters) * threads;
  double best = 0;
  for (int trial = 0; trial < kTrials; ++trial) {  // the best trial: a peak is an upper bound
    double s = timeThreads(threads, [&](int t) {
      volatile float keep = lanes == 16 ? fma512(float(t)) : fma256(float(t));
      (void)keep;
    });
    best = std::max(best, flops / s / 1e9);
  }
  return best;
}

double copyBandwidth(int threads) {
  const size_t n = size_t(16) << 20;  // 16 M floats a side: 128 MB moved per copy
  std::unique_ptr<float[]> a(new float[n]), b(new float[n]);
  std::memset(a.get(), 0, n * sizeof(float));  // touch every page before timing
  std::memset(b.get(), 1, n * sizeof(float));
  double best = 0;
  for (int trial = 0; trial < 6; ++trial) {
    double s = timeThreads(threads, [&](int t) {
      size_t lo = n * size_t(t) / size_t(threads), hi = n * size_t(t + 1) / size_t(threads);
      std::memcpy(a.get() + lo, b.get() + lo, (hi - lo) * sizeof(float));
    });
    if (trial > 0) best = std::max(best, 2.0 * double(n) * sizeof(float) / s / 1e9);  // 0: warm-up
  }
  return best;
}

}  // namespace

const MachinePeaks& machinePeaks(int threads) {
  static std::mutex mu;
  static std::map<int, MachinePeaks> measured;
  threads = std::max(1, threads);
  std::lock_guard<std::mutex> lock(mu);
  auto it = measured.find(threads);
  if (it == measured.end())
    it = measured.emplace(threads, MachinePeaks{fmaPeak(threads), copyBandwidth(threads), threads})
             .first;
  return it->second;
}

}  // namespace fuselens
