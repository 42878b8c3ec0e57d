// Time stepping: semi-implicit Euler with linearly implicit joint damping and springs.
#pragma once

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "rigidiff/multibody/data.hpp"

namespace rigidiff {

/// Does a change of tau[k] reach the step? Inside the effort limit, its boundary included, and never for a
/// joint whose limit is zero: the clip holds its torque at zero, so it is unactuated.
inline bool torqueActs(const Model& model, int k, double tau_k) {
  const double limit = model.effort_limit[k];
  return limit > 0.0 && std::abs(tau_k) <= limit;
}

/// One step of length dt (docs/conventions.md):
///   tau_c = clip(tau, +-effort_limit)
///   (M + dt D + dt^2 K) (v' - v) = dt (tau_c - b(q, v) - D v - K (d + dt v) + J^T f)
///   q' = integrate(q, dt v', Motion::Step)
/// with D, K the joint damping and stiffness (diagonal), d = difference(rest_position, q) and b the
/// bias forces; damping and springs are thus implicit (stable for any dt), as in MuJoCo's Euler.
/// Free joints move on R^3 x SO(3) (world/free_joint_motion.hpp): v' above holds their frame-turn shift,
/// and their linear velocities are re-expressed in their new frames at the end.
/// \param[in] q (model.nq), v (model.nv), tau (model.nv)
/// \param[in] frame_wrenches (nframes x 6) world-axes wrenches at the frame origins, or nullptr
/// \param[out] q_out (model.nq), v_out (model.nv); may not alias the inputs
/// Throws runtime_error if the new state is not finite.
void step(const Model& model, Data& data, const double* q, const double* v, const double* tau, double dt,
          const double* frame_wrenches, double* q_out, double* v_out);

/// The velocity of a step without constraint impulses (the first half of step(), free joints' frame-turn
/// shift included); leaves the articulated-body factorisation of M + dt D + dt^2 K in data (see
/// computeMinverseFromFactorization) and the acceleration in data.ddq.
void freeVelocity(const Model& model, Data& data, const double* q, const double* v, const double* tau, double dt,
                  const double* frame_wrenches, double* v_out);

/// The second half of step(): q_out = integrate(q, dt v_out, Motion::Step), v_out's free joints
/// re-expressed in place (data.v_step keeps v_out as it came in), and the finiteness checks.
void finishStep(const Model& model, Data& data, const double* q, double dt, double* q_out, double* v_out);

/// Rethrows a step's error prefixed by the step: "rollout step t of T (a state the rollout reached): ...".
[[noreturn]] void throwAtRolloutStep(long t, long T, const std::runtime_error& error);

/// T steps chained from (q0, v0) into Q ((T + 1) x nq) and V ((T + 1) x nv), starting with q0 and v0:
/// step(q, v, tau, q_next, v_next) advances row t of Q and V under row t of taus into row t + 1. The
/// rollouts of every integrator are this loop. A step that fails after the first names its step: the
/// state it started from came from the rollout (usually diverging), not from the caller.
template <typename Step>
void chainSteps(const Model& model, const double* q0, const double* v0, const double* taus, int T, double* Q,
                double* V, const Step& step) {
  const long nq = model.nq, nv = model.nv;
  std::copy(q0, q0 + nq, Q);
  std::copy(v0, v0 + nv, V);
  for (long t = 0; t < T; ++t) {
    try {
      step(Q + t * nq, V + t * nv, taus + t * nv, Q + (t + 1) * nq, V + (t + 1) * nv);
    } catch (const std::runtime_error& error) {
      if (t == 0) throw;
      throwAtRolloutStep(t, T, error);
    }
  }
}

/// T steps from (q0, v0) under taus (T x nv, row-major); writes Q (T+1 x nq) and V (T+1 x nv).
void rollout(const Model& model, Data& data, const double* q0, const double* v0, const double* taus, int T, double dt,
             double* Q, double* V);

}  // namespace rigidiff
