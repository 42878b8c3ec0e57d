// Support points of the Minkowski difference A - B of two placed cores, shared by GJK (gjk.cpp) and EPA
// (epa.cpp). Private to those sources.
#pragma once

#include "rigidiff/collision/gjk.hpp"

namespace rigidiff {
namespace minkowski {

/// A point w = a - b of A - B with the support points a (on core A) and b (on core B) that made it (world).
struct SupportPoint {
  Vec3 w, a, b;
};

/// Two cores placed in the world.
struct Pair {
  const CollisionShape& a;
  const SE3& Ma;
  const CollisionShape& b;
  const SE3& Mb;

  /// The support point of A - B in the world direction d (not necessarily unit).
  SupportPoint support(const Vec3& d) const {
    SupportPoint s;
    s.a = Ma.actPoint(a.coreSupport(Ma.R.transpose() * d));
    s.b = Mb.actPoint(b.coreSupport(-(Mb.R.transpose() * d)));
    s.w = s.a - s.b;
    return s;
  }
};

/// EPA: grows the tetrahedron tet (support points whose hull holds the origin, inside or on its boundary)
/// into the face of A - B nearest the origin. tol: absolute distance tolerance. Writes depth, the
/// witness points and the normal of out; returns false when tet is flat (no volume to start from).
bool expandPolytope(const Pair& pair, const SupportPoint tet[4], double tol, CoreDistance& out);

}  // namespace minkowski
}  // namespace rigidiff
