// Broad phase of continuous collision: which primitives of two moving sets may come within min_distance
// of each other while their points move linearly from start to end. Each primitive is k points (1 for
// vertices, 2 for edges, 3 for triangles); its swept box holds all of them at both ends of the motion,
// hence the whole linear sweep. Pairs are found with the box tree (bvh.hpp), not by testing all of them,
// except in small sets (at most 1024 pairs), where testing them one by one is cheaper than two trees.
#pragma once

#include <utility>
#include <vector>

#include "rigidiff/collision/bvh.hpp"
#include "rigidiff/fwd.hpp"

namespace rigidiff {

/// lo, hi (n) = the swept boxes of n primitives of k points each: primitive i owns the points
/// [i * k, (i + 1) * k) of start and of end. invalid_argument for k < 1 or a non-finite point.
void sweptBoxes(const Vec3* start, const Vec3* end, int n, int k, Vec3* lo, Vec3* hi);

/// Reusable box storage and trees of sweptPairs (the trees are rebuilt on every call, which allocates).
struct SweptPairsScratch {
  std::vector<Vec3> lo_a, hi_a, lo_b, hi_b;
  Bvh tree_a, tree_b;
};

/// out = the sorted pairs (i of set a, j of set b) whose swept boxes, grown by min_distance (>= 0), overlap:
/// every pair that may come within min_distance during the motion is among them. Set a has na primitives of
/// ka points (start_a, end_a: na * ka points), set b likewise.
void sweptPairs(const Vec3* start_a, const Vec3* end_a, int na, int ka, const Vec3* start_b, const Vec3* end_b,
                int nb, int kb, double min_distance, SweptPairsScratch& scratch, std::vector<std::pair<int, int>>& out);

}  // namespace rigidiff
