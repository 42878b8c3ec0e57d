// Squared distance between point p and the plane through t0, t1, t2, its gradient (12) and Hessian
// (12 x 12) with respect to (p, t0, t1, t2). Undefined (NaN) when the three points are collinear.
#pragma once

#include "rigidiff/collision/distance/distance_types.hpp"
#include "rigidiff/fwd.hpp"

namespace rigidiff {

double pointPlaneDistance(const Vec3& p, const Vec3& t0, const Vec3& t1, const Vec3& t2);
Vec12 pointPlaneDistanceGradient(const Vec3& p, const Vec3& t0, const Vec3& t1, const Vec3& t2);
Mat12 pointPlaneDistanceHessian(const Vec3& p, const Vec3& t0, const Vec3& t1, const Vec3& t2);

}  // namespace rigidiff
