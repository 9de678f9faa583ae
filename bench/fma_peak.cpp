#include "fma_peak.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

namespace {

// Independent chains: enough to cover FMA latency x ports (deep pipelines
// need more than 8), within the register file (32 zmm, 16 ymm).
constexpr int kAcc512 = 24, kAcc256 = 12;
constexpr long kIters =
    1L << 23;  // ~200 M vector FMAs per thread per trial: long enough for the clock to settle

// Returns a value that depends on every accumulator so the loop is not removed.
__attribute__((target("avx512f"))) float run512(float seed) {
  __m512 acc[kAcc512];
  for (int i = 0; i < kAcc512; ++i) acc[i] = _mm512_set1_ps(seed + float(i));
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (long it = 0; it < kIters; ++it)
#pragma GCC unroll 24  // every accumulator in a register, not the stack
    for (int i = 0; i < kAcc512; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  __m512 s = acc[0];
  for (int i = 1; i < kAcc512; ++i) s = _mm512_add_ps(s, acc[i]);
  alignas(64) float out[16];
  _mm512_store_ps(out, s);
  return out[0] + out[15];
}

__attribute__((target("avx2,fma"))) float run256(float seed) {
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

}  // namespace

double measureFmaPeakGflops(int threads) {
  __builtin_cpu_init();
  int lanes = __builtin_cpu_supports("avx512f") ? 16 : __builtin_cpu_supports("fma") ? 8 : 0;
  if (lanes == 0) return 0;
  threads = std::max(1, threads);
  double best = 0;
  for (int trial = 0; trial < 3; ++trial) {  // best of three: the peak is an upper bound
    // Each thread times itself, so thread start-up skew does not count.
    std::vector<double> rate(static_cast<size_t>(threads), 0.0);
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t)
      ts.emplace_back([&, t] {
        auto t0 = std::chrono::steady_clock::now();
        volatile float keep = lanes == 16 ? run512(float(t)) : run256(float(t));
        (void)keep;
        double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        rate[size_t(t)] =
            2.0 * lanes * (lanes == 16 ? kAcc512 : kAcc256) * double(kIters) / s / 1e9;
      });
    for (auto& t : ts) t.join();
    double sum = 0;
    for (double r : rate) sum += r;
    best = std::max(best, sum);
  }
  return best;
}
