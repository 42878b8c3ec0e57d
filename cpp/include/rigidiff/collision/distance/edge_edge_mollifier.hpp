// The mollifier that fades the edge–edge barrier out as two edges become parallel (where their
// squared distance stops being smooth): with x = |(ea1 - ea0) x (eb1 - eb0)|^2,
//   m(x) = -x^2 / eps_x^2 + 2 x / eps_x   for x < eps_x,   1 otherwise,
// which is C1 at eps_x. Its gradient (12) and Hessian (12 x 12) are with respect to (ea0, ea1, eb0, eb1),
// eps_x held fixed; eps_x itself comes from the rest positions (threshold).
#pragma once

#include "rigidiff/collision/distance/distance_types.hpp"
#include "rigidiff/fwd.hpp"

namespace rigidiff {

/// eps_x = kEdgeEdgeMollifierScale |ea1 - ea0|^2 |eb1 - eb0|^2 at rest, with its derivatives with respect to
/// the rest positions.
constexpr double kEdgeEdgeMollifierScale = 1e-3;

double edgeEdgeMollifierThreshold(const Vec3& ea0, const Vec3& ea1, const Vec3& eb0, const Vec3& eb1);
Vec12 edgeEdgeMollifierThresholdGradient(const Vec3& ea0, const Vec3& ea1, const Vec3& eb0, const Vec3& eb1);
Mat12 edgeEdgeMollifierThresholdHessian(const Vec3& ea0, const Vec3& ea1, const Vec3& eb0, const Vec3& eb1);

double edgeEdgeMollifier(const Vec3& ea0, const Vec3& ea1, const Vec3& eb0, const Vec3& eb1, double eps_x);
Vec12 edgeEdgeMollifierGradient(const Vec3& ea0, const Vec3& ea1, const Vec3& eb0, const Vec3& eb1, double eps_x);
Mat12 edgeEdgeMollifierHessian(const Vec3& ea0, const Vec3& ea1, const Vec3& eb0, const Vec3& eb1, double eps_x);

}  // namespace rigidiff
