// The contact part of a barrier world (barrier_world.hpp): which surface pairs are within dhat, their
// barrier energy with its gradient and PSD-projected Hessian in the bodies' coordinates, the largest
// collision-free fraction of a move (additive CCD), and the intersection test of a start state.
#pragma once

#include "rigidiff/world/barrier_world.hpp"

namespace rigidiff {

/// H with its negative eigenvalues set to zero (the nearest PSD matrix): each element Hessian of a
/// projected Newton step.
Mat12 projectToPsd(const Mat12& H);

/// data.x[i] = the world positions of body i's vertices at q (size model.nq()).
void barrierPositions(const BarrierWorldModel& model, const double* q, std::vector<std::vector<Vec3>>& x);

/// data.pairs = every point–triangle and edge–edge pair of different bodies, and point–plane pair, whose
/// squared distance at the positions data.x is below dhat^2. Returns the smallest squared distance over
/// them (+inf when there is none).
double collectBarrierPairs(const BarrierWorldModel& model, BarrierWorldData& data);

/// The barrier sum sum_k b(d_k^2) (unscaled by kappa) of data.pairs at data.x; when grad (model.nq()) is
/// given adds weight * its gradient to it; when triplets is given appends weight * the Hessian, each pair's
/// Hessian block projected to positive semi-definite in the points' coordinates first (project), or exact.
double barrierPotential(const BarrierWorldModel& model, BarrierWorldData& data, double weight, double* grad,
                        std::vector<Eigen::Triplet<double>>* triplets, bool project = true);

/// The largest alpha in (0, 1] such that moving every body from q to q + alpha dq (linear in alpha for
/// affine bodies) keeps every surface pair and every point–plane pair apart (additive CCD, conservative).
double collisionFreeStep(const BarrierWorldModel& model, BarrierWorldData& data, const double* q, const double* dq);

/// invalid_argument naming the bodies if two bodies' surfaces cross or touch, one lies inside another, or a
/// body touches or crosses a ground plane at q.
void checkIntersectionFree(const BarrierWorldModel& model, BarrierWorldData& data, const double* q);

/// The diagonal of the box around every body's vertices at data.x (1 if there are none).
double sceneDiagonal(const BarrierWorldModel& model, const BarrierWorldData& data);

}  // namespace rigidiff
