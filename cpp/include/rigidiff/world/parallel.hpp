// Spreading N independent items over threads. Each thread builds its own buffers (one heap allocation
// of its own, so no two threads write to one cache line of them) and claims blocks of items from a
// shared counter, so that a thread slowed down by the machine's other work does not hold the others
// up. An item's result depends only on the item, never on the thread or on the items before it, so
// the results are the same whatever the thread count. The shared state is the counter alone.
#pragma once

#include <algorithm>
#include <atomic>
#include <exception>
#include <memory>
#include <thread>
#include <vector>

namespace rigidiff {

/// Calls item(*buffers, i) for every i in [0, N) on min(threads, N) threads (the caller's among them),
/// where buffers = make() is a std::unique_ptr built once per thread, on that thread. Every item runs
/// even when some throw; the exception of the lowest failing item is rethrown, so which error is
/// reported does not depend on the thread count either.
template <typename Make, typename Item>
void parallelFor(int N, int threads, const Make& make, const Item& item) {
  if (N <= 0) return;
  threads = std::max(1, std::min(threads, N));
  // about eight blocks per thread: balance against the cost of claiming
  const int block = std::max(1, N / (8 * threads));
  std::atomic<int> next{0};
  std::vector<int> failed(threads, N);  // per thread: its lowest failing item (N: none)
  std::vector<std::exception_ptr> errors(threads);
  auto work = [&](int w) {
    try {
      auto buffers = make();
      for (int begin; (begin = next.fetch_add(block, std::memory_order_relaxed)) < N;) {
        const int end = std::min(N, begin + block);
        for (int i = begin; i < end; ++i) {
          try {
            item(*buffers, i);
          } catch (...) {
            if (i < failed[w]) {  // a thread's items come in increasing order: its first failure is its lowest
              failed[w] = i;
              errors[w] = std::current_exception();
            }
          }
        }
      }
    } catch (...) {  // make() failed (out of memory): report it before any item's error
      failed[w] = -1;
      errors[w] = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  try {
    for (int w = 1; w < threads; ++w) pool.emplace_back(work, w);
  } catch (...) {  // no more threads: the ones started and the caller share the items
  }
  work(0);
  for (auto& th : pool) th.join();
  const int first = static_cast<int>(std::min_element(failed.begin(), failed.end()) - failed.begin());
  if (errors[first]) std::rethrow_exception(errors[first]);
}

}  // namespace rigidiff
