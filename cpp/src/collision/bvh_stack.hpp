// The fixed-size stack the box-tree traversals (bvh.cpp, bvh_pairs.cpp) keep their pending nodes on, so
// that a query allocates nothing.
#pragma once

#include "rigidiff/macros.hpp"

namespace rigidiff {

/// Median splits halve every node, so a tree over fewer than 2^31 primitives is at most 31 levels deep.
constexpr int kBvhMaxDepth = 40;

/// A stack of 2 entries per level: a walk of one tree holds at most 1 pending node per level, a walk of
/// two trees 1 per level of each.
template <typename T>
class BvhStack {
 public:
  void push(const T& x) {
    if (top_ == kCapacity) RD_THROW(std::logic_error, "box tree traversal stack overflow");
    items_[top_++] = x;
  }
  T pop() { return items_[--top_]; }
  bool empty() const { return top_ == 0; }

 private:
  static constexpr int kCapacity = 2 * kBvhMaxDepth + 2;
  T items_[kCapacity];
  int top_ = 0;
};

}  // namespace rigidiff
