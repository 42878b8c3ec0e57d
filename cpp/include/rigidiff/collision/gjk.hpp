// Distance and penetration between the convex cores of two shapes: GJK (Gilbert-Johnson-Keerthi) on
// their Minkowski difference, and EPA (expanding polytope) when the cores overlap.
#pragma once

#include "rigidiff/collision/shape.hpp"
#include "rigidiff/spatial/se3.hpp"

namespace rigidiff {

/// Closest points of two cores placed in the world, or their penetration.
struct CoreDistance {
  bool overlap = false;         ///< the cores intersect (then depth and the witness points come from EPA)
  double distance = 0.0;        ///< >= 0: distance between the cores (0 when they overlap)
  double depth = 0.0;           ///< >= 0: penetration depth of the cores when they overlap
  Vec3 pa = Vec3::Zero();       ///< witness point on core A (world)
  Vec3 pb = Vec3::Zero();       ///< witness point on core B (world)
  Vec3 normal = Vec3::UnitZ();  ///< unit direction from B to A (moving A along it separates the cores)
};

/// GJK distance between the cores of a (placed by Ma) and b (by Mb); EPA when they overlap, which
/// needs a solid core on one side (box, cylinder or mesh); with two point or segment cores the
/// overlap is reported with depth 0 (callers handle those pairs analytically). Separated distances are
/// exact to about 1e-11 relative. EPA stops when the support plane confirms the nearest face to 1e-10 of
/// the cores' size: exact for polyhedra and usually for cylinders; when its 128 vertices run out first
/// (coaxial cylinders: a circle of equally deep directions) a descent on the support function refines
/// the normal, to about 1e-8 of the size. The depth is always the exact depth along the normal returned.
/// Throws invalid_argument when the poses overflow, runtime_error when the overlapping cores are too
/// flat for EPA (thinner than 1e-9 of their size). No heap allocation.
CoreDistance coreDistance(const CollisionShape& a, const SE3& Ma, const CollisionShape& b, const SE3& Mb);

}  // namespace rigidiff
