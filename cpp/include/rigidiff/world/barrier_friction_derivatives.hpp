// Derivatives of the lagged friction's gradient (barrier_friction.hpp), for the step's derivatives
// (barrier_step_derivatives.hpp). At the step's solution q' a pair's gradient in its bodies' coordinates is
//   F = mu lambda f1(|u|) / |u| G^T u,   u = G (q' - q_n),   G = T^T sum_k c_k J(xbar_k),
// and it depends on the start state q_n twice: through the slip's reference q_n, and through the frame
// (lambda, c_k, T) the step froze at q_n. Both are differentiated; the frame as the step computes it from
// the start positions (friction_frame.hpp, in forward-mode dual numbers), with the barrier stiffness it
// used held fixed (piecewise constant, as the step's derivatives hold it).
#pragma once

#include <vector>

#include "rigidiff/world/barrier_world.hpp"

namespace rigidiff {

/// One friction pair's part of the step's derivatives.
struct FrictionPairDerivative {
  int bodies[2] = {-1, -1};                 ///< its one or two bodies (the second -1 against a plane)
  Eigen::Matrix<double, 24, 1> unit_force;  ///< F / mu at q': its gradient at a unit friction coefficient
  Mat24 start;                              ///< dF / dq_n (24 x 24 in the bodies' coordinates), mu included
  double shat_ratio = 0.0;                  ///< (d lambda / d shat) / lambda, shat = dhat^2
};

/// The terms of every pair of data.pairs, at the start state q_n (positions data.x), that exerts a normal
/// force under the barrier stiffness kappa_start: the pairs the step's friction froze, in the same order,
/// whatever the friction coefficient (the unit forces give its derivative at mu = 0 as well).
void frictionDerivatives(const BarrierWorldModel& model, const BarrierWorldData& data, const double* q_next,
                         const double* q_n, double kappa_start,
                         std::vector<FrictionPairDerivative, Eigen::aligned_allocator<FrictionPairDerivative>>& out);

}  // namespace rigidiff
