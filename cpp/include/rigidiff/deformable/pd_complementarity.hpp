// DiffPD's complementarity contact (Du et al. 2021, Sec. 5.2; docs/deformable.md) on the ground planes, balls and
// boxes: a surface vertex in the active set is held on its pair's plane, n . x = offset, and is free in the
// plane's tangent directions; the step minimises g on that affine subspace, and the active set is updated by the
// paper's rule (pairs whose normal force pulls leave, vertices inside an obstacle join) until it no longer
// changes. A ground plane holds a vertex on itself; a ball or box on its tangent plane at the point nearest where
// the vertex slides to from its start, moved along the normal by the obstacle's surface velocity over the step
// (pdHoldingPlane): the obstacle is convex, so a vertex on that plane is on or outside it. The inverse of the PD
// matrix on the subspace comes from its factor and a Schur complement over the active pairs (no refactorisation
// when the set changes), and the adjoint is the same solve projected on the subspace, chained through the planes
// to the start and the obstacles' poses.
#pragma once

#include <vector>

#include "rigidiff/deformable/pd_model.hpp"

namespace rigidiff {
namespace deformable {

/// A vertex within this distance (m) of its holding plane touches it: it starts the step in the active set and
/// rubs on the obstacle with friction. Vertices deeper than this inside an obstacle at a step's end join the set.
constexpr double kContactGap = 1e-9;

/// The most active-set iterations of a step (each a full minimisation); more mean a set that cycles.
constexpr int kMaxActiveSetIterations = 50;

/// The plane obstacle o holds a vertex starting at q with velocity v on (normal . x = offset): a ground plane
/// itself; a ball's or box's tangent plane at its point nearest where the vertex slides to, q + dt (v - u(q)) less
/// its component along the normal at q (u: the obstacle's surface velocity), a box's face or the way to its nearest
/// edge or corner when that point is further than kContactGap from it, moved along the normal by the tangent
/// point's velocity over the step.
void pdHoldingPlane(const PdModel& model, int o, const Vec3& q, const Vec3& v, Vec3* normal, double* offset);

/// The signed distance of x to obstacle o moved by its velocity over the step (to first order in its rotation).
double pdAdvancedDistance(const PdModel& model, int o, const Vec3& x);

/// The pairs (free surface vertex, obstacle) whose holding plane (from the start q, v) x is within kContactGap
/// of, or below if `below` (the start: a vertex inside an obstacle is put on it), sorted by vertex, with their
/// planes.
void pdTouchingPairs(const PdModel& model, const Points& q, const Points& v, const Points& x, bool below,
                     PdActiveSet& active);

/// Builds the active set's columns and Schur factor from data.factor, unless they are current.
/// runtime_error if the Schur complement is singular (two pairs of a vertex on parallel planes).
void pdActiveSetFactorise(const PdModel& model, const PdData& data, PdActiveSet& active);

/// The inverse of the PD matrix on the active set's subspace applied to g (stacked as pdSolve): the minimiser of
/// u^T A u / 2 - g^T u with the active vertices' normal components zero.
VecX pdConstrainedSolve(const PdModel& model, const PdData& data, const VecX& g);

/// Removes, in place, the components of g (stacked as pdSolve) along the active vertices' plane normals.
void pdProjectOnActiveSet(const PdModel& model, const PdActiveSet& active, VecX& g);

/// Moves the active vertices of xf (stacked as pdSolve) onto their pairs' planes, along the normals.
void pdPlaceOnPlanes(const PdModel& model, const PdActiveSet& active, VecX& xf);

/// The normal force on each active pair (pairs order) for the gradient g of the potential (stacked as pdSolve):
/// the multipliers of grad g = sum lambda n at each active vertex.
VecX pdActiveForces(const PdModel& model, const PdActiveSet& active, const VecX& g);

/// The sparse projector onto the active set's subspace, P (3 free_count square, stacked as pdSolve), and
/// K = P H P + I - P for a matrix H: positive definite where H is on the subspace, and K^-1 P b solves the
/// constrained system (the Newton-Cholesky baseline's direction and adjoint).
Eigen::SparseMatrix<double> pdConstrainedMatrix(const PdModel& model, const PdActiveSet& active,
                                                const Eigen::SparseMatrix<double>& H);

/// The active-set rule: keeps the pairs whose force is >= -force_tolerance, adds the pairs of vertices inside an
/// obstacle (pdAdvancedDistance) by more than kContactGap at x (n x 3), their planes from the start q, v.
/// Returns the new set's pairs (without factors).
PdActiveSet pdNextActiveSet(const PdModel& model, const PdActiveSet& active, const VecX& forces, const Points& q,
                            const Points& v, const Points& x, double force_tolerance);

/// One update of data.active by the rule (pdNextActiveSet) from the forces and positions x (n x 3) of a solution:
/// returns 0 if the set is unchanged (settled), 1 if it changed, -1 if it cycles. seen holds the sets met so far
/// in this step (empty at the first call); a set met before is replaced by the current one with the new pairs
/// added and none removed, and if that is the current set, with only its most pulling pair removed; if that too
/// was met, the set cycles.
int pdUpdateActiveSet(const PdModel& model, PdData& data, const VecX& forces, const Points& x,
                      double force_tolerance, std::vector<std::vector<int>>& seen);

/// Adds to gq, gv (n x 3) and grad_obstacles (6 per obstacle) the cotangents through the balls' and boxes'
/// holding planes (which depend on the start q, v and the poses) of the adjoint Z (n x 3) of a step whose solution
/// x has the normal forces `forces` (pairs order), residual = b - H z (n x 3) at the held vertices.
void pdHoldingPlaneCotangents(const PdModel& model, const PdActiveSet& active, const Points& q, const Points& v,
                              const Points& x, const Points& Z, const Points& residual, const VecX& forces, Points& gq,
                              Points& gv, VecX& grad_obstacles);

/// Adds to gq, gv, gf (n x 3) and to data's parameter cotangents those through the friction's normal forces
/// lambda = n . start_gradient of the complementarity's contacts, given dL/dlambda per friction contact
/// (data.friction order; zero for the penalty's).
void pdStartForceCotangents(const PdModel& model, PdData& data, const VecX& per_lambda, Points& gq, Points& gv,
                            Points& gf, VecX& gE, VecX& gnu);

/// Adds to gq, gv, gf (n x 3) and to data's parameter cotangents those of the start's gradient data.start_gradient
/// (n x 3) given its cotangent W (n x 3).
void pdStartGradientCotangents(const PdModel& model, PdData& data, const Points& W, Points& gq, Points& gv,
                               Points& gf, VecX& gE, VecX& gnu);

}  // namespace deformable
}  // namespace rigidiff
