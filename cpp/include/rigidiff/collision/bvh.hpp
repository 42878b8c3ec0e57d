// A bounding-volume hierarchy of axis-aligned boxes: the mid phase between the broad phase (which
// geometries may touch) and the narrow phase (which features touch). It is built once over a set of
// primitive boxes (the triangles of a mesh, later its edges and vertices or swept boxes), refitted
// when the primitives move (a deforming mesh), and queried against a box, a half-space, another tree
// placed by a rigid transform (a rigidly moving mesh is queried by transforming the query, never the
// tree) or itself.
//
// Every query overwrites a vector the caller owns with sorted pairs or indices: once that vector has
// grown to its working size, queries allocate nothing, and the sorted order keeps warm starts stable.
// Query margins are >= 0 and poses proper rigid transforms (the bindings check them; the queries do not).
#pragma once

#include <array>
#include <utility>
#include <vector>

#include "rigidiff/collision/pair_sort.hpp"
#include "rigidiff/fwd.hpp"
#include "rigidiff/spatial/se3.hpp"

namespace rigidiff {

struct Bvh {
  struct Node {
    Vec3 lo, hi;    ///< box of the node's primitive boxes
    int first = 0;  ///< leaf: first slot of its primitives; internal node: index of its right child
    int count = 0;  ///< leaf: number of primitives (> 0); internal node: 0 (its left child is next)
  };
  std::vector<Node> nodes;  ///< nodes[0] is the root; a parent comes before its children (pre-order)
  std::vector<int> order;   ///< (nprimitives) primitive index of each slot; a leaf owns slots [first, first + count)
  std::vector<int> slot;    ///< (nprimitives) slot of each primitive (the inverse of order)
  std::vector<Vec3> lo, hi; ///< (nprimitives) primitive boxes by slot, inflated by the build's or refit's margin
  int depth = 0;            ///< levels below the root

  static constexpr int kLeafSize = 4;  ///< at most this many primitives per leaf

  int size() const { return static_cast<int>(order.size()); }

  /// Builds the tree over n primitive boxes [lo[i], hi[i]] (any frame: the tree's frame), each grown by
  /// `inflate` (>= 0) on every side. Top-down, each node split at the median of its primitives' centres
  /// along the longest axis of their extent (ties broken by index, so the tree is deterministic).
  /// n = 0 gives an empty tree. invalid_argument for non-finite or inverted boxes or a negative inflate.
  void build(const Vec3* lo, const Vec3* hi, int n, double inflate = 0.0);
  /// New boxes for the same n primitives (in primitive order), grown by `inflate`; the node boxes are
  /// recomputed bottom-up and the topology kept, so a deformed mesh needs no rebuild. Same checks as build.
  void refit(const Vec3* lo, const Vec3* hi, int n, double inflate = 0.0);

  /// out = the primitives whose boxes overlap the box [qlo, qhi] (tree frame) grown by margin, sorted.
  void queryBox(const Vec3& qlo, const Vec3& qhi, double margin, std::vector<int>& out) const;
  /// out = the primitives whose boxes reach the half-space {x : normal . x <= offset + margin} (tree
  /// frame; a plane's slab of depth margin above its surface, and everything below), sorted.
  void queryHalfspace(const Vec3& normal, double offset, double margin, std::vector<int>& out) const;
  /// out = the pairs (i, j), i < j, of distinct primitives whose boxes overlap once grown by margin
  /// (the gap between them is at most margin along every axis), sorted.
  void selfPairs(double margin, std::vector<std::pair<int, int>>& out) const;
};

/// out = the pairs (i of a, j of b) whose boxes overlap: a's box grown by margin (a's frame) against b's
/// box placed in a's frame by aMb (the pose of b's frame in a's frame) as an oriented box. The test is
/// exact for those two boxes (separating axes: the 3 + 3 face normals and their 9 cross products),
/// sorted. With aMb the identity this is the pairs of overlapping axis-aligned boxes. `buffers` (optional):
/// sort thousands of pairs by counting in them (pair_sort.hpp); without, std::sort, which allocates nothing.
void bvhPairs(const Bvh& a, const Bvh& b, const SE3& aMb, double margin, std::vector<std::pair<int, int>>& out,
              PairSortBuffers* buffers = nullptr);

/// lo, hi (m) = the boxes of the m triangles `faces` (vertex indices into points, n of them).
/// invalid_argument for an index out of range or a non-finite vertex of a face.
void triangleBoxes(const Vec3* points, int n, const std::array<int, 3>* faces, int m, Vec3* lo, Vec3* hi);
/// Removes from pairs (of triangle indices) those whose triangles share a vertex index, keeping the
/// order. Duplicate vertices (equal positions, other indices) are not shared.
void dropAdjacentTriangles(const std::array<int, 3>* faces, std::vector<std::pair<int, int>>& pairs);

}  // namespace rigidiff
