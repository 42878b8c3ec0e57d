// Squared distance |p0 - p1|^2 between two points, its gradient (6) and Hessian (6 x 6) with respect to
// the stacked coordinates (p0, p1).
#pragma once

#include "rigidiff/fwd.hpp"

namespace rigidiff {

double pointPointDistance(const Vec3& p0, const Vec3& p1);
Vec6 pointPointDistanceGradient(const Vec3& p0, const Vec3& p1);
Mat6 pointPointDistanceHessian(const Vec3& p0, const Vec3& p1);

}  // namespace rigidiff
