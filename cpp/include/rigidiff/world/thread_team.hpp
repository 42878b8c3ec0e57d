// A fixed team of helper threads for loops run many times on small work: the per-element loops of a projective
// world (hundreds per step: the local projections at every iteration, the Hessian's products at every conjugate
// gradient iteration) and the step Jacobians of a trajectory's knots (knot_jacobians.hpp, at every iLQR
// iteration). Starting threads for each loop cost more than the loop on small meshes; the team's helpers start
// once and sleep between loops.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace rigidiff {

class ThreadTeam {
 public:
  /// A team of `threads` threads in all: the caller of run and threads - 1 helpers (none below 2).
  explicit ThreadTeam(int threads) : size_(std::max(1, threads)) {
    for (int k = 1; k < size_; ++k) {
      try {
        helpers_.emplace_back([this, k] { helperLoop(k); });
      } catch (...) {  // no more threads: the ones started and the caller share the work
        break;
      }
    }
  }

  ~ThreadTeam() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : helpers_) t.join();
  }

  ThreadTeam(const ThreadTeam&) = delete;
  ThreadTeam& operator=(const ThreadTeam&) = delete;

  /// The thread count asked for at construction.
  int size() const { return size_; }

  /// Calls body(begin, end) over chunks of [0, n) taken from a shared counter by the caller and the helpers,
  /// and returns once every chunk is done and no helper touches body any more. body must not throw. Returns
  /// false without calling body when the team is already running a loop (a nested or concurrent call): the
  /// caller then runs its loop alone. body is called through a plain function pointer: a loop allocates nothing.
  template <class Body>
  bool tryRun(int n, const Body& body) {
    const auto each = [&body](int, int begin, int end) { body(begin, end); };
    return tryRunWorkers(n, 0, each);
  }

  /// tryRun with body(worker, begin, end), worker in [0, size()) naming the thread (0: the caller) so that
  /// each can use buffers of its own, and chunks of `chunk` items (0: about eight per thread). The chunks are
  /// claimed in increasing order: a thread may wait for an item of an earlier chunk, which is claimed already.
  template <class Body>
  bool tryRunWorkers(int n, int chunk, const Body& body) {
    std::unique_lock<std::mutex> turn(turn_, std::try_to_lock);
    if (!turn) return false;
    if (chunk <= 0) chunk = std::max(1, n / (8 * size_));  // about eight chunks per thread: balance against claiming
    const Call call = [](const void* context, int worker, int begin, int end) {
      (*static_cast<const Body*>(context))(worker, begin, end);
    };
    {
      std::lock_guard<std::mutex> lock(mutex_);
      call_ = call;
      context_ = &body;
      n_ = n;
      chunk_ = chunk;
      next_.store(0);
      open_ = true;
      ++generation_;
    }
    wake_.notify_all();
    work(call, &body, 0, n, chunk);
    std::unique_lock<std::mutex> lock(mutex_);
    // a helper joins a loop only while it is open, under this mutex: once none is in it, none can come
    idle_.wait(lock, [this] { return active_ == 0; });
    open_ = false;
    context_ = nullptr;
    return true;
  }

 private:
  using Call = void (*)(const void* context, int worker, int begin, int end);

  void work(Call call, const void* context, int worker, int n, int chunk) {
    for (int begin = next_.fetch_add(chunk); begin < n; begin = next_.fetch_add(chunk))
      call(context, worker, begin, std::min(n, begin + chunk));
  }

  void helperLoop(int worker) {
    long seen = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return stop_ || (open_ && generation_ != seen); });
      if (stop_) return;
      seen = generation_;
      ++active_;
      const Call call = call_;
      const void* context = context_;
      const int n = n_, chunk = chunk_;
      lock.unlock();
      work(call, context, worker, n, chunk);
      lock.lock();
      if (--active_ == 0) idle_.notify_all();
    }
  }

  const int size_;
  std::vector<std::thread> helpers_;
  std::mutex turn_;   ///< held by the loop running (one at a time)
  std::mutex mutex_;  ///< guards everything below but next_
  std::condition_variable wake_, idle_;
  bool stop_ = false, open_ = false;
  long generation_ = 0;  ///< loops started
  int active_ = 0;       ///< helpers inside the open loop
  Call call_ = nullptr;  ///< the open loop's body, called on context_
  const void* context_ = nullptr;
  int n_ = 0, chunk_ = 1;
  std::atomic<int> next_{0};  ///< first unclaimed item of the open loop
};

}  // namespace rigidiff
