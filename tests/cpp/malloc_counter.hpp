// Counts heap allocations of a test program: malloc is wrapped, and g_mallocs read around a call.
// Include it in exactly one translation unit of the program, after the standard headers (they declare
// malloc with another exception specification).
#pragma once

#include <cstddef>

extern "C" void* __libc_malloc(size_t);
static long g_mallocs = 0;
extern "C" void* malloc(size_t n) {
  ++g_mallocs;
  return __libc_malloc(n);
}
