// Triangle meshes that need not be convex (static terrain, robot links): each triangle collides as a
// thin prism that extends a fixed thickness into the solid behind it, so contacts are one-sided (their
// normals point out of the mesh). The box tree of the triangles (collision/bvh.hpp) finds the
// candidates of a query.
#pragma once

#include <array>
#include <vector>

#include "rigidiff/collision/bvh.hpp"
#include "rigidiff/collision/shape.hpp"

namespace rigidiff {

struct MeshTriangles {
  std::vector<Vec3> points;               ///< vertices (shape frame)
  std::vector<std::array<int, 3>> faces;  ///< counter-clockwise seen from outside the solid
  std::vector<Vec3> normals;              ///< outward unit normal of each face
  double thickness = 0.0;                 ///< depth of each face's prism behind the face
  /// per face and edge (k: from vertex k to k + 1): is it a ridge (the neighbour face falls away
  /// behind it) or a boundary edge? false for flat and valley edges, inside the surface
  std::vector<std::array<bool, 3>> ridge;

  Bvh tree;  ///< box tree over the faces' prism boxes (shape frame), built once: moving meshes query it in their frame

  /// out = the faces whose prism boxes overlap the box [lo, hi] (shape frame), sorted.
  void query(const Vec3& lo, const Vec3& hi, std::vector<int>& out) const { tree.queryBox(lo, hi, 0.0, out); }
  /// Size of the mesh: 1 + the diagonal of its box (a scale for tolerances).
  double size() const { return 1.0 + (tree.nodes[0].hi - tree.nodes[0].lo).norm(); }
  /// The prism of face f: the triangle and its copy moved `thickness` against the normal (6 vertices).
  CollisionShape prism(int f) const;
  /// Is a contact of face f's prism at point p (shape frame) whose outward normal n (shape frame)
  /// leans away from the face normal a ghost of an edge inside the surface? Such a contact lies on a
  /// flat or valley edge of f, where the neighbour face reports the true one; on a ridge (or the
  /// mesh's boundary) the leaning normal is real.
  bool ghostContact(int f, const Vec3& p, const Vec3& n) const;
  /// Is p (shape frame) behind face f's plane but across another sheet of the surface: does its way out to
  /// the face (the segment to the face's nearest point) pass through another face? Such a point lies outside
  /// a part thinner than the prisms (above a shelf, behind its underside; beside a bar or a lid, an open
  /// mesh's wall), not in the solid behind f, and touches f nowhere. `scratch` holds the candidate faces.
  bool acrossAnotherFace(int f, const Vec3& p, std::vector<int>& scratch) const;
  /// The point of face f (the triangle, edges and corners included) nearest p (shape frame).
  Vec3 nearestPoint(int f, const Vec3& p) const;
};

/// A triangle mesh shape: points (n x 3) and faces (m x 3 vertex indices, counter-clockwise from
/// outside), the points of its convex hull (h x 3; used against half-spaces, where the deepest point is
/// a hull vertex, and for bounding boxes) and the prism thickness (> 0). Degenerate faces (zero
/// area) are dropped; invalid_argument if no face is left, for indices out of range or non-finite data.
CollisionShape makeTriangleMesh(const double* points, int n, const int* faces, int m, const double* hull, int h,
                                double thickness);

}  // namespace rigidiff
