// The box tree of collision/bvh.hpp over triangle meshes, as seen by the test extension rigidiff._testing:
// meshes as points (n x 3) and faces (m x 3 vertex indices), poses as 12 numbers (rotation row-major,
// then translation), results as flat index lists. invalid_argument for bad input.
#pragma once

#include <vector>

namespace rigidiff {
namespace bind {

/// out = the pairs (i, j) (flattened) of a face i of mesh a and a face j of mesh b, each mesh placed in
/// the world by its pose, whose boxes overlap (bvhPairs: a's face box grown by margin against b's face
/// box as an oriented box in a's frame), sorted.
void bvhMeshPairs(const double* points_a, int na, const int* faces_a, int ma, const double* pose_a,
                  const double* points_b, int nb, const int* faces_b, int mb, const double* pose_b, double margin,
                  std::vector<int>& out);
/// out = the pairs (i, j), i < j (flattened), of faces that share no vertex index and whose boxes,
/// grown by margin, overlap, sorted.
void bvhSelfPairs(const double* points, int n, const int* faces, int m, double margin, std::vector<int>& out);
/// bvhSelfPairs on a tree built on points0 and refitted on points1 (the same faces), every face box grown
/// by inflate at the build and at the refit.
void bvhRefitPairs(const double* points0, const double* points1, int n, const int* faces, int m, double inflate,
                   double margin, std::vector<int>& out);
/// out = the faces whose boxes overlap the box [lo, hi] (3 each) grown by margin, sorted.
void bvhBoxQuery(const double* points, int n, const int* faces, int m, const double* lo, const double* hi,
                 double margin, std::vector<int>& out);
/// out = the faces whose boxes reach {x : normal . x <= offset + margin}, sorted.
void bvhHalfspaceQuery(const double* points, int n, const int* faces, int m, const double* normal, double offset,
                       double margin, std::vector<int>& out);
/// shape (3) = the tree's node count, depth and largest leaf.
void bvhTreeShape(const double* points, int n, const int* faces, int m, int* shape);

}  // namespace bind
}  // namespace rigidiff
