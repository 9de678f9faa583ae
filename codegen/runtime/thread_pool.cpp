// A minimal fork-join pool for the Parallel loops of compiled kernels.
//
// Compiled models run many short parallel loops back to back (20-250 us each),
// so the cost that matters is how soon the second thread starts and how soon
// the caller sees the loop finished, not throughput of the bookkeeping:
//
//   caller:  post (gen, chunk 0) -> run chunks -> spin (<= kDoneSpin), then
//            sleep on `finished` until it reaches the chunk count
//   worker:  spin on gen (<= kIdleSpin) -> claim chunks by CAS -> finished += 1
//            ... then sleep on a condition variable until the next post
//
// Spinning yields the core on every turn: on a loaded machine the caller and
// a worker may share one core, and a worker spinning on `pause` for 200 us
// holds it while the caller waits to run (the bench CNN at 2 threads went
// from 1.6 ms to 6.5 ms at the median with the machine's load near 8).
//
// Each participant (the caller is slot 0, worker i slot i + 1, workers past
// the thread cap sit out) owns a contiguous run of the loop's chunks and takes
// them from the front; one that runs out steals from the back of another's.
// The same thread thus gets the same rows in consecutive kernels, and finds
// them in its own L2: the bench CNN at 2 threads ran 1.15 ms with chunks
// handed out round-robin from one counter and 1.06 ms with owned runs.
// Several chunks per slot still let a thread that arrives late (the machine
// is shared) lose only what the others steal from it.
//
// A slot's word holds the loop's generation and its [front, back) chunk
// range, and every claim is one compare-and-swap on it, so a worker that
// wakes late, after its loop ended and the next one was posted, cannot take
// a chunk of a loop it did not read: its CAS names the old generation and
// fails. The loop's parameters are read only after a successful claim; the
// loop cannot end (and the caller cannot overwrite them) while a claimed
// chunk is running. One loop runs on the pool at a time; a concurrent caller
// (a second module running on another thread) runs its loop serially instead
// of waiting.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "codegen/runtime/runtime.h"

namespace {

std::atomic<int> gMaxThreads{0};

class ThreadPool {
 public:
  static ThreadPool& instance() {
    static ThreadPool pool(std::max(1u, std::thread::hardware_concurrency()) - 1);
    return pool;
  }

  ~ThreadPool() {
    stop_.store(true);
    { std::lock_guard<std::mutex> lock(m_); }
    work_.notify_all();
    for (auto& t : workers_) t.join();
  }

  void run(FuseLensLoopBody body, void** ctx, int64_t n) {
    int cap = gMaxThreads.load(std::memory_order_relaxed);
    if (cap == 1) {
      body(ctx, 0, n);
      return;
    }
    std::unique_lock<std::mutex> busy(dispatch_, std::try_to_lock);
    if (!busy.owns_lock() || workers_.empty() || n < 2) {
      body(ctx, 0, n);
      return;
    }
    int64_t threads = int64_t(workers_.size() + 1);
    if (cap > 1) threads = std::min<int64_t>(threads, cap);
    body_ = body;
    ctx_ = ctx;
    n_ = n;
    const int64_t chunks = std::min<int64_t>({n, threads * kChunksPerSlot, kMaxChunks});
    chunks_ = chunks;
    finished_.store(0, std::memory_order_relaxed);
    const uint32_t gen = genOf(state_.load(std::memory_order_relaxed)) + 1;
    for (int64_t t = 0; t < threads; ++t)
      slots_[t].word.store(pack(gen, chunks * t / threads, chunks * (t + 1) / threads),
                           std::memory_order_relaxed);
    state_.store(uint64_t(gen) << 32 | uint64_t(threads));  // seq_cst: see sleepers_
    // Sleeping workers: taking the mutex orders this post before their next
    // predicate check, so no wake-up is lost.
    if (sleepers_.load() > 0) {
      { std::lock_guard<std::mutex> lock(m_); }
      work_.notify_all();
    }
    while (runOneChunk(gen, 0)) {
    }
    // The other chunks are already running: spin briefly, then sleep until the
    // last one ends.
    const auto until = std::chrono::steady_clock::now() + kDoneSpin;
    for (int i = 0;; ++i) {
      if (finished_.load(std::memory_order_acquire) == chunks) break;
      if ((i & 15) == 15 && std::chrono::steady_clock::now() >= until) {
        std::unique_lock<std::mutex> lock(doneM_);
        callerWaiting_.store(true);  // seq_cst with the worker's count and load
        done_.wait(lock, [&] { return finished_.load() == chunks; });
        callerWaiting_.store(false);
        break;
      }
      std::this_thread::yield();
    }
  }

 private:
  explicit ThreadPool(unsigned workers) : slots_(workers + 1) {
    for (unsigned i = 0; i < workers; ++i)
      workers_.emplace_back([this, slot = int64_t(i) + 1] {
        uint32_t seen = 0;
        for (;;) {
          uint32_t gen = waitForWork(seen);
          if (stop_.load(std::memory_order_acquire)) return;
          seen = gen;
          // Past the thread cap this worker sits the loop out.
          if (slot >= int64_t(state_.load(std::memory_order_acquire) & 0xffff)) continue;
          while (runOneChunk(gen, slot)) {
          }
        }
      });
  }

