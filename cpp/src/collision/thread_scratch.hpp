// Internal to collision/: per-thread scratch lists of the narrow phase, so that a pair allocates
// nothing once the lists have grown to its size.
#pragma once

namespace rigidiff {
namespace narrowphase {

/// The calling thread's instance of T, kept from call to call. Not inlined on purpose: in a shared
/// library every thread-local access is a lookup call, which an inlined access may repeat at each use
/// of the object; through this function a caller pays one lookup and then holds a plain reference.
template <class T>
[[gnu::noinline]] T& threadScratch() {
  thread_local T scratch;
  return scratch;
}

}  // namespace narrowphase
}  // namespace rigidiff
