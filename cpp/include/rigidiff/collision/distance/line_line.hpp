// Squared distance between the infinite lines through (ea0, ea1) and (eb0, eb1), its gradient (12) and
// Hessian (12 x 12) with respect to (ea0, ea1, eb0, eb1). Undefined (NaN) for parallel lines.
#pragma once

#include "rigidiff/collision/distance/distance_types.hpp"
#include "rigidiff/fwd.hpp"

namespace rigidiff {

double lineLineDistance(const Vec3& ea0, const Vec3& ea1, const Vec3& eb0, const Vec3& eb1);
Vec12 lineLineDistanceGradient(const Vec3& ea0, const Vec3& ea1, const Vec3& eb0, const Vec3& eb1);
Mat12 lineLineDistanceHessian(const Vec3& ea0, const Vec3& ea1, const Vec3& eb0, const Vec3& eb1);

}  // namespace rigidiff
