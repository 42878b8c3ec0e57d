// Spheres and capsules: segments (a sphere's has length 0) grown by their radii. A capsule touches
// with an end (a point feature) or with its axis (a segment feature); parallel capsules touch along
// an interval and give a contact at each end of it.
#include <algorithm>
#include <cmath>

#include "axes.hpp"
#include "rigidiff/collision/narrowphase.hpp"

namespace rigidiff {
namespace narrowphase {

namespace {

using axes::Axis;

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

}  // namespace

void roundedPair(const CollisionShape& a, const SE3& Ma, int ga, const CollisionShape& b, const SE3& Mb, int gb,
                 double margin, std::vector<Contact>& out) {
  const Axis A = axes::axisOf(a, Ma), B = axes::axisOf(b, Mb);
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
      const Vec3 hint = off.norm() > 1e-12 ? Vec3(-off.normalized()) : axes::anyOrthogonal(A.u);
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
  axes::closestParameters(A, B, s, t);
  const Vec3 w = (A.c + s * A.u) - (B.c + t * B.u);
  if (w.norm() >= reach) return;
  const Vec3 hint = w.norm() > 1e-12 ? Vec3(w.normalized()) : (cross.squaredNorm() > 1e-24 ? Vec3(cross.normalized())
                                                                                          : axes::anyOrthogonal(A.u));
  addContact(out, ga, gb, featureAt(A, s), Ma, featureAt(B, t), Mb, hint);
}

}  // namespace narrowphase
}  // namespace rigidiff
