// Splitting N independent items over threads: contiguous chunks, exceptions rethrown on the caller's
// thread, results independent of the thread count (each chunk is processed in order by one thread).
#pragma once

#include <algorithm>
#include <exception>
#include <thread>
#include <vector>

namespace rigidiff {

/// Calls body(begin, end) on `threads` threads (at most N) for contiguous chunks covering [0, N). A
/// body builds its own per-thread buffers. The first exception of any chunk is rethrown.
template <typename Body>
void parallelChunks(int N, int threads, const Body& body) {
  threads = std::max(1, std::min(threads, N));
  std::vector<std::exception_ptr> errors(threads);
  auto work = [&](int w) {
    try {
      body(static_cast<int>(static_cast<long>(N) * w / threads),
           static_cast<int>(static_cast<long>(N) * (w + 1) / threads));
    } catch (...) {
      errors[w] = std::current_exception();
    }
  };
  if (threads == 1) {
    work(0);
  } else {
    std::vector<std::thread> pool;
    for (int w = 0; w < threads; ++w) pool.emplace_back(work, w);
    for (auto& th : pool) th.join();
  }
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace rigidiff
