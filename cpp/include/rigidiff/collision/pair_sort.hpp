// Sorting the (int, int) index pairs of the mid and narrow phases of meshes: primitive pairs of two box
// trees, (vertex, face) incidences. Thousands of pairs over indices below a mesh's size sort faster by
// counting than by comparing; the order is std::sort's (lexicographic), so results do not depend on which
// way a list was sorted.
#pragma once

#include <utility>
#include <vector>

namespace rigidiff {

/// The counting sorts' buffers: they grow to the largest list and range sorted with them, then a sort
/// allocates nothing.
struct PairSortBuffers {
  std::vector<std::pair<int, int>> pairs;
  std::vector<int> start;
};

/// Sorts `pairs` lexicographically, every first in [0, n_first) and second in [0, n_second): two stable
/// counting passes (by second, then by first) in `buffers` where that is cheaper than std::sort, else (and
/// without buffers) std::sort.
void sortPairs(std::vector<std::pair<int, int>>& pairs, int n_first, int n_second, PairSortBuffers* buffers);

/// Stable sort of `pairs` by first alone (first in [0, n_first)): a list sorted by second comes out sorted
/// lexicographically.
void stableSortByFirst(std::vector<std::pair<int, int>>& pairs, int n_first, PairSortBuffers& buffers);

}  // namespace rigidiff
