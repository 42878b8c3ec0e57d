// Spreading N independent items over threads. Each thread builds its own buffers (allocated on that
// thread, so no two threads write to one cache line of them) and claims blocks of items from a shared
// counter, so that a thread slowed down by the machine's other work takes fewer blocks. An item's
// result depends only on the item, never on the thread or on the items before it, so the results are
// the same whatever the thread count. The shared state is the counter and the tally of finished items.
#pragma once

#include <algorithm>
#include <atomic>
#include <climits>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

namespace rigidiff {

namespace detail {

/// What the caller and the helper threads of one parallelFor share; held by shared_ptr, so that a
/// helper that starts after the call returned finds it alive, finds no block left and exits.
struct ParallelTally {
  std::atomic<long> next{0};  ///< first unclaimed item
  std::mutex mutex;
  std::condition_variable finished;
  long done = 0;               ///< items finished (under mutex)
  long failedAt = LONG_MAX;    ///< lowest failing item (-1: a thread could not build its buffers)
  std::exception_ptr error;    ///< its exception
};

/// The exception of item i, its message prefixed with "batch item i: " (invalid_argument and
/// runtime_error keep their type; any other exception passes unchanged).
inline std::exception_ptr naming(long i, std::exception_ptr error) {
  const std::string prefix = "batch item " + std::to_string(i) + ": ";
  try {
    std::rethrow_exception(error);
  } catch (const std::invalid_argument& e) {
    return std::make_exception_ptr(std::invalid_argument(prefix + e.what()));
  } catch (const std::runtime_error& e) {
    return std::make_exception_ptr(std::runtime_error(prefix + e.what()));
  } catch (...) {
    return error;
  }
}

}  // namespace detail

/// Calls item(*buffers, i) for every i in [0, N) on up to `threads` threads (the caller's among them),
/// where buffers = make() is a std::unique_ptr built on each thread that claims work. Every item runs
/// even when some throw; the exception of the lowest failing item is rethrown, its message naming
/// the item, so which error is reported does not depend on the thread count either. The call returns when every item is done: it
/// never waits for a helper thread that the machine has not yet scheduled (that thread then finds
/// nothing to do), and a helper touches make, item and the buffers only while the call waits for
/// the block it claimed (it frees its buffers before reporting its last block).
template <typename Make, typename Item>
void parallelFor(int N, int threads, const Make& make, const Item& item) {
  if (N <= 0) return;
  threads = std::max(1, std::min(threads, N));
  // about eight blocks per thread: balance against the cost of claiming
  const long block = std::max(1, N / (8 * threads));
  auto tally = std::make_shared<detail::ParallelTally>();
  auto work = [tally, block, N, &make, &item]() {
    long begin = tally->next.fetch_add(block);
    if (begin >= N) return;  // all claimed (perhaps long ago: touch nothing of the caller's)
    long failed = LONG_MAX;
    std::exception_ptr error;
    decltype(make()) buffers;
    try {
      buffers = make();
    } catch (...) {
      failed = -1;
      error = std::current_exception();
    }
    while (begin < N) {
      const long end = std::min<long>(N, begin + block);
      if (buffers) {
        for (long i = begin; i < end; ++i) {
          try {
            item(*buffers, i);
          } catch (...) {
            if (i < failed) {  // one thread's items come in increasing order
              failed = i;
              error = detail::naming(i, std::current_exception());
            }
          }
        }
      }
      const long following = tally->next.fetch_add(block);
      if (following >= N) buffers.reset();  // this was the thread's last block: free before reporting
      {
        std::lock_guard<std::mutex> lock(tally->mutex);
        tally->done += end - begin;
        if (failed < tally->failedAt) {
          tally->failedAt = failed;
          tally->error = error;
        }
        if (tally->done == N) tally->finished.notify_one();
      }
      begin = following;
    }
  };
  for (int w = 1; w < threads; ++w) {
    try {
      std::thread(work).detach();
    } catch (...) {  // no more threads: the ones started and the caller share the items
      break;
    }
  }
  work();
  std::unique_lock<std::mutex> lock(tally->mutex);
  tally->finished.wait(lock, [&] { return tally->done == N; });
  if (tally->error) std::rethrow_exception(tally->error);
}

}  // namespace rigidiff
