// The contact part of a barrier world (barrier_world.hpp): which surface pairs are within dhat, their
// barrier energy with its gradient and PSD-projected Hessian in the bodies' coordinates, the largest
// collision-free fraction of a move (additive CCD), and the intersection test of a start state.
#pragma once

#include "rigidiff/world/barrier_world.hpp"

namespace rigidiff {

/// H with its negative eigenvalues set to zero (the nearest PSD matrix): each element Hessian of a
/// projected Newton step.
Mat12 projectToPsd(const Mat12& H);

/// The body's index, or -1 when it is a static participant (its coordinates are not unknowns of the step).
int movingBody(const BarrierWorldModel& model, int body);

/// data.x[i] = the world positions of body i's vertices at q (size model.nq()).
void barrierPositions(const BarrierWorldModel& model, const double* q, std::vector<std::vector<Vec3>>& x);

/// data.candidates = every primitive pair of different bodies (point–triangle both ways, edge–edge) and every
/// point–plane pair whose boxes, grown by margin (>= 0), overlap: at the positions data.x (swept = false), or
/// swept from data.x to data.x_end, so that the candidates of margin dhat hold every pair within dhat at any
/// point of that linear move. Body pairs come from a sweep and prune over the bodies' boxes; only bodies
/// whose boxes overlap have their primitives paired.
void barrierCandidates(const BarrierWorldModel& model, BarrierWorldData& data, bool swept, double margin);

/// data.pairs = the pairs of data.candidates whose squared distance at data.x is below dhat^2. Returns the
/// smallest squared distance over them (+inf when there is none).
double pairsFromCandidates(const BarrierWorldModel& model, BarrierWorldData& data);

/// data.pairs = every point–triangle and edge–edge pair of different bodies, and point–plane pair, whose
/// squared distance at the positions data.x is below dhat^2 (the candidates of data.x, then their distances).
/// Returns the smallest squared distance over them (+inf when there is none).
double collectBarrierPairs(const BarrierWorldModel& model, BarrierWorldData& data);

/// The barrier sum sum_k b(d_k^2) (unscaled by kappa) of data.pairs at data.x; when grad (model.nq()) is
/// given adds weight * its gradient to it; when hessian is given adds weight * the Hessian, each pair's
/// Hessian block projected to positive semi-definite in the points' coordinates first (project), or exact.
/// With shat_derivative, the value and gradient are instead their derivatives in shat = dhat^2 (pairs and
/// positions held; no Hessian): what a change of dhat does to the barrier at fixed positions.
double barrierPotential(const BarrierWorldModel& model, BarrierWorldData& data, double weight, double* grad,
                        BlockHessian* hessian, bool project = true, bool shat_derivative = false);

/// The sum of the values in sums (the last barrierPotential's or frictionPotential's); adds their gradients
/// to grad (model.nq(), or null) and their Hessians to hessian (or null), static bodies left out.
double addPairSums(const BarrierWorldModel& model, const PairTermSums& sums, double* grad, BlockHessian* hessian);

/// h (24 x 24: body a's coordinates, then body b's) += weight J^T H J for the Hessian H (3 npts square) of
/// npts points, point k at body coordinates xbar[k] of the body in slot[k] (0: a, 1: b): the affine map's
/// Kronecker structure, J_k = [I3 | I3 (x) xbar_k^T], without forming J.
void addPointHessian(const Mat12& H, const Vec3* xbar, const int* slot, int npts, double weight, Mat24& h);

/// The largest alpha in (0, 1] such that moving every body from q to q + alpha dq (linear in alpha for
/// affine bodies) keeps every surface pair and every point–plane pair apart (additive CCD, conservative).
double collisionFreeStep(const BarrierWorldModel& model, BarrierWorldData& data, const double* q, const double* dq);

/// collisionFreeStep for the move from data.x to data.x_end, given data.candidates of that move (swept, any
/// margin >= 0): each candidate whose swept boxes overlap is tested by CCD, with the step so far as its
/// time limit so that it stops early. deviation (one per body, or null: none) bounds how far each body's
/// points may stray from the straight lines of the move: a pair then keeps deviation[a] + deviation[b] apart
/// along the lines and a point keeps deviation[a] off a plane, so that the true paths never meet.
double collisionFreeStepOfCandidates(const BarrierWorldModel& model, BarrierWorldData& data,
                                     const double* deviation = nullptr);

/// invalid_argument naming the bodies if two bodies' surfaces cross or touch, one lies inside another, or a
/// body touches or crosses a ground plane at q.
void checkIntersectionFree(const BarrierWorldModel& model, BarrierWorldData& data, const double* q);

/// The diagonal of the box around every body's vertices at data.x (1 if there are none).
double sceneDiagonal(const BarrierWorldModel& model, const BarrierWorldData& data);

}  // namespace rigidiff
