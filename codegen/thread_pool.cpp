// A minimal fork-join pool for the Parallel loops of compiled kernels. Workers
// take chunks under one mutex (chunks are few and large, so the lock is cheap),
// which keeps the protocol obviously right: a worker that wakes late simply
// finds no chunk left. One loop runs on the pool at a time; a concurrent caller
// (a second module running on another thread) runs its loop serially instead
// of waiting.
//
// Between loops a worker spins for a short while before it sleeps: compiled
// models run many short parallel loops back to back (20-250 us each), and a
// worker woken through the condition variable arrives after the caller has
// taken most of the chunks, which halves the second thread's use.
#include <algorithm>
#include <chrono>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "codegen/runtime.h"

namespace {

std::atomic<int> gMaxThreads{0};

class ThreadPool {
 public:
  static ThreadPool& instance() {
    static ThreadPool pool(std::max(1u, std::thread::hardware_concurrency()) - 1);
    return pool;
  }

  ~ThreadPool() {
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
    }
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
    {
      std::lock_guard<std::mutex> lock(m_);
      body_ = body;
      ctx_ = ctx;
      n_ = n;
      int64_t threads = int64_t(workers_.size() + 1);
      if (cap > 1) threads = std::min<int64_t>(threads, cap);
      chunks_ = std::min<int64_t>(n, threads * 4);
      next_ = 0;
      finished_ = 0;
    }
    generation_.fetch_add(1, std::memory_order_release);
    work_.notify_all();
    while (runOneChunk()) {
    }
    std::unique_lock<std::mutex> lock(m_);
    done_.wait(lock, [&] { return finished_ == chunks_; });
    chunks_ = 0;
  }

 private:
  explicit ThreadPool(unsigned workers) {
    for (unsigned i = 0; i < workers; ++i)
      workers_.emplace_back([this] {
        uint64_t seen = generation_.load(std::memory_order_acquire);
        for (;;) {
          spinForWork(seen);
          {
            std::unique_lock<std::mutex> lock(m_);
            work_.wait(lock, [&] { return stop_ || next_ < chunks_; });
            if (stop_) return;
          }
          seen = generation_.load(std::memory_order_acquire);
          while (runOneChunk()) {
          }
        }
      });
  }

  // Waits up to kSpin for the next loop to be posted without sleeping.
  void spinForWork(uint64_t seen) const {
    constexpr auto kSpin = std::chrono::microseconds(200);
    const auto until = std::chrono::steady_clock::now() + kSpin;
    while (generation_.load(std::memory_order_acquire) == seen && std::chrono::steady_clock::now() < until)
      std::this_thread::yield();
  }

  // Takes and runs one chunk of the current loop; false when none is left.
  bool runOneChunk() {
    FuseLensLoopBody body;
    void** ctx;
    int64_t lo, hi;
    {
      std::lock_guard<std::mutex> lock(m_);
      if (next_ >= chunks_) return false;
      int64_t c = next_++;
      lo = n_ * c / chunks_;
      hi = n_ * (c + 1) / chunks_;
      body = body_;
      ctx = ctx_;
    }
    if (lo < hi) body(ctx, lo, hi);
    std::lock_guard<std::mutex> lock(m_);
    if (++finished_ == chunks_) done_.notify_all();
    return true;
  }

  std::mutex dispatch_;
  std::mutex m_;
  std::condition_variable work_, done_;
  std::vector<std::thread> workers_;
  FuseLensLoopBody body_ = nullptr;
  void** ctx_ = nullptr;
  int64_t n_ = 0, chunks_ = 0, next_ = 0, finished_ = 0;
  bool stop_ = false;
  std::atomic<uint64_t> generation_{0};  // bumped for every loop posted
};

}  // namespace

extern "C" void fuselens_set_max_threads(int n) { gMaxThreads.store(std::max(0, n)); }

extern "C" void fuselens_parallel_for(FuseLensLoopBody body, void** ctx, int64_t n) {
  ThreadPool::instance().run(body, ctx, n);
}
