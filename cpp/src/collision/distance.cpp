#include "rigidiff/collision/distance.hpp"

#include <algorithm>
#include <cmath>

#include "axes.hpp"
#include "rigidiff/collision/gjk.hpp"
#include "rigidiff/macros.hpp"

namespace rigidiff {

namespace {

// Rounded shapes (spheres and capsules): closest points of the cores, then the radii. When the cores
// cross, the normal is the common perpendicular of the two segments (or any direction orthogonal to a
// segment, for a sphere centred on it).
DistanceResult roundedPair(const CollisionShape& a, const SE3& Ma, const CollisionShape& b, const SE3& Mb) {
  const axes::Axis A = axes::axisOf(a, Ma), B = axes::axisOf(b, Mb);
  double s, t;
  axes::closestParameters(A, B, s, t);
  const Vec3 ca = A.c + s * A.u, cb = B.c + t * B.u;
  Vec3 d = ca - cb;
  double len = d.norm();
  Vec3 n;
  // below this the cores cross: their offset is rounding noise, not a direction
  const double size = a.radius + b.radius + a.half_length + b.half_length;
  if (len > 1e-12 * size) {
    n = d / len;
  } else {
    len = 0.0;
    const Vec3 ea = (2.0 * A.h) * A.u, eb = (2.0 * B.h) * B.u;
    const Vec3 c = ea.cross(eb);
    if (c.squaredNorm() > 1e-24)
      n = c.normalized();
    else if (ea.squaredNorm() > 0.0)
      n = axes::anyOrthogonal(ea.normalized());
    else if (eb.squaredNorm() > 0.0)
      n = axes::anyOrthogonal(eb.normalized());
    else
      n = Vec3::UnitZ();
  }
  DistanceResult r;
  r.normal = n;
  r.distance = len - a.radius - b.radius;
  r.point_a = ca - a.radius * n;
  r.point_b = cb + b.radius * n;
  return r;
}

// A bounded shape against the half-space of a plane: its deepest point along -n.
DistanceResult againstPlane(const CollisionShape& s, const SE3& Ms, const CollisionShape& plane, const SE3& Mp) {
  const Vec3 n = Mp.R * plane.normal;
  const double offset = plane.offset + n.dot(Mp.p);
  const Vec3 deepest = Ms.actPoint(s.coreSupport(Ms.R.transpose() * (-n))) - s.margin() * n;
  DistanceResult r;
  r.distance = n.dot(deepest) - offset;
  r.point_a = deepest;
  r.point_b = deepest - r.distance * n;
  r.normal = n;
  return r;
}

DistanceResult swapped(DistanceResult r) {
  std::swap(r.point_a, r.point_b);
  r.normal = -r.normal;
  return r;
}

bool rounded(const CollisionShape& s) {
  return s.type == ShapeType::Sphere || s.type == ShapeType::Capsule;
}

}  // namespace

DistanceResult signedDistance(const CollisionShape& a, const SE3& Ma, const CollisionShape& b, const SE3& Mb) {
  const bool pa = a.type == ShapeType::Plane, pb = b.type == ShapeType::Plane;
  RD_CHECK_ARG(!(pa && pb), "the distance between two planes is not defined");
  if (pb) return againstPlane(a, Ma, b, Mb);
  if (pa) return swapped(againstPlane(b, Mb, a, Ma));
  if (a.type == ShapeType::TriangleMesh || b.type == ShapeType::TriangleMesh) {
    for (const CollisionShape* s : {&a, &b})
      RD_CHECK_ARG(s->type != ShapeType::Cylinder && s->type != ShapeType::ConvexMesh,
                   "the distance between a mesh that is not convex and a cylinder or a convex mesh is not "
                   "available (pass the convex mesh as a triangle mesh)");
    return meshDistance(a, Ma, b, Mb);
  }
  if (rounded(a) && rounded(b)) return roundedPair(a, Ma, b, Mb);
  const CoreDistance c = coreDistance(a, Ma, b, Mb);
  const double ra = a.margin(), rb = b.margin();
  DistanceResult r;
  r.normal = c.normal;
  r.distance = c.overlap ? -c.depth - ra - rb : c.distance - ra - rb;
  r.point_a = c.pa - ra * c.normal;
  r.point_b = c.pb + rb * c.normal;
  return r;
}

}  // namespace rigidiff
