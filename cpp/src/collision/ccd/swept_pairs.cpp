// Swept-box broad phase of continuous collision (collision/ccd/swept_pairs.hpp).
#include "rigidiff/collision/ccd/swept_pairs.hpp"

#include <cmath>

#include "rigidiff/macros.hpp"

namespace rigidiff {

namespace {
// at most this many primitive pairs are tested one by one rather than through the box trees
constexpr long kBruteForcePairs = 1024;
}  // namespace

void sweptBoxes(const Vec3* start, const Vec3* end, int n, int k, Vec3* lo, Vec3* hi) {
  RD_CHECK_ARG(k >= 1, "a primitive needs >= 1 point, got " << k);
  for (int i = 0; i < n; ++i) {
    lo[i] = hi[i] = start[static_cast<long>(i) * k];
    for (int j = 0; j < k; ++j) {
      const long at = static_cast<long>(i) * k + j;
      RD_CHECK_ARG(start[at].allFinite() && end[at].allFinite(),
                   "point " << j << " of primitive " << i << " has a non-finite coordinate");
      lo[i] = lo[i].cwiseMin(start[at]).cwiseMin(end[at]);
      hi[i] = hi[i].cwiseMax(start[at]).cwiseMax(end[at]);
    }
  }
}

void sweptPairs(const Vec3* start_a, const Vec3* end_a, int na, int ka, const Vec3* start_b, const Vec3* end_b,
                int nb, int kb, double min_distance, SweptPairsScratch& s, std::vector<std::pair<int, int>>& out) {
  RD_CHECK_ARG(na >= 0 && nb >= 0, "primitive counts must be >= 0, got " << na << " and " << nb);
  RD_CHECK_ARG(std::isfinite(min_distance) && min_distance >= 0.0,
               "min_distance must be finite and >= 0, got " << min_distance);
  s.lo_a.resize(na);
  s.hi_a.resize(na);
  s.lo_b.resize(nb);
  s.hi_b.resize(nb);
  sweptBoxes(start_a, end_a, na, ka, s.lo_a.data(), s.hi_a.data());
  sweptBoxes(start_b, end_b, nb, kb, s.lo_b.data(), s.hi_b.data());
  if (static_cast<long>(na) * nb <= kBruteForcePairs) {
    // few primitives (a box's 8 vertices and 12 faces): testing every pair beats building two trees
    out.clear();
    for (int i = 0; i < na; ++i)
      for (int j = 0; j < nb; ++j)
        if ((s.lo_a[i].array() <= s.hi_b[j].array() + min_distance).all() &&
            (s.lo_b[j].array() <= s.hi_a[i].array() + min_distance).all())
          out.emplace_back(i, j);
    return;
  }
  s.tree_a.build(s.lo_a.data(), s.hi_a.data(), na);
  s.tree_b.build(s.lo_b.data(), s.hi_b.data(), nb);
  // both trees are in the same frame: the oriented-box test of bvhPairs is then the axis-aligned one
  bvhPairs(s.tree_a, s.tree_b, SE3::Identity(), min_distance, out);
}

}  // namespace rigidiff
