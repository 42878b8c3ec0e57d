// Squared distance between point p and the segment (e0, e1), its gradient (9) and Hessian (9 x 9) with
// respect to (p, e0, e1), and the classification that picks the closed form (point–point with an end,
// or point–line). The derivatives of the Auto type are those of the classified form.
#pragma once

#include "rigidiff/collision/distance/distance_types.hpp"
#include "rigidiff/fwd.hpp"

namespace rigidiff {

/// P_E0 / P_E1 when p projects before e0 / after e1 on the edge's line, P_E otherwise; P_E0 for a
/// zero-length edge (both ends are the same point).
PointEdgeDistanceType pointEdgeDistanceType(const Vec3& p, const Vec3& e0, const Vec3& e1);

double pointEdgeDistance(const Vec3& p, const Vec3& e0, const Vec3& e1,
                         PointEdgeDistanceType type = PointEdgeDistanceType::Auto);
Vec9 pointEdgeDistanceGradient(const Vec3& p, const Vec3& e0, const Vec3& e1,
                               PointEdgeDistanceType type = PointEdgeDistanceType::Auto);
Mat9 pointEdgeDistanceHessian(const Vec3& p, const Vec3& e0, const Vec3& e1,
                              PointEdgeDistanceType type = PointEdgeDistanceType::Auto);

}  // namespace rigidiff
