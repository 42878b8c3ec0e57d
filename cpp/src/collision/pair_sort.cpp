// Counting sorts of index pairs (collision/pair_sort.hpp).
#include "rigidiff/collision/pair_sort.hpp"

#include <algorithm>
#include <cmath>

namespace rigidiff {

namespace {
// one stable counting pass of `from` into `to` by key(pair), keys in [0, n)
template <typename Key>
void countingPass(const std::vector<std::pair<int, int>>& from, std::vector<std::pair<int, int>>& to, int n,
                  const Key& key, std::vector<int>& start) {
  start.assign(static_cast<std::size_t>(n) + 1, 0);
  for (const auto& p : from) ++start[key(p) + 1];
  for (int k = 0; k < n; ++k) start[k + 1] += start[k];
  to.resize(from.size());  // grows only: no allocation once the buffers hold the largest list
  for (const auto& p : from) to[start[key(p)]++] = p;
}

// whether counting passes over keys below `range` beat a comparison sort of n items
bool countingPays(std::size_t n, long range) {
  return n > 64 && static_cast<double>(n) * std::log2(static_cast<double>(n)) > 2.0 * static_cast<double>(range);
}
}  // namespace

void sortPairs(std::vector<std::pair<int, int>>& pairs, int n_first, int n_second, PairSortBuffers* buffers) {
  if (!buffers || !countingPays(pairs.size(), static_cast<long>(n_first) + n_second)) {
    std::sort(pairs.begin(), pairs.end());
    return;
  }
  countingPass(pairs, buffers->pairs, n_second, [](const std::pair<int, int>& p) { return p.second; },
               buffers->start);
  countingPass(buffers->pairs, pairs, n_first, [](const std::pair<int, int>& p) { return p.first; }, buffers->start);
}

void stableSortByFirst(std::vector<std::pair<int, int>>& pairs, int n_first, PairSortBuffers& buffers) {
  if (!countingPays(pairs.size(), n_first)) {
    std::stable_sort(pairs.begin(), pairs.end(),
                     [](const std::pair<int, int>& a, const std::pair<int, int>& b) { return a.first < b.first; });
    return;
  }
  countingPass(pairs, buffers.pairs, n_first, [](const std::pair<int, int>& p) { return p.first; }, buffers.start);
  pairs.swap(buffers.pairs);
}

}  // namespace rigidiff
