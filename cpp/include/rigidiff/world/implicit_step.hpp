// The implicit-in-velocity step (World(integrator="implicit"), docs/conventions.md): backward Euler in the
// velocity, for fast spinning or fast moving parts whose Coriolis, centripetal and gyroscopic forces, explicit
// in the semi-implicit step, limit dt (that step already treats joint damping and springs implicitly).
#pragma once

#include <Eigen/LU>

#include "rigidiff/multibody/data.hpp"
#include "rigidiff/world/step_vjp.hpp"

namespace rigidiff {

/// Newton's method keeps its Jacobian while the corrections shrink by kImplicitChordRate or more per step
/// (chord steps, one rnea each) and refreshes it otherwise. It stops when a correction is below
/// kImplicitNewtonTol (1 + |w|_inf), or below kImplicitNewtonNear (1 + |w|_inf) without halving the one
/// before after steps that contracted well (the round-off floor, which the conditioning of dF/dw can hold
/// above kImplicitNewtonTol); it fails after kImplicitNewtonMaxIter iterations. Steps are halved until |F|
/// decreases, down to kImplicitMinStep of the correction (then it fails, after one retry with a fresh Jacobian).
inline constexpr double kImplicitNewtonTol = 1e-13;
inline constexpr double kImplicitNewtonNear = 1e-8;
inline constexpr double kImplicitChordRate = 0.25;
inline constexpr int kImplicitNewtonMaxIter = 30;
inline constexpr double kImplicitMinStep = 1.0 / 1024.0;

/// The buffers of the implicit step, sized once from the model: no step allocates.
struct ImplicitWorkspace {
  explicit ImplicitWorkspace(const Model& model);
  VecX w;          ///< (nv) the step velocity (v_step: free joints in the frame the step starts from)
  VecX a;          ///< (nv) (w - v) / dt - frame-turn shift(w) / dt: the acceleration the residual uses
  VecX F, dw;      ///< (nv) the residual and Newton's correction
  VecX w_prev;     ///< (nv) the iterate a line search starts from
  VecX ext;        ///< (nv) the generalized force of the frame wrenches, sum_b J_b^T w_b
  VecX rest;       ///< (nv) difference(rest_position, q)
  VecX tau_c;      ///< (nv) the torques clipped to the effort limits
  MatX J;          ///< (nv x nv) dF/dw at the last evaluation
  MatX R;          ///< (nv x nv) dF/dw^-1 after implicitStepDerivatives
  MatX tmp;        ///< (nv x nv) scratch
  Eigen::PartialPivLU<MatX> lu;  ///< of J
  int iterations = 0;            ///< Newton iterations of the last step
};

/// One implicit step of length dt. The step velocity w (free joints' linear velocity in the frame the step
/// starts from, as the semi-implicit step's v_step) solves, by Newton's method from the semi-implicit step's,
///   F(w) = rnea(q, w, a) + D w + K (d + dt w) - tau_c - sum_b J_b^T w_b = 0,
///   a = (w - v) / dt - s(w),
/// with rnea's armature, d = difference(rest_position, q), tau_c = clip(tau, +-effort_limit) and s the free
/// joints' frame-turn term (w x u, 0) (world/free_joint_motion.hpp) at w: all velocity-dependent forces
/// (Coriolis, centripetal, gyroscopic, damping) at the new velocity, the configuration-dependent ones (M,
/// gravity, springs to first order, frame wrenches) at q. Then, as the semi-implicit step,
///   q' = integrate(q, dt w, Motion::Step),  v' = w with free joints' linear velocities re-expressed.
/// With dF/dw = d rnea/dv + M (I - dt ds/dw) / dt + D + dt K, Newton's method (chord steps while they contract
/// well, a backtracking line search on |F|) converges to round-off (kImplicitNewtonTol). No constraint rows (the Python layer refuses worlds that need them); the model's
/// implicit gyroscopic maps must be off (invalid_argument): this step treats the gyroscopic term implicitly.
/// \param[out] q_out (model.nq), v_out (model.nv); may not alias the inputs. Throws runtime_error, with the
/// state, when Newton's method fails or the new state is not finite.
void implicitStep(const Model& model, Data& data, ImplicitWorkspace& ws, const double* q, const double* v,
                  const double* tau, double dt, const double* frame_wrenches, double* q_out, double* v_out);

/// implicitStep and its exact Jacobians by the implicit function theorem, dw/dx = -(dF/dw)^-1 dF/dx:
///   dw/dq = -R dF/dq,  dw/dv = R M / dt,  dw/dtau = R (inside the effort limits),  R = (dF/dw)^-1,
/// with dF/dq = d rnea/dq + K dDifference/dq - d(J^T w)/dq at (q, w, a), then the semi-implicit step's
/// position and re-expression Jacobians. Fills data.dq_dq ... data.dv_dtau as stepDerivatives does.
void implicitStepDerivatives(const Model& model, Data& data, ImplicitWorkspace& ws, const double* q,
                             const double* v, const double* tau, double dt, const double* frame_wrenches,
                             double* q_out, double* v_out);

/// implicitStepDerivatives and the Jacobians with respect to the parameters of `groups` (StepParameterGroup,
/// step_parameter_derivatives.hpp; columns in its order), dq_dp and dv_dp (nv x stepParameterCount, row-major):
/// dw/dp = -R dF/dp with dF/dp = [regressor at (q, w, a), diag(a), diag(w), diag(d + dt w), gravity Jacobian],
/// then through integrate and the re-expression as the state Jacobians.
void implicitStepParameterDerivatives(const Model& model, Data& data, ImplicitWorkspace& ws, const double* q,
                                      const double* v, const double* tau, double dt, const double* frame_wrenches,
                                      int groups, double* q_out, double* v_out, double* dq_dp, double* dv_dp);

/// Steps like implicitStep and adds to out the products J^T g with the cotangents g = (gq_next, gv_next) of
/// (q', v'): with g_w the cotangent of w, one transposed solve (dF/dw)^T lambda = g_w, then
///   g_tau += lambda (inside the effort limits), g_v += M lambda / dt, g_q -= (dF/dq)^T lambda,
/// and the parameters' g_p -= (dF/dp)^T lambda (inertia and gravity through rneaVJP; armature a, damping w,
/// stiffness d + dt w). O(nv^3) for the solve, like the step itself.
void implicitStepVJP(const Model& model, Data& data, ImplicitWorkspace& ws, const double* q, const double* v,
                     const double* tau, double dt, const double* gq_next, const double* gv_next, double* q_out,
                     double* v_out, const StepCotangents& out, const double* frame_wrenches = nullptr);

/// The parts of the above: Newton's method for w into ws.w (with final_evaluation, F, dF/dw, its
/// factorisation and dF/dq = data.dtau_dq evaluated once more at the converged w; data.M = M(q) either way) ...
void solveImplicitVelocity(const Model& model, Data& data, ImplicitWorkspace& ws, const double* q, const double* v,
                           const double* tau, double dt, const double* frame_wrenches, bool final_evaluation);
/// ... and q_out, v_out from ws.w (finishStep: data.v_step = w).
void finishImplicitStep(const Model& model, Data& data, ImplicitWorkspace& ws, const double* q, double dt,
                        double* q_out, double* v_out);

/// T implicit steps from (q0, v0) under taus (T x nv); writes Q (T+1 x nq) and V (T+1 x nv).
void implicitRollout(const Model& model, Data& data, ImplicitWorkspace& ws, const double* q0, const double* v0,
                     const double* taus, int T, double dt, double* Q, double* V);

/// Reverse pass over a recorded implicit rollout, arguments as rolloutBackward (world/step_vjp.hpp).
void implicitRolloutBackward(const Model& model, Data& data, ImplicitWorkspace& ws, const double* Q,
                             const double* V, const double* taus, int T, double dt, const double* GQ,
                             const double* GV, double* g_taus, const StepCotangents& out);

}  // namespace rigidiff
