// Analytic Jacobians of one time step (world/step.hpp) with respect to the state and the torques.
#pragma once

#include "rigidiff/multibody/data.hpp"

namespace rigidiff {

/// Steps like step() and fills the Jacobians of (q', v') with respect to
/// (q, v, tau), all model.nv x model.nv, q and q' in the tangent space: data.dq_dq, data.dq_dv,
/// data.dq_dtau, data.dv_dq, data.dv_dv, data.dv_dtau. With E = diag(dt D + dt^2 K) the implicit
/// passive terms, a = (M + E)^-1 r(q, v, tau) where rnea(q, v, a) + E a = r, so
///   da/dx = (M + E)^-1 (dr/dx - d rnea/dx),  v' = v + dt a,  q' = integrate(q, dt v', Motion::Step),
/// with free joints' frame-turn shift and re-expression (world/free_joint_motion.hpp).
/// The torque clip contributes d tau_c / d tau = 1 inside the effort limits, 0 outside.
/// External wrenches (world axes at the frame origins, fixed in the world while the frames move)
/// add -sum_b J_b^T w_b to r and its q-derivative (external_wrench_derivatives.hpp).
/// \param[in] q (model.nq), v (model.nv), tau (model.nv)
/// \param[in] frame_wrenches (nframes x 6) or nullptr
/// \param[out] q_out (model.nq), v_out (model.nv)
void stepDerivatives(const Model& model, Data& data, const double* q, const double* v, const double* tau, double dt,
                     double* q_out, double* v_out, const double* frame_wrenches = nullptr);

/// The velocity half of stepDerivatives at the acceleration a = data.ddq_tmp: fills data.dv_dq,
/// dv_dv, dv_dtau (and data.Minv) of the step velocity data.v_step (free joints' shift included, their
/// re-expression not: see reexpressStepJacobians). Any generalized force the step added besides tau (a constraint
/// impulse J^T f / dt) is held fixed: a = (v' - v) / dt of a constrained step gives the derivatives at
/// fixed impulses. Needs the articulated-body factorisation of M + E at q that the step's aba left
/// (or, with minv_ready, data.Minv already holding (M + E)^-1 at q).
void stepVelocityDerivatives(const Model& model, Data& data, const double* q, const double* v, const double* tau,
                             double dt, const double* frame_wrenches, bool minv_ready = false);

/// The parts of stepVelocityDerivatives: the derivatives of the step's residual at a = data.ddq_tmp
/// into data.dtau_dq (dr/dq with the rnea side's sign, springs included) and data.dtau_dv (damping
/// included), and data.Minv unless minv_ready; then dv_dq = -dt R dtau_dq, dv_dv = I - dt R dtau_dv,
/// dv_dtau = dt R (inside the effort limits) for a response matrix R ((M + E)^-1 without constraints).
void stepResidualDerivatives(const Model& model, Data& data, const double* q, const double* v, double dt,
                             const double* frame_wrenches, bool minv_ready);
void stepVelocityFromResidual(const Model& model, Data& data, const MatX& response, const double* tau, double dt);
/// dv_dtau = dt R inside the effort limits (a saturated torque has no effect): the last part of the above.
void stepTorqueDerivatives(const Model& model, Data& data, const MatX& response, const double* tau, double dt);

/// The position half: data.dq_dq, dq_dv, dq_dtau of q' = integrate(q, dt v_step, Motion::Step) from
/// data.dv_* (derivatives of data.v_step); leaves dt v_step in data.v_tmp.
void stepPositionDerivatives(const Model& model, Data& data, double dt);

/// The last part of every step Jacobian: data.dv_dq, dv_dv, dv_dtau turned from derivatives of
/// data.v_step into derivatives of v' (free joints' linear velocities re-expressed in their new frames).
void reexpressStepJacobians(const Model& model, Data& data, double dt);

}  // namespace rigidiff
