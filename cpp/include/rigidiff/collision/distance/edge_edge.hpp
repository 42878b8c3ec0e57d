// Squared distance between the segments (ea0, ea1) and (eb0, eb1), its gradient (12) and Hessian
// (12 x 12) with respect to (ea0, ea1, eb0, eb1), and the classification that picks the closed form
// (point–point, point–line or line–line). The derivatives of the Auto type are those of the classified
// form.
#pragma once

#include "rigidiff/collision/distance/distance_types.hpp"
#include "rigidiff/fwd.hpp"

namespace rigidiff {

/// Edges whose sin^2(angle) is below this are parallel: their closest pair is then taken between an
/// end point and the other edge, since the line–line form divides by |ea x eb|^2.
constexpr double kEdgeEdgeParallelSin2 = 2.5e-16;

/// The pair of features closest to each other. Zero-length edges are points: EA0_EB0 when both are,
/// EA0_EB (ea0 against edge B) or EA_EB0 when one is.
EdgeEdgeDistanceType edgeEdgeDistanceType(const Vec3& ea0, const Vec3& ea1, const Vec3& eb0, const Vec3& eb1);

double edgeEdgeDistance(const Vec3& ea0, const Vec3& ea1, const Vec3& eb0, const Vec3& eb1,
                        EdgeEdgeDistanceType type = EdgeEdgeDistanceType::Auto);
Vec12 edgeEdgeDistanceGradient(const Vec3& ea0, const Vec3& ea1, const Vec3& eb0, const Vec3& eb1,
                               EdgeEdgeDistanceType type = EdgeEdgeDistanceType::Auto);
Mat12 edgeEdgeDistanceHessian(const Vec3& ea0, const Vec3& ea1, const Vec3& eb0, const Vec3& eb1,
                              EdgeEdgeDistanceType type = EdgeEdgeDistanceType::Auto);

}  // namespace rigidiff
