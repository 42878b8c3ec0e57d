// Signed distance between two placed shapes, with witness points and the contact normal.
#pragma once

#include "rigidiff/collision/shape.hpp"
#include "rigidiff/spatial/se3.hpp"

namespace rigidiff {

/// distance > 0: the gap between the shapes; < 0: minus the penetration depth (the shortest
/// translation of A that separates them). point_a (on A) and point_b (on B) are world points with
/// point_a - point_b = distance * normal, and normal (unit) points from B to A: moving A along it
/// increases the distance (docs/architecture.md, Conventions).
struct DistanceResult {
  double distance = 0.0;
  Vec3 point_a = Vec3::Zero();
  Vec3 point_b = Vec3::Zero();
  Vec3 normal = Vec3::UnitZ();
};

/// Exact for sphere, capsule and plane pairs (closed forms) and any shape against a plane (its deepest
/// support point); GJK / EPA (gjk.hpp) for the pairs with a box, a cylinder or a convex mesh, whose
/// rounded partners (spheres, capsules) enter as their core point or segment grown by the radius.
/// When two cores cross (concentric spheres, crossing capsule axes) the normal is any direction that
/// realises the depth. Two planes have no distance (invalid_argument). A triangle mesh (not convex)
/// against a plane is its convex hull (exact there); against a sphere, a capsule, a box or another
/// triangle mesh it is meshDistance; against a cylinder or a convex mesh, invalid_argument.
DistanceResult signedDistance(const CollisionShape& a, const SE3& Ma, const CollisionShape& b, const SE3& Mb);

/// A triangle mesh against a sphere, capsule, box or triangle mesh (either side): the deepest (most
/// negative, or apart the nearest) of the contacts the narrow phase reports with a margin grown from
/// 1e-3 of the shapes' size by factors of 4 until it reports one. Apart, the closest points of the two
/// surfaces are a local minimum of the distance that the narrow phase reports, so this is the distance.
/// In penetration it is the deepest local contact (the depth of the deepest feature pair, not the
/// shortest translation separating two non-convex solids). runtime_error when nothing is found within 4
/// times the shapes' extent (a body deeper inside a mesh than its prism thickness).
DistanceResult meshDistance(const CollisionShape& a, const SE3& Ma, const CollisionShape& b, const SE3& Mb);

}  // namespace rigidiff
