// First derivatives of a feature contact (collision/feature.hpp): how the contact point, the normal and the
// signed distance move when the points of the two features' stencils (collision/feature_stencil.hpp) move.
// This point form is what the contact layer chains through each side's point map; the twist form below is
// its chain through two rigid motions.
#pragma once

#include "rigidiff/collision/feature_stencil.hpp"

namespace rigidiff {

/// Columns of a pair's stencil derivatives: 3 per point, A's points first, then B's.
constexpr int kMaxStencilColumns = 6 * kMaxStencilPoints;
using StencilJacobian = Eigen::Matrix<double, 3, Eigen::Dynamic, Eigen::ColMajor, 3, kMaxStencilColumns>;
using StencilGradient = Eigen::Matrix<double, 1, Eigen::Dynamic, Eigen::RowMajor, 1, kMaxStencilColumns>;

/// Derivatives of a feature contact with respect to the world positions of its stencil points.
struct FeaturePointDerivatives {
  FeatureStencil a, b;        ///< the points; column 3 k + i is coordinate i of point k (B's after A's)
  StencilJacobian dpoint;     ///< of the contact point, the midpoint of the witness points
  StencilJacobian dnormal;    ///< of the unit normal (from B to A); each column is orthogonal to it
  StencilGradient ddistance;  ///< of the signed distance
};

/// Value (exactly evaluateFeatures()) and first derivatives of a feature pair under placements Ma, Mb with
/// respect to the points of both stencils, moved independently (directions and normals are the normalised
/// differences of their points, so a motion that stretches or shears a stencil is differentiated too).
///
/// The derivatives are exact for every branch evaluateFeatures() takes, including the normalisation of
/// the edge-edge normal (ua x ub) / |ua x ub| and of the centre-to-centre normals (ca - cb) / |ca - cb|,
/// and the coupling of two lines: the closest points of both lines move when either line moves.
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
/// Allocates nothing (fixed-capacity Eigen types).
/// \param[in] a, b features of A and B, in the frames of their geometries
/// \param[in] Ma, Mb world placements of the geometries of A and B
/// \param[in] fallback_normal world unit vector from B to A (see evaluateFeatures())
/// \param[out] value witness points, normal and distance
/// \param[out] deriv the stencils and the derivatives with respect to their points
void evaluateFeaturePointDerivatives(const Feature& a, const SE3& Ma, const Feature& b, const SE3& Mb,
                                     const Vec3& fallback_normal, FeatureGeometry& value,
                                     FeaturePointDerivatives& deriv);

/// Derivatives of a feature contact with respect to world-frame twists of A and B, stacked as 12
/// columns (v_a, w_a, v_b, w_b). A twist xi = (v, w) follows Pinocchio's WORLD convention: v is the
/// velocity of the body point at the world origin and w the angular velocity, so a world point x
/// fixed in the body moves at v + w x x.
struct FeatureGeometryDerivatives {
  Eigen::Matrix<double, 3, 12> dpoint;     ///< of the contact point, the midpoint of the witness points
  Eigen::Matrix<double, 3, 12> dnormal;    ///< of the unit normal (from B to A); each column is orthogonal to it
  Eigen::Matrix<double, 1, 12> ddistance;  ///< of the signed distance
};

/// evaluateFeaturePointDerivatives() chained through rigid motions of both bodies (every stencil point
/// fixed in its body).
void evaluateFeatureDerivatives(const Feature& a, const SE3& Ma, const Feature& b, const SE3& Mb,
                                const Vec3& fallback_normal, FeatureGeometry& value,
                                FeatureGeometryDerivatives& deriv);

}  // namespace rigidiff
