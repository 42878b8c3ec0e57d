// Internal to collision/: spheres and capsules as segments along their z axis (a sphere's has length 0),
// the closest points of two such segments, and a direction orthogonal to a given one.
#pragma once

#include <algorithm>
#include <cmath>

#include "rigidiff/collision/shape.hpp"
#include "rigidiff/spatial/se3.hpp"

namespace rigidiff {
namespace axes {

/// The core segment c + s u, |s| <= h, of a sphere or capsule placed by M, and its radius r.
struct Axis {
  Vec3 c, u;
  double h, r;
};

inline Axis axisOf(const CollisionShape& s, const SE3& M) {
  return {M.p, M.R.col(2), s.type == ShapeType::Capsule ? s.half_length : 0.0, s.radius};
}

/// Parameters s (of A) and t (of B) of the closest points of two segments.
inline void closestParameters(const Axis& A, const Axis& B, double& s, double& t) {
  const Vec3 w = A.c - B.c;
  const double k = A.u.dot(B.u), den = 1.0 - k * k;
  const double aw = A.u.dot(w), bw = B.u.dot(w);
  if (A.h == 0.0 && B.h == 0.0) {
    s = t = 0.0;
    return;
  }
  if (A.h == 0.0) {
    s = 0.0;
    t = std::clamp(bw, -B.h, B.h);
    return;
  }
  if (B.h == 0.0) {
    t = 0.0;
    s = std::clamp(-aw, -A.h, A.h);
    return;
  }
  s = den > 1e-12 ? std::clamp((k * bw - aw) / den, -A.h, A.h) : 0.0;  // parallel: any point of the overlap
  t = k * s + bw;
  if (t < -B.h || t > B.h) {
    t = std::clamp(t, -B.h, B.h);
    s = std::clamp(k * t - aw, -A.h, A.h);
  }
}

/// Any unit vector orthogonal to the unit vector n.
inline Vec3 anyOrthogonal(const Vec3& n) {
  const Vec3 t = std::abs(n.x()) < 0.9 ? n.cross(Vec3::UnitX()) : n.cross(Vec3::UnitY());
  return t.normalized();
}

}  // namespace axes
}  // namespace rigidiff
