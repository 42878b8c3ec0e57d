// Squared distance between point p and the triangle (t0, t1, t2), its gradient (12) and Hessian
// (12 x 12) with respect to (p, t0, t1, t2), and the classification that picks the closed form
// (point–point with a vertex, point–line with an edge, point–plane). The derivatives of the Auto type
// are those of the classified form.
#pragma once

#include "rigidiff/collision/distance/distance_types.hpp"
#include "rigidiff/fwd.hpp"

namespace rigidiff {

/// The feature of the triangle closest to p. Throws std::invalid_argument for a triangle of zero area
/// (collinear vertices), whose regions are not defined.
PointTriangleDistanceType pointTriangleDistanceType(const Vec3& p, const Vec3& t0, const Vec3& t1, const Vec3& t2);

double pointTriangleDistance(const Vec3& p, const Vec3& t0, const Vec3& t1, const Vec3& t2,
                             PointTriangleDistanceType type = PointTriangleDistanceType::Auto);
Vec12 pointTriangleDistanceGradient(const Vec3& p, const Vec3& t0, const Vec3& t1, const Vec3& t2,
                                    PointTriangleDistanceType type = PointTriangleDistanceType::Auto);
Mat12 pointTriangleDistanceHessian(const Vec3& p, const Vec3& t0, const Vec3& t1, const Vec3& t2,
                                   PointTriangleDistanceType type = PointTriangleDistanceType::Auto);

}  // namespace rigidiff
