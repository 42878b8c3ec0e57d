// Counts heap allocations of a test program: malloc is wrapped, and g_mallocs read around a call.
// Include it in exactly one translation unit of the program, after the standard headers (they declare
// malloc with another exception specification).
#pragma once

#include <cstddef>
#include <cstdio>

extern "C" void* __libc_malloc(size_t);
static long g_mallocs = 0;
extern "C" void* malloc(size_t n) {
  ++g_mallocs;
  return __libc_malloc(n);
}

/// check(name, call) runs call() (returning a double, summed into sink so that it is not optimised away)
/// and reports the calls that allocated; report() prints the tally and gives the program's exit code.
struct AllocationChecks {
  int failures = 0, checks = 0;
  double sink = 0.0;

  template <class F>
  void operator()(const char* name, const F& call) {
    const long before = g_mallocs;
    sink += call();
    const long n = g_mallocs - before;
    ++checks;
    if (n != 0) {
      std::printf("%-40s %ld heap allocations\n", name, n);
      ++failures;
    }
  }

  int report() const {
    std::printf("%d of %d calls allocated (checksum %g)\n", failures, checks, sink);
    return failures == 0 ? 0 : 1;
  }
};
