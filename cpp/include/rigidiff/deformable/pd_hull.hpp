// A convex polytope as a link's collision shape in a projective world (pd_skeleton.hpp): a robot's mesh link
// collides through its convex hull, as MuJoCo's mesh geoms do. Its signed distance field is exact on both
// sides: inside, the largest of its faces' plane distances (flat, so its Hessian is zero); outside, the distance
// to the nearest triangle, curved where the nearest point is on an edge or a vertex.
#pragma once

#include <array>
#include <vector>

#include "rigidiff/fwd.hpp"

namespace rigidiff {
namespace deformable {

struct PdHull {
  std::vector<Vec3> vertices;
  std::vector<std::array<int, 3>> triangles;  // outward (counter-clockwise seen from outside)
  std::vector<Vec3> normals;                  // per triangle, unit, outward
  std::vector<double> offsets;                // per triangle: normal . x = offset on its plane
  std::vector<std::array<int, 2>> edges;       // the sharp edges (between triangles of different planes)
  std::vector<std::array<int, 2>> edge_faces;  // per sharp edge, its two triangles
  double radius = 0.0;                        // the largest |vertex|: the hull lies in this ball about the origin
};

/// The hull of `vertices` given by its outward triangles (indices into vertices). invalid_argument unless the
/// coordinates are finite, there are at least four vertices, the indices are in range, and every vertex lies
/// on the inner side of every triangle's plane (a convex, outward-wound surface) within a relative 1e-9.
/// Triangles of zero area are dropped.
PdHull makePdHull(const std::vector<Vec3>& vertices, const std::vector<std::array<int, 3>>& triangles);

/// The signed distance of p (hull frame) to the hull, with the outward normal and the field's Hessian. A point
/// farther than `reach` may be reported at |p| - radius (a lower bound, >= reach) with no normal or Hessian.
double hullDistance(const PdHull& hull, const Vec3& p, double reach, Vec3* normal, Mat3* curvature);

}  // namespace deformable
}  // namespace rigidiff
