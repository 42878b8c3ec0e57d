// Spheres and capsules: segments (a sphere's has length 0) grown by their radii. A capsule touches
// with an end (a point feature) or with its axis (a segment feature); parallel capsules touch along
// an interval and give a contact at each end of it.
#include <algorithm>
#include <cmath>

#include "rigidiff/collision/narrowphase.hpp"

namespace rigidiff {
namespace narrowphase {

namespace {

struct Axis {
  Vec3 c, u;       // world centre and unit axis
  double h, r;     // half length (0 for a sphere) and radius
};

Axis axisOf(const CollisionShape& s, const SE3& M) {
  const double h = s.type == ShapeType::Capsule ? s.half_length : 0.0;
  return {M.p, M.R.col(2), h, s.radius};
}

// closest points of the segments c + s u, |s| <= h (parameters s of A, t of B)
void closestParameters(const Axis& A, const Axis& B, double& s, double& t) {
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
  s = den > 1e-12 ? std::clamp((k * bw - aw) / den, -A.h, A.h) : 0.0;
  t = k * s + bw;
  if (t < -B.h || t > B.h) {
    t = std::clamp(t, -B.h, B.h);
    s = std::clamp(k * t - aw, -A.h, A.h);
  }
}

// the feature of an axis at parameter s: its end (point) or its interior (segment)
Feature featureAt(const Axis& X, double s) {
  Feature f;
  f.margin = X.r;
  if (X.h > 0.0 && std::abs(s) < X.h) {
    f.kind = FeatureKind::Segment;
    f.p = Vec3::Zero();
    f.d = Vec3::UnitZ();
  } else {
    f.kind = FeatureKind::Point;
    f.p = Vec3(0.0, 0.0, s < 0.0 ? -X.h : X.h);
  }
  return f;
}

// any unit vector orthogonal to u (orients contacts of axes that cross or touch at their centres)
Vec3 orthogonalTo(const Vec3& u) {
  const Vec3 t = std::abs(u.x()) < 0.9 ? u.cross(Vec3::UnitX()) : u.cross(Vec3::UnitY());
  return t.normalized();
}

}  // namespace

void roundedPair(const CollisionShape& a, const SE3& Ma, int ga, const CollisionShape& b, const SE3& Mb, int gb,
                 double margin, std::vector<Contact>& out) {
  const Axis A = axisOf(a, Ma), B = axisOf(b, Mb);
  const double reach = A.r + B.r + margin;
  const Vec3 cross = A.u.cross(B.u);
  if (A.h > 0.0 && B.h > 0.0 && cross.squaredNorm() < 1e-12) {
    // parallel capsules: the overlap of B's projection on A's axis
    const double sign = A.u.dot(B.u) > 0.0 ? 1.0 : -1.0;
    const double sb = A.u.dot(B.c - A.c);
    const double lo = std::max(-A.h, sb - B.h), hi = std::min(A.h, sb + B.h);
    if (lo <= hi) {
      const Vec3 off = (B.c - A.c) - sb * A.u;  // from A's axis to B's
      if (off.norm() >= reach) return;
      const Vec3 hint = off.norm() > 1e-12 ? Vec3(-off.normalized()) : orthogonalTo(A.u);
      for (double s : {lo, hi}) {
        if (s == hi && hi - lo < 1e-9 * (A.h + B.h)) break;  // a single touching point
        const bool a_end = s <= -A.h || s >= A.h;
        const Feature fa = a_end ? featureAt(A, s) : featureAt(A, 0.0);
        const Feature fb = a_end ? featureAt(B, 0.0) : featureAt(B, sign * (s - sb));
        addContact(out, ga, gb, fa, Ma, fb, Mb, hint);
      }
      return;
    }
  }
  double s, t;
  closestParameters(A, B, s, t);
  const Vec3 w = (A.c + s * A.u) - (B.c + t * B.u);
  if (w.norm() >= reach) return;
  const Vec3 hint = w.norm() > 1e-12 ? Vec3(w.normalized()) : (cross.squaredNorm() > 1e-24 ? Vec3(cross.normalized())
                                                                                          : orthogonalTo(A.u));
  addContact(out, ga, gb, featureAt(A, s), Ma, featureAt(B, t), Mb, hint);
}

}  // namespace narrowphase
}  // namespace rigidiff