  static constexpr int64_t kMaxChunks = 0xffff;
  static constexpr int64_t kChunksPerSlot = 4;
  static constexpr auto kDoneSpin = std::chrono::microseconds(50);
  // state_: generation << 32 | participating slots. A slot: generation << 32 |
  // front << 16 | back.
  static uint32_t genOf(uint64_t s) { return uint32_t(s >> 32); }
  static uint64_t pack(uint32_t gen, int64_t front, int64_t back) {
    return uint64_t(gen) << 32 | uint64_t(front) << 16 | uint64_t(back);
  }
  static int64_t frontOf(uint64_t s) { return int64_t((s >> 16) & 0xffff); }
  static int64_t backOf(uint64_t s) { return int64_t(s & 0xffff); }

  // The generation of the next loop posted after `seen`: spins up to kIdleSpin,
  // then sleeps until a post (or stop).
  uint32_t waitForWork(uint32_t seen) {
    constexpr auto kIdleSpin = std::chrono::microseconds(200);
    const auto until = std::chrono::steady_clock::now() + kIdleSpin;
    for (int i = 0;; ++i) {
      uint32_t g = genOf(state_.load(std::memory_order_acquire));
      if (g != seen || stop_.load(std::memory_order_relaxed)) return g;
      if ((i & 15) == 15 && std::chrono::steady_clock::now() >= until) break;
      std::this_thread::yield();
    }
    std::unique_lock<std::mutex> lock(m_);
    sleepers_.fetch_add(1);  // seq_cst with the post's store and load: one of us sees the other
    work_.wait(lock, [&] { return stop_.load() || genOf(state_.load()) != seen; });
    sleepers_.fetch_sub(1);
    return genOf(state_.load(std::memory_order_acquire));
  }

  // Claims one chunk of loop `gen` from `slot`'s front (its owner) or back (a
  // thief); -1 when the slot has none left or belongs to another loop.
  int64_t claim(uint32_t gen, int64_t slot, bool front) {
    std::atomic<uint64_t>& w = slots_[slot].word;
    uint64_t s = w.load(std::memory_order_acquire);
    for (;;) {
      const int64_t f = frontOf(s), b = backOf(s);
      if (genOf(s) != gen || f >= b) return -1;
      const uint64_t next = front ? pack(gen, f + 1, b) : pack(gen, f, b - 1);
      if (w.compare_exchange_weak(s, next, std::memory_order_acq_rel, std::memory_order_acquire))
        return front ? f : b - 1;
    }
  }

  // Runs one chunk of loop `gen`: the next of `slot`'s own, else one stolen
  // from the back of another slot's; false when none is left.
  bool runOneChunk(uint32_t gen, int64_t slot) {
    int64_t c = claim(gen, slot, true);
    if (c < 0) {  // the slot count is read only when stealing: owners stay off state_
      const uint64_t st = state_.load(std::memory_order_acquire);
      const int64_t slots = genOf(st) == gen ? int64_t(st & 0xffff) : 0;
      for (int64_t i = 1; c < 0 && i < slots; ++i) c = claim(gen, (slot + i) % slots, false);
      if (c < 0) return false;
    }
    const int64_t chunks = chunks_, n = n_;
    const int64_t lo = n * c / chunks, hi = n * (c + 1) / chunks;
    if (lo < hi) body_(ctx_, lo, hi);
    if (finished_.fetch_add(1) + 1 == chunks && callerWaiting_.load()) {
      std::lock_guard<std::mutex> lock(doneM_);
      done_.notify_one();
    }
    return true;
  }

  std::mutex dispatch_;  // one loop on the pool at a time
  std::mutex m_;         // guards sleeping only
  std::condition_variable work_;
  std::vector<std::thread> workers_;
  // The current loop; written by the caller before it posts the generation.
  FuseLensLoopBody body_ = nullptr;
  void** ctx_ = nullptr;
  int64_t n_ = 0;
  int64_t chunks_ = 0;
  std::atomic<uint64_t> state_{0};  // generation << 32 | participating slots
  struct alignas(64) Slot {         // a line each: owners claim without sharing
    std::atomic<uint64_t> word{0};
  };
  std::vector<Slot> slots_;
  std::atomic<int64_t> finished_{0};  // chunks done
  std::mutex doneM_;                  // the caller sleeping on `finished_`
  std::condition_variable done_;
  std::atomic<bool> callerWaiting_{false};
  std::atomic<int> sleepers_{0};
  std::atomic<bool> stop_{false};
};

}  // namespace

extern "C" void fuselens_set_max_threads(int n) { gMaxThreads.store(std::max(0, n)); }

extern "C" void fuselens_parallel_for(FuseLensLoopBody body, void** ctx, int64_t n) {
  ThreadPool::instance().run(body, ctx, n);
}
