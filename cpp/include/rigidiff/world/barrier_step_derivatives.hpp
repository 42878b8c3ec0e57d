// Derivatives of the barrier step (barrier_step.hpp) by the implicit function theorem. At the step's solution
// q' the gradient of the incremental potential vanishes:
//   r(q'; q, v, tau, theta) = M (q' - q - dt v) - dt^2 (gravity + tau) + dt^2 grad V(q') + kappa grad B(q')
//                             + grad D(q'; q) = 0,
// D the lagged friction, whose frame (normal forces, closest points, tangents) is frozen at the start state q
// (barrier_friction_derivatives.hpp). With H the exact (unprojected) Hessian of E at q' and C = d grad D / dq
// (through the slip's reference and the frozen frame):
//   dq'/dq = H^-1 (M - C),  dq'/dv = dt H^-1 M,  dq'/dtau = dt^2 H^-1,  dq'/dtheta = -H^-1 dr/dtheta,
// and v' = (q' - q) / dt. The barrier stiffnesses (the start's, which the friction froze, and the end's) are
// held fixed: the step keeps them piecewise constant (powers of two). A static body's coordinates are not
// unknowns: q' = q there (v' = 0), and its q acts on the moving bodies through the exact Hessian's blocks
// between them and through the friction frames, dq'/dq_static = -H^-1 (H_coupling + C_static).
#pragma once

#include <functional>
#include <vector>

#include "rigidiff/world/barrier_friction_derivatives.hpp"
#include "rigidiff/world/barrier_world.hpp"

namespace rigidiff {

/// The parameters the step is differentiated with respect to, in this order: every body's density, every
/// body's orthogonality stiffness (kappa), then the friction coefficient, dhat and gravity (x, y, z): 2 bodies + 5
/// (a static body's two are zero). A world with skeletons follows them with the skeletons' own
/// (barrier_skeleton_parameters.hpp).
int barrierParameterCount(const BarrierWorldModel& model);

/// A block of the exact Hessian of E between a moving body (rows) and a static one (columns): how moving the
/// static participant, which the step keeps where it is, pushes on the body.
struct StaticCoupling {
  int moving = 0, fixed = 0;
  Mat12 block;
};

/// The linearisation of one step at its solution: data.ldlt holds the factors of H (a static body's block is
/// its mass matrix, decoupled), and these the rest.
struct BarrierStepLinearisation {
  std::vector<FrictionPairDerivative, Eigen::aligned_allocator<FrictionPairDerivative>> friction;
  std::vector<StaticCoupling, Eigen::aligned_allocator<StaticCoupling>> coupling;  ///< unsorted, to be summed
  MatX parameters;  ///< dr/dtheta (nq x barrierParameterCount; zero on a static body's rows)
};

/// The contact part of a step's linearisation at its solution q_next (the start (q, v), the barrier stiffnesses
/// kappa_start and kappa_end of BarrierStepStats), without factorising: data.hessian = the exact Hessian of E at
/// q_next on the moving participants (a static one's diagonal block is its mass matrix), lin.friction, lin.coupling,
/// and lin.parameters = dr/dtheta (model.nq() x (2 parameter_bodies + 2)) for the density and stiffness of the first
/// parameter_bodies bodies, then friction and dhat. data.friction is left holding the pairs frozen at q.
void linearizeBarrierContacts(const BarrierWorldModel& model, BarrierWorldData& data, const double* q, const double* v,
                              const double* q_next, double kappa_start, double kappa_end, int parameter_bodies,
                              BarrierStepLinearisation& lin);

/// Linearises the step from (q, v, tau) whose solution is q_next, taken with the barrier stiffnesses
/// kappa_start and kappa_end (BarrierStepStats): factors H at q_next in data.ldlt and fills lin.
/// runtime_error if H is singular.
void linearizeBarrierStep(const BarrierWorldModel& model, BarrierWorldData& data, const double* q, const double* v,
                          const double* tau, const double* q_next, double kappa_start, double kappa_end,
                          BarrierStepLinearisation& lin);

/// Steps as barrierStep and writes the six Jacobians (each model.nq() x model.nq(), row-major) of (q', v')
/// with respect to (q, v, tau), and d(q', v')/dtheta (each model.nq() x barrierParameterCount, row-major).
void barrierStepJacobians(const BarrierWorldModel& model, BarrierWorldData& data, const double* q, const double* v,
                          const double* tau, double* q_out, double* v_out, double* dq_dq, double* dq_dv,
                          double* dq_dtau, double* dv_dq, double* dv_dv, double* dv_dtau, double* dq_dp,
                          double* dv_dp);

/// Pulls the cotangents (gq_next, gv_next) of the step (q, v, tau) -> (q_next, v_next = (q_next - q) / dt),
/// taken with the barrier stiffnesses kappa_start and kappa_end, back to (gq, gv, gtau, gparams): the
/// transposed Jacobians times the cotangents, with one solve and no Jacobian formed.
void barrierVjpAt(const BarrierWorldModel& model, BarrierWorldData& data, const double* q, const double* v,
                  const double* tau, const double* q_next, double kappa_start, double kappa_end, const double* gq_next,
                  const double* gv_next, double* gq, double* gv, double* gtau, double* gparams);

/// Steps as barrierStep, then barrierVjpAt at its solution.
void barrierStepVjp(const BarrierWorldModel& model, BarrierWorldData& data, const double* q, const double* v,
                    const double* tau, const double* gq_next, const double* gv_next, double* q_out, double* v_out,
                    double* gq, double* gv, double* gtau, double* gparams);

/// One step's reverse mode at a recorded solution, as barrierVjpAt's arguments after the model and scratch.
using StepVjpAt = std::function<void(const double* q, const double* v, const double* tau, const double* q_next,
                                     double kappa_start, double kappa_end, const double* gq_next,
                                     const double* gv_next, double* gq, double* gv, double* gtau, double* gparams)>;

/// The reverse pass of a recorded rollout of T steps of a state of nq coordinates (the rows of Q), n velocities
/// (the rows of V, taus and the cotangents) and np parameters, each step's reverse mode by vjp (arguments as
/// barrierRolloutBackward's).
void reverseRollout(int nq, int n, int np, int T, const double* Q, const double* V, const double* taus, const double* kappas,
                    const double* GQ, const double* GV, double* gq0, double* gv0, double* gtaus, double* gparams,
                    const StepVjpAt& vjp);

/// The reverse pass of a recorded rollout of T steps: states Q, V ((T+1) x nq), forces taus (T x nq) and each
/// step's (kappa_start, kappa_end) (T x 2), all row-major; cotangents GQ, GV ((T+1) x nq) of every state.
/// Writes the gradients of the initial state (gq0, gv0), of every step's forces (gtaus, T x nq) and of the
/// parameters summed over the steps (gparams).
void barrierRolloutBackward(const BarrierWorldModel& model, BarrierWorldData& data, int T, const double* Q,
                            const double* V, const double* taus, const double* kappas, const double* GQ,
                            const double* GV, double* gq0, double* gv0, double* gtaus, double* gparams);

}  // namespace rigidiff
