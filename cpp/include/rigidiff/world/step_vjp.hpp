// Reverse mode of the time step and of rollouts: gradients without forming any Jacobian.
#pragma once

#include "rigidiff/multibody/data.hpp"

namespace rigidiff {

/// Where stepVJP adds its cotangents (+=); a nullptr output is skipped.
struct StepCotangents {
  double* q = nullptr;          ///< (nv) tangent space
  double* v = nullptr;          ///< (nv)
  double* tau = nullptr;        ///< (nv)
  double* theta = nullptr;      ///< (10 (njoints - 1)) inertiaParameters of each joint (regressor.hpp)
  double* armature = nullptr;   ///< (nv)
  double* damping = nullptr;    ///< (nv)
  double* stiffness = nullptr;  ///< (nv)
  double* gravity = nullptr;    ///< (3)
};

/// Steps like stepDerivatives (writing q_out, v_out) and adds to `out` the products J^T g of the
/// step's Jacobians with the cotangents g = (gq_next (nv, tangent space), gv_next (nv)) of
/// (q', v'), in O(n): with lambda = (M + E)^-1 dt (gv' + dt dIntegrate_dv^T gq'),
///   d/dtau = lambda inside the effort limits, d/dv = gv' + dt dIntegrate_dv^T gq' - (d rnea/dv)^T lambda
///   - (D + dt K) lambda, d/dq = dIntegrate_dq^T gq' - (d rnea/dq)^T lambda - (K dDifference)^T lambda,
///   d/dp = -(dr/dp)^T lambda for the parameters (step_parameter_derivatives.hpp).
/// frame_wrenches (nframes x 6, or nullptr) as in step().
void stepVJP(const Model& model, Data& data, const double* q, const double* v, const double* tau, double dt,
             const double* gq_next, const double* gv_next, double* q_out, double* v_out, const StepCotangents& out,
             const double* frame_wrenches = nullptr);

/// The residual's springs and external wrenches in the configuration cotangent, with lambda = data.lam:
/// g_q -= (K dDifference(rest, q)/dq)^T lambda + (d(-sum J^T w)/dq)^T lambda (scratch: data.dq_tmp,
/// data.vjp_tmp). Shared with the constrained reverse mode (contact_step_vjp.hpp).
void subtractSpringAndWrenchVJP(const Model& model, Data& data, const double* q, const double* frame_wrenches,
                                double* g_q);

/// The parameters' part of the reverse mode, with lambda = data.lam at the acceleration a (nv) and
/// g_grav, data.vjp_theta from rneaVJP with lambda: out.theta -= Y^T lambda, out.gravity -= g_grav,
/// out.armature -= lambda a, out.damping -= lambda (v + dt a), out.stiffness -= lambda (q - rest + dt v
/// + dt^2 a) (step_parameter_derivatives.hpp's residual derivatives). Shared with contact_step_vjp.hpp.
void subtractParameterVJP(const Model& model, Data& data, const double* q, const double* v, const double* a,
                          double dt, const Vec3& g_grav, const StepCotangents& out);

/// The parameter cotangents of `groups` (step_parameter_derivatives.hpp) as consecutive slices of g
/// (stepParameterCount(model, groups) entries, not zeroed), in the order of the parameter Jacobians.
StepCotangents parameterCotangentSlices(const Model& model, int groups, double* g);

/// Reverse pass over a recorded rollout: Q (T+1 x nq) and V (T+1 x nv) from rollout() under taus
/// (T x nv). GQ (T+1 x nv, tangent space) and GV (T+1 x nv) are the gradients of a loss with respect
/// to every recorded state. Writes g_taus (T x nv) and adds to `out` the gradients with respect to
/// (q0, v0) and the parameters (out.tau is ignored). Memory: the recorded states only; each step is
/// recomputed once. Throws runtime_error if the recomputed steps do not reproduce Q and V.
void rolloutBackward(const Model& model, Data& data, const double* Q, const double* V, const double* taus, int T,
                     double dt, const double* GQ, const double* GV, double* g_taus, const StepCotangents& out);

/// The check of a reverse pass: data.q_next, data.v_next (step t recomputed) equal the recorded state t + 1
/// (qr, vr) to 1e-9 relative; runtime_error otherwise.
void checkReplayedStep(const Model& model, const Data& data, const double* qr, const double* vr, int t);

/// The reverse sweep of rolloutBackward, for any step: for t = T - 1 down to 0,
/// step_vjp(t, gq_next, gv_next, g_q, g_v, g_tau) steps from recorded state t into data.q_next and
/// data.v_next (checked against state t + 1) and adds the cotangents of (q_t, v_t, tau_t) to g_q, g_v
/// (nv each) and g_tau (row t of g_taus, zeroed first). Adds those of (q0, v0) to out.q, out.v.
template <typename StepVjp>
void sweepRecordedRollout(const Model& model, Data& data, const double* Q, const double* V, int T, const double* GQ,
                          const double* GV, double* g_taus, const StepCotangents& out, StepVjp&& step_vjp) {
  const int nq = model.nq, nv = model.nv;
  // carry_* hold the cotangent of state t + 1, carry_*2 collect that of state t
  data.carry_q = Eigen::Map<const VecX>(GQ + static_cast<long>(T) * nv, nv);
  data.carry_v = Eigen::Map<const VecX>(GV + static_cast<long>(T) * nv, nv);
  for (int t = T - 1; t >= 0; --t) {
    const long o = static_cast<long>(t) * nv;
    data.carry_q2 = Eigen::Map<const VecX>(GQ + o, nv);
    data.carry_v2 = Eigen::Map<const VecX>(GV + o, nv);
    Eigen::Map<VecX>(g_taus + o, nv).setZero();
    step_vjp(t, data.carry_q.data(), data.carry_v.data(), data.carry_q2.data(), data.carry_v2.data(), g_taus + o);
    checkReplayedStep(model, data, Q + static_cast<long>(t + 1) * nq, V + o + nv, t);
    data.carry_q.swap(data.carry_q2);
    data.carry_v.swap(data.carry_v2);
  }
  if (out.q) Eigen::Map<VecX>(out.q, nv) += data.carry_q;
  if (out.v) Eigen::Map<VecX>(out.v, nv) += data.carry_v;
}

}  // namespace rigidiff
