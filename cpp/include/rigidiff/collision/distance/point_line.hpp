// Squared distance between point p and the infinite line through e0 and e1, its gradient (9) and
// Hessian (9 x 9) with respect to (p, e0, e1). Undefined (NaN) when e0 == e1.
#pragma once

#include "rigidiff/collision/distance/distance_types.hpp"
#include "rigidiff/fwd.hpp"

namespace rigidiff {

double pointLineDistance(const Vec3& p, const Vec3& e0, const Vec3& e1);
Vec9 pointLineDistanceGradient(const Vec3& p, const Vec3& e0, const Vec3& e1);
Mat9 pointLineDistanceHessian(const Vec3& p, const Vec3& e0, const Vec3& e1);

}  // namespace rigidiff
