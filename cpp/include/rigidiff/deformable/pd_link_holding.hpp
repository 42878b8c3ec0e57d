// DiffPD's complementarity contact on the links of skeletons (docs/deformable.md, "Complementarity contact on
// links"): a surface vertex touching a link shape is held on the shape's tangent plane at the start, and that plane
// moves with the link, so the hold is a constraint on the vertex and the joints together,
//   n . x_i - G . ds = h,   G = J(s0, q_i)^T n,   h = n . q_i - d(q_i, s0),
// (n, d: the shape's outward normal and signed distance at the vertex's start q_i with the joints at s0; J: the
// link's point Jacobian there), linear in the step's unknowns: the link's motion moves the plane to first order,
// and the multiplier of the constraint pushes the vertex along n and the joints by -G (Newton's third law). The
// step minimises G(x, s) on the constraints of these pairs and of the obstacles' (pd_complementarity.hpp) at once;
// its adjoint is the same solve on the same subspace, chained through (n, G, h) to q_i and s0.
#pragma once

#include <vector>

#include "rigidiff/deformable/pd_skeleton.hpp"

namespace rigidiff {
namespace deformable {

/// Whether the skeletons' links hold vertices (a complementarity world with link shapes); otherwise the links keep
/// the penalty contact with the vertices.
bool linkHoldingEnabled(const PdModel& model, const PdSkeletons& sk);

/// The held pairs at the start into ad.holds: the free surface vertices within kContactGap of a link shape at
/// (q, s0), or inside it (put on its surface), or, given a guess (x, t) of the solution, those on their planes
/// there. Overwrites the kinematics in ad.data (at s0).
void linkHoldsStart(const PdModel& model, const PdSkeletons& sk, PdSkeletonData& ad, const Points& q, const VecX& s0,
                    const Points* guess_x, const VecX* guess_s);

/// Gathers data.active's and ad.holds' pairs as the step's constraints and factorises E^T E and the vertices' part
/// of the constrained inverse (A^-1 e_i). runtime_error if the constraints are dependent (a vertex held on two
/// parallel planes).
void linkHoldsFactorise(const PdModel& model, const PdData& data, PdSkeletonData& ad);

/// The Schur complement of the constrained inverse with the joints' block ad.preconditioner (after it changes).
void linkHoldsSchur(const PdModel& model, PdSkeletonData& ad);

/// Removes from z (free vertices stacked as pdSolve, then the joints) its components along the constraints'
/// columns (the Euclidean projection on E^T z = 0).
void linkHoldsProject(const PdModel& model, const PdSkeletonData& ad, VecX& z);

/// blockdiag(A, joints' block)^-1 on E^T u = 0 applied to g (stacked as z).
VecX linkHoldsPrecondition(const PdModel& model, const PdData& data, const PdSkeletonData& ad, const VecX& g);

/// Moves the held vertices of z onto their planes (the links' at the joints' part of z), along their normals.
void linkHoldsPlace(const PdModel& model, const PdData& data, const PdSkeletons& sk, const PdSkeletonData& ad,
                    const VecX& s0, VecX& z);

/// The normal forces of every pair (the multipliers of the vertex rows of the unprojected gradient g, stacked as
/// z) into data.active_forces and ad.holds.forces.
void linkHoldsForces(const PdModel& model, PdData& data, PdSkeletonData& ad, const VecX& g);

/// The active-set rule on the link pairs at a solution (x, s): keeps those whose force >= -force_tolerance, adds
/// the vertices deeper than kContactGap in a link shape, with their planes from the start (q, s0). Returns 0 if
/// unchanged, 1 if changed, -1 if the new set was met before (seen: the sets of this step). Overwrites ad.data.
int linkHoldsUpdate(const PdModel& model, const PdSkeletons& sk, PdSkeletonData& ad, const Points& q, const VecX& s0,
                    const Points& x, const VecX& s, double force_tolerance, std::vector<std::vector<int>>& seen);

/// Friction on the links for the vertices touching a link shape at the start (q, s0), within kContactGap or inside:
/// appended to ad.friction as pd_link_contact.cpp's lagged friction (the link's material point under the vertex),
/// its normal force the push that holds the vertex there at the start, lambda = n . data.start_gradient_i (> 0), as
/// on the obstacles. Only with friction unless always. Overwrites ad.data.
void linkHoldsFriction(const PdModel& model, const PdSkeletons& sk, PdSkeletonData& ad, const PdData& data,
                       const Points& q, const VecX& s0, bool always);

/// The adjoint's cotangents through that friction (built again, with always): for the adjoint Z (n x 3) and ws (nv)
/// of the step in data and ad, adds those of the start's vertices and joints to gq and gs0, of the start's gradient
/// (its normal forces) through pdStartGradientCotangents to gq, gv, gf, gE, gnu and data's parameters, and returns
/// mu's.
double linkHoldsFrictionCotangents(const PdModel& model, PdData& data, const PdSkeletons& sk, const PdSkeletonData& ad,
                                   const Points& Z, const VecX& ws, Points& gq, Points& gv, Points& gf, VecX& gs0,
                                   VecX& gE, VecX& gnu);

/// The vertex rows of residual (stacked as z) less the link pairs' share N mu: what the obstacles' pairs carry, for
/// pdHeldCotangents at vertices held on a link and a ball or box at once.
VecX linkHoldsObstacleResidual(const PdModel& model, const PdData& data, const PdSkeletonData& ad,
                               const VecX& residual);

/// The adjoint's cotangents through the link pairs' planes: with w (stacked as z) the adjoint on the subspace and
/// residual = b - H w (stacked as z, unprojected), their multipliers mu at each vertex give dL/dh = mu and
/// dL/dE_p = lambda_p w - mu_p z, chained to q (n x 3) and s0 (nv) of the step in data and ad.
void linkHoldsCotangents(const PdModel& model, const PdData& data, const PdSkeletons& sk, PdSkeletonData& ad,
                         const VecX& w, const VecX& residual, Points& gq, VecX& gs0);

}  // namespace deformable
}  // namespace rigidiff
