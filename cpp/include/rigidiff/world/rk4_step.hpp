// The classical fourth-order Runge-Kutta step (World(integrator="rk4"), docs/conventions.md): for smooth,
// contact-free dynamics, where accuracy matters more than the cost of four forward dynamics per step.
#pragma once

#include "rigidiff/multibody/data.hpp"
#include "rigidiff/world/step_vjp.hpp"

namespace rigidiff {

inline constexpr double kRk4Weight[4] = {1.0, 2.0, 2.0, 1.0};  ///< of the four stages in the final sum (over 6)
inline constexpr double kRk4Next[3] = {0.5, 0.5, 1.0};         ///< where the next stage starts, in units of dt

/// The buffers of the RK4 step and its Jacobians, sized once from the model: no step allocates.
struct Rk4Workspace {
  /// with parameters, also the buffers of the parameter Jacobians (nv x stepParameterCount of every group)
  explicit Rk4Workspace(const Model& model, bool parameters = false);
  VecX q_stage;  ///< (nq) the configuration of the current stage
  VecX v_stage, a_stage, dq, scratch, v_sum, a_sum;  ///< (nv)
  /// (nv x 3 nv) derivatives with respect to (q, v, tau) (q in the tangent space) of the current stage's
  /// configuration, velocity and acceleration, of the weighted sums, and a scratch; after a step with
  /// Jacobians, DQ and DV hold those of (q', v')
  MatX DQ, DV, DA, DV_sum, DA_sum, tmp;
  VecX g;  ///< (3 nv) a cotangent of (q, v, tau)
  /// the four stages of the last step: configurations (nq x 4), velocities and accelerations (nv x 4)
  MatX stage_q, stage_v, stage_a;
  /// reverse mode: cotangents of the stage velocities and accelerations (nv x 4), and scratch (nv)
  MatX g_stage_v, g_stage_a;
  VecX lam, g_q, g_v, g_tmp;
  /// parameter Jacobians (nv x np, leading columns used), as DQ...DA_sum: after rk4StepParameterDerivatives,
  /// DQp and DVp hold d(q', v')/dp; Rp holds a stage's residual derivative dr/dp
  MatX DQp, DVp, DAp, DVp_sum, DAp_sum, Rp;
};

/// One RK4 step of length dt of x = (q, v), x' = (v, a(q, v, tau)), with
///   a = (M + armature)^-1 (tau_c - b(q, v) - D v - K difference(rest_position, q) + sum_b J_b^T w_b)
/// (forward dynamics with the passive terms explicit; tau_c clipped to the effort limits; torques and
/// frame wrenches held over the step). Stage i starts at (q_i, v_i) and evaluates k_i = (v_i, a_i):
///   q_1 = q, v_1 = v;  q_{i+1} = integrate(q, c_i dt v_i), v_{i+1} = v + c_i dt a_i  (c = 1/2, 1/2, 1);
///   q' = integrate(q, dt/6 (v_1 + 2 v_2 + 2 v_3 + v_4)),  v' = v + dt/6 (a_1 + 2 a_2 + 2 a_3 + a_4),
/// integrate on the joint groups (Motion::Group; a free joint on SE(3)): the Lie-group RK4 whose
/// stages add tangent vectors without the dexp^-1 correction (RKMK of order 0). Fourth order for joints
/// whose group is commutative (revolute, prismatic, ...), second order for the rotations of ball and free
/// joints. No constraint rows: a world that needs them must not call this (the Python layer refuses).
/// \param[out] q_out (model.nq), v_out (model.nv); may not alias the inputs. Throws runtime_error if
/// the new state is not finite.
void rk4Step(const Model& model, Data& data, Rk4Workspace& ws, const double* q, const double* v, const double* tau,
             double dt, const double* frame_wrenches, double* q_out, double* v_out);

/// rk4Step and its exact Jacobians: the four stages' forward-dynamics derivatives chained through the
/// stage updates (integrate's Jacobians for the configurations), dense (nv x 3 nv per stage). Leaves
/// d(q', v')/d(q, v, tau) in ws.DQ, ws.DV (columns: q, v, tau; q and q' in the tangent space).
void rk4StepDerivatives(const Model& model, Data& data, Rk4Workspace& ws, const double* q, const double* v,
                        const double* tau, double dt, const double* frame_wrenches, double* q_out, double* v_out);

/// rk4StepDerivatives and the Jacobians with respect to the parameters of `groups` (StepParameterGroup,
/// step_parameter_derivatives.hpp; columns in its order) into ws.DQp, ws.DVp (leading columns): each stage's
/// da/dp = -M^-1 (dr/dp + dr/dq DQp + dr/dv DVp), with r = rnea + armature a + D v + K d - tau_c - J^T w
/// (dr/dtheta the regressor). Needs a workspace made with parameters.
void rk4StepParameterDerivatives(const Model& model, Data& data, Rk4Workspace& ws, const double* q, const double* v,
                                 const double* tau, double dt, const double* frame_wrenches, int groups,
                                 double* q_out, double* v_out);

/// Steps like rk4Step and adds to out.q, out.v, out.tau the products J^T g of the step's Jacobians with
/// the cotangents g = (gq_next, gv_next) of (q', v'). In O(n) per stage, without forming a Jacobian: the
/// reverse sweep of the four stages, each a forward-dynamics VJP (lambda = M^-1 g_a, then the transposed
/// rnea derivatives, as stepVJP), through integrate's transposed Jacobians. Parameter cotangents
/// (out.theta, ...) as in stepVJP. Like stepVJP, not for models with a universal core joint (invalid_argument).
void rk4StepVJP(const Model& model, Data& data, Rk4Workspace& ws, const double* q, const double* v, const double* tau,
                double dt, const double* gq_next, const double* gv_next, double* q_out, double* v_out,
                const StepCotangents& out, const double* frame_wrenches = nullptr);

/// T RK4 steps from (q0, v0) under taus (T x nv); writes Q (T+1 x nq) and V (T+1 x nv).
void rk4Rollout(const Model& model, Data& data, Rk4Workspace& ws, const double* q0, const double* v0,
                const double* taus, int T, double dt, double* Q, double* V);

/// Reverse pass over a recorded RK4 rollout, arguments as rolloutBackward (world/step_vjp.hpp): each step
/// is recomputed and swept backwards as in rk4StepVJP (rk4_step_vjp.cpp), parameters included.
void rk4RolloutBackward(const Model& model, Data& data, Rk4Workspace& ws, const double* Q, const double* V,
                        const double* taus, int T, double dt, const double* GQ, const double* GV, double* g_taus,
                        const StepCotangents& out);

}  // namespace rigidiff
