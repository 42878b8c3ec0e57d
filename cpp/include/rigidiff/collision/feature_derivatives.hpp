// First derivatives of a feature contact (collision/feature.hpp) with respect to rigid motions of its
// two bodies: how the contact point, the normal and the signed distance move when A and B move.
#pragma once

#include "rigidiff/collision/feature.hpp"

namespace rigidiff {

/// Derivatives of a feature contact with respect to world-frame twists of A and B, stacked as 12
/// columns (v_a, w_a, v_b, w_b). A twist xi = (v, w) follows Pinocchio's WORLD convention: v is the
/// velocity of the body point at the world origin and w the angular velocity, so a world point x
/// fixed in the body moves at v + w x x.
struct FeatureGeometryDerivatives {
  Eigen::Matrix<double, 3, 12> dpoint;     ///< of the contact point, the midpoint of the witness points
  Eigen::Matrix<double, 3, 12> dnormal;    ///< of the unit normal (from B to A); each column is orthogonal to it
  Eigen::Matrix<double, 1, 12> ddistance;  ///< of the signed distance
};

/// Value (exactly evaluateFeatures()) and first derivatives of a feature pair under placements Ma, Mb.
///
/// The derivatives are exact for every branch evaluateFeatures() takes, including the normalisation of
/// the edge-edge normal (ua x ub) / |ua x ub| and of the centre-to-centre normals (ca - cb) / |ca - cb|,
/// and the coupling of two lines: the closest points of both lines move when either body moves.
///
/// Degenerate configurations, where evaluateFeatures() uses `fallback_normal` (coincident points, a
/// point on a line, coincident parallel lines): the fallback is held fixed, so `dnormal` is zero there
/// and the point and distance derivatives are those of the witness points with that normal frozen.
/// Parallel lines (not coincident) take A's reference point as witness point, as evaluateFeatures()
/// does; the derivative is that of this branch, not a limit of the crossing-lines formula (which has
/// none: the closest points of parallel lines are not unique). The sign of the edge-edge normal is
/// held (it only jumps where the normal is orthogonal to `fallback_normal`). Nothing divides by a
/// vanishing quantity, so no branch produces NaN for finite inputs.
///
/// Allocates nothing (fixed-size Eigen types).
/// \param[in] a, b features of A and B, in the frames of their geometries
/// \param[in] Ma, Mb world placements of the geometries of A and B
/// \param[in] fallback_normal world unit vector from B to A (see evaluateFeatures())
/// \param[out] value witness points, normal and distance
/// \param[out] deriv derivatives (3 x 12, 3 x 12, 1 x 12) with respect to (xi_a, xi_b)
void evaluateFeatureDerivatives(const Feature& a, const SE3& Ma, const Feature& b, const SE3& Mb,
                                const Vec3& fallback_normal, FeatureGeometry& value,
                                FeatureGeometryDerivatives& deriv);

}  // namespace rigidiff
