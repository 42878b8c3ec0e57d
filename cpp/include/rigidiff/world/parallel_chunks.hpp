// Independent per-element work of a barrier step (each contact pair's terms) shared between the calling
// thread and one helper, in chunks taken as they go: a helper that a busy machine schedules late leaves its
// share to the calling thread instead of stalling it. Small jobs stay on the calling thread.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <thread>

namespace rigidiff {

/// Calls f(i) once for every i in [0, n), on two threads when n >= min_parallel and the machine has more than
/// one hardware thread. f must only write to what belongs to element i. An exception thrown by f on either
/// thread stops the remaining work and is rethrown on the calling thread (the first one, if both throw).
template <class F>
void parallelChunks(std::size_t n, F&& f, std::size_t min_parallel = 256, std::size_t chunk = 32) {
  std::atomic<std::size_t> next{0};
  std::exception_ptr failed[2];
  auto work = [&](int who) {
    try {
      for (std::size_t begin = next.fetch_add(chunk); begin < n; begin = next.fetch_add(chunk))
        for (std::size_t i = begin; i < std::min(n, begin + chunk); ++i) f(i);
    } catch (...) {
      failed[who] = std::current_exception();
      next.store(n);  // the other thread takes no further chunk
    }
  };
  if (n >= min_parallel && std::thread::hardware_concurrency() > 1) {
    std::thread helper(work, 1);
    work(0);
    helper.join();
  } else {
    work(0);
  }
  for (const std::exception_ptr& e : failed)
    if (e) std::rethrow_exception(e);
}

}  // namespace rigidiff
