// The box tree of collision/bvh.hpp over a triangle mesh, as seen by the test extension rigidiff._testing (and
// over plain boxes, for rigidiff.mesh_checks):
// points (n x 3) and faces (m x 3 vertex indices), poses as 12 numbers (rotation row-major, then
// translation), results as flat sorted index lists. invalid_argument for bad input.
#pragma once

#include <array>
#include <vector>

#include "rigidiff/collision/bvh.hpp"

namespace rigidiff {
namespace bind {

class MeshTree {
 public:
  /// The tree over the faces' boxes, each grown by inflate (>= 0).
  MeshTree(const double* points, int n, const int* faces, int m, double inflate);
  /// New positions of the n points (the faces kept): a refit, every face box grown by inflate.
  void refit(const double* points, int n, double inflate);
  /// out = the pairs (i, j) (flattened) of a face i of this mesh and a face j of other, each placed in the
  /// world by its pose, whose boxes overlap (bvhPairs: this face box grown by margin against other's as
  /// an oriented box in this mesh's frame).
  void pairs(const MeshTree& other, const double* pose, const double* other_pose, double margin,
             std::vector<int>& out) const;
  /// out = the pairs (i, j), i < j (flattened), of faces that share no vertex index and whose boxes,
  /// grown by margin, overlap.
  void selfPairs(double margin, std::vector<int>& out) const;
  /// out = the faces whose boxes overlap the box [lo, hi] (3 each) grown by margin.
  void boxQuery(const double* lo, const double* hi, double margin, std::vector<int>& out) const;
  /// out = the faces whose boxes reach {x : normal . x <= offset + margin}.
  void halfspaceQuery(const double* normal, double offset, double margin, std::vector<int>& out) const;
  /// shape (3) = the tree's node count, depth and largest leaf.
  void shape(int* out) const;

 private:
  void faceBoxes(const double* points, int n);

  std::vector<std::array<int, 3>> faces_;
  std::vector<Vec3> points_, lo_, hi_;  // scratch of the face boxes
  Bvh tree_;
  mutable std::vector<std::pair<int, int>> pairs_;
};

/// out = the pairs (i, j), i < j (flattened, sorted), of the n closed boxes [lo_i, hi_i] (3 numbers each) that
/// overlap or touch: rigidiff.mesh_checks' candidates for crossing faces. invalid_argument for a non-finite or
/// inverted box.
void boxSelfPairs(const double* lo, const double* hi, int n, std::vector<int>& out);

}  // namespace bind
}  // namespace rigidiff
