// Jacobians of one time step with respect to the physical parameters of the model.
#pragma once

#include "rigidiff/multibody/data.hpp"

namespace rigidiff {

/// Parameter groups, in the column order of stepParameterDerivatives.
enum StepParameterGroup : int {
  kParamInertia = 1,    ///< 10 (njoints - 1): inertiaParameters of each joint's merged body (regressor.hpp)
  kParamArmature = 2,   ///< nv
  kParamDamping = 4,    ///< nv
  kParamStiffness = 8,  ///< nv
  kParamGravity = 16,   ///< 3
};

/// data.Jcom (3 x nv) = the transposed derivative of the gravity torques with respect to gravity,
/// -sum_i m_i J_ci^T, at q; needs data.J (world-frame subspaces) at q, as aba leaves them.
void gravityTorqueJacobian(const Model& model, Data& data, const double* q);

/// Number of columns of the groups in `groups` (a bitwise or of StepParameterGroup).
int stepParameterCount(const Model& model, int groups);

/// After stepDerivatives(model, data, q, v, tau, dt, ...) at the same state, writes the Jacobians of
/// (q', v') with respect to the parameters of `groups`, columns group by group in enum order:
/// dq_dp and dv_dp (model.nv x stepParameterCount, row-major). With the step's residual
///   r = rnea(q, v, a) + armature a + D (v + dt a) + K (d + dt v + dt^2 a) - tau_c = 0,
/// dv'/dp = -dt (M + E)^-1 dr/dp (dr/dtheta is the regressor, dr/dg = -sum_i m_i J_ci^T), and
/// dq'/dp = dt dIntegrate/d(dv) dv'/dp (Motion::Step, at data.v_step). Run after the step's state
/// Jacobians at the same state. With reexpress (the default), dv_dp is that of v' (free joints' linear
/// velocities re-expressed in their new frames); without, that of data.v_step.
void stepParameterDerivatives(const Model& model, Data& data, const double* q, const double* v, double dt, int groups,
                              double* dq_dp, double* dv_dp, bool reexpress = true);

/// The columns shared by the steps' parameter Jacobians: Dv = scale * response * dr/dp for a residual
///   r = rnea(q, v_rnea, a) + armature a + D v_damp + K x_spring + ... (terms without parameters),
/// columns of `groups` in enum order (dr/dtheta the regressor at (q, v_rnea, a), diag(a), diag(v_damp),
/// diag(x_spring), the gravity Jacobian; needs data.J at q). Dv: nv x stepParameterCount, row-major.
void residualParameterColumns(const Model& model, Data& data, const double* q, const double* v_rnea, const double* a,
                              const double* v_damp, const double* x_spring, const MatX& response, double scale,
                              int groups, double* Dv);

}  // namespace rigidiff
