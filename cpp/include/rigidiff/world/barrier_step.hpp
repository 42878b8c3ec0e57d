// The step of a barrier world (barrier_world.hpp): implicit Euler as a minimisation (IPC),
//   q' = argmin E(q),  E(q) = 1/2 (q - qt)^T M (q - qt) - dt^2 f^T q + dt^2 sum_i kappa_i V_i ||A_i A_i^T - I||^2
//                             + kappa_B sum_k b(d_k^2(q)) + D(q),     qt = q_n + dt v_n,
// f = gravity + tau (held over the step), D the lagged friction (barrier_friction.hpp), then
// v' = (q' - q_n) / dt. Newton's method with each element
// Hessian projected to PSD, a sparse LDL^T solve, and a backtracking line search that starts from the
// largest collision-free fraction of the Newton step (additive CCD), so every iterate is intersection-free.
#pragma once

#include <algorithm>
#include <cmath>

#include "rigidiff/macros.hpp"
#include "rigidiff/world/barrier_world.hpp"

namespace rigidiff {

/// The largest move of a surface vertex when the bodies' coordinates change by dq (model.nq()).
double largestVertexMove(const BarrierWorldModel& model, const VecX& dq);

/// The backtracking of a step's line search: from alpha (the largest collision-free fraction of the Newton step)
/// halves alpha until evaluate(alpha), the energy at that fraction, is at most energy (up to rounding); returns
/// that energy, alpha updated. runtime_error naming the Newton iteration and its residual when alpha falls
/// below 1e-14.
template <class Evaluate>
double backtrackingLineSearch(const BarrierWorldModel& model, double& alpha, double energy, int iteration,
                              double residual, Evaluate&& evaluate) {
  const double slack = 1e-14 * std::max(1.0, std::abs(energy));
  if (!(alpha > 0.0))  // CCD found a contact at the very start of the move: the Newton move is far too large
    RD_THROW(std::runtime_error, "barrier step: no part of the Newton move of iteration "
                                     << iteration << " is free of collisions (residual " << residual
                                     << "): the forces or velocities are too large for the time step");
  for (;; alpha *= 0.5) {
    if (alpha < 1e-14)
      RD_THROW(std::runtime_error, "barrier step: the line search found no decrease at Newton iteration "
                                       << iteration << " (residual " << residual << ", tolerance "
                                       << model.options.newton_tolerance << ")");
    const double trial = evaluate(alpha);
    if (trial <= energy + slack) return trial;
  }
}

/// The end of a step's Newton loop: runtime_error naming the residual if it used all its iterations, else
/// q_out = q_end, v_out = (q_end - q) / dt and the step's statistics (data.pairs, data.stats.min_distance: those
/// at q_end).
void finishBarrierStep(const BarrierWorldModel& model, BarrierWorldData& data, int iterations, double kappa,
                       double residual, const double* q, const VecX& q_end, double* q_out, double* v_out);

/// Steps (q, v) (model.nq() each) under the generalised forces tau (model.nq()) into (q_out, v_out).
/// invalid_argument for a non-finite input or an intersecting start (naming the bodies); runtime_error
/// naming the residual when Newton does not converge within options.max_newton_iterations.
void barrierStep(const BarrierWorldModel& model, BarrierWorldData& data, const double* q, const double* v,
                 const double* tau, double* q_out, double* v_out);

/// E(q) of the step from (q_n, v_n, tau) with the barrier stiffness kappa, and the friction pairs in
/// data.friction (none: frictionless); grad (model.nq()) = dE/dq when given. The barrier pairs come from
/// data.candidates when reuse_candidates (they must hold every pair within dhat at q), else from a broad
/// phase at q.
double incrementalPotential(const BarrierWorldModel& model, BarrierWorldData& data, const double* q, const double* q_n,
                            const double* v_n, const double* tau, double kappa, double* grad,
                            bool reuse_candidates = false);

}  // namespace rigidiff
