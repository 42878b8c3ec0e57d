#include "rigidiff/collision/distance.hpp"

#include <algorithm>
#include <cmath>

#include "rigidiff/collision/gjk.hpp"
#include "rigidiff/macros.hpp"

namespace rigidiff {

namespace {

// any unit vector orthogonal to n
Vec3 anyOrthogonal(const Vec3& n) {
  const Vec3 t = std::abs(n.x()) < 0.9 ? n.cross(Vec3::UnitX()) : n.cross(Vec3::UnitY());
  return t.normalized();
}

// Closest points of segments [p0, p1] and [q0, q1] (Ericson, Real-Time Collision Detection 5.1.9).
void closestSegmentSegment(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1, Vec3& cp, Vec3& cq) {
  const Vec3 d1 = p1 - p0, d2 = q1 - q0, r = p0 - q0;
  const double a = d1.squaredNorm(), e = d2.squaredNorm(), f = d2.dot(r);
  double s = 0.0, t = 0.0;
  if (a <= 1e-300 && e <= 1e-300) {
    s = t = 0.0;
  } else if (a <= 1e-300) {
    t = std::clamp(f / e, 0.0, 1.0);
  } else {
    const double c = d1.dot(r);
    if (e <= 1e-300) {
      s = std::clamp(-c / a, 0.0, 1.0);
    } else {
      const double b = d1.dot(d2), denom = a * e - b * b;
      s = denom > 1e-14 * a * e ? std::clamp((b * f - c * e) / denom, 0.0, 1.0) : 0.0;
      t = (b * s + f) / e;
      if (t < 0.0) {
        t = 0.0;
        s = std::clamp(-c / a, 0.0, 1.0);
      } else if (t > 1.0) {
        t = 1.0;
        s = std::clamp((b - c) / a, 0.0, 1.0);
      }
    }
  }
  cp = p0 + s * d1;
  cq = q0 + t * d2;
}

// end points of a sphere's (degenerate) or a capsule's core segment in the world
void coreSegment(const CollisionShape& s, const SE3& M, Vec3& p0, Vec3& p1) {
  const Vec3 h = M.R.col(2) * s.half_length;
  p0 = M.p - h;
  p1 = M.p + h;
}

// Rounded shapes (spheres and capsules): closest points of the cores, then the radii. When the cores
// cross, the normal is the common perpendicular of the two segments (or any direction orthogonal to a
// segment, for a sphere centred on it).
DistanceResult roundedPair(const CollisionShape& a, const SE3& Ma, const CollisionShape& b, const SE3& Mb) {
  Vec3 a0, a1, b0, b1, ca, cb;
  coreSegment(a, Ma, a0, a1);
  coreSegment(b, Mb, b0, b1);
  closestSegmentSegment(a0, a1, b0, b1, ca, cb);
  Vec3 d = ca - cb;
  double len = d.norm();
  Vec3 n;
  // below this the cores cross: their offset is rounding noise, not a direction
  const double size = a.radius + b.radius + a.half_length + b.half_length;
  if (len > 1e-12 * size) {
    n = d / len;
  } else {
    len = 0.0;
    const Vec3 ea = a1 - a0, eb = b1 - b0;
    const Vec3 c = ea.cross(eb);
    if (c.squaredNorm() > 1e-24)
      n = c.normalized();
    else if (ea.squaredNorm() > 0.0)
      n = anyOrthogonal(ea.normalized());
    else if (eb.squaredNorm() > 0.0)
      n = anyOrthogonal(eb.normalized());
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
