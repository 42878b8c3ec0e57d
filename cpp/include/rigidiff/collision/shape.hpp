// Collision geometry of one shape in its own frame, described for distance queries: a convex "core"
// (a point, a segment, a box, a cylinder or the hull of mesh vertices) grown by a margin (the radius of
// spheres and capsules), or a half-space.
#pragma once

#include <memory>
#include <vector>

#include "rigidiff/fwd.hpp"

namespace rigidiff {

/// Shape type codes (shared with rigidiff/collision.py).
enum class ShapeType : int {
  Sphere = 1,      // radius
  Capsule = 2,     // radius, half_length (axis z, straight part)
  Box = 3,         // half_extents
  Cylinder = 4,    // radius, half_length (axis z)
  Plane = 5,       // the half-space {x : normal . x <= offset}
  ConvexMesh = 6,  // the convex hull of vertices
  TriangleMesh = 7,  // triangles that need not bound a convex solid (vertices: their convex hull)
};

struct MeshTriangles;  // collision/triangle_mesh.hpp

struct CollisionShape {
  ShapeType type = ShapeType::Sphere;
  double radius = 0.0;
  double half_length = 0.0;
  Vec3 half_extents = Vec3::Zero();
  Vec3 normal = Vec3::UnitZ();
  double offset = 0.0;
  std::vector<Vec3> vertices;  ///< ConvexMesh: the points of the hull; TriangleMesh: its convex hull's
  std::shared_ptr<const MeshTriangles> triangles;  ///< TriangleMesh: its triangles (shared by copies)

  /// The rounded part left out of the core: the radius of spheres and capsules, 0 otherwise.
  double margin() const { return (type == ShapeType::Sphere || type == ShapeType::Capsule) ? radius : 0.0; }
  /// Support point of the core in direction d (shape frame): a point of the core maximising d . p.
  Vec3 coreSupport(const Vec3& d) const;
  /// True when the core has an interior (box, cylinder, mesh): points and segments have none.
  bool solidCore() const {
    return type == ShapeType::Box || type == ShapeType::Cylinder || type == ShapeType::ConvexMesh;
  }
};

/// Builders; they check the dimensions (invalid_argument for zero, negative or non-finite sizes).
/// A sphere of radius zero is a point (a particle without size).
CollisionShape makeSphere(double radius);
CollisionShape makeCapsule(double radius, double length);
CollisionShape makeBox(const Vec3& size);
CollisionShape makeCylinder(double radius, double length);
CollisionShape makePlane(const Vec3& normal, double offset);
/// vertices: n x 3, row-major; at least 4 points not in one plane. The shape is their convex hull
/// (checking that a triangle mesh is convex is the caller's job).
CollisionShape makeConvexMesh(const double* vertices, int n);

}  // namespace rigidiff
