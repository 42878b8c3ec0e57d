// Derivatives of the barrier step (barrier_step.hpp) by the implicit function theorem. At the step's solution
// q' the incremental potential is stationary:
//   g(q'; q, v, tau) = M (q' - q - dt v) - dt^2 (gravity + tau) + dt^2 grad V(q') + kappa grad B(q') = 0,
// so with H the exact (unprojected) Hessian of E at q', H dq' = M dq + dt M dv + dt^2 dtau, i.e.
//   dq'/dq = H^-1 M,  dq'/dv = dt H^-1 M,  dq'/dtau = dt^2 H^-1,  and v' = (q' - q) / dt.
// The barrier stiffness is held fixed: the step keeps it piecewise constant (a power of two).
#pragma once

#include "rigidiff/world/barrier_world.hpp"

namespace rigidiff {

/// Frictionless worlds only (invalid_argument otherwise).
/// Steps as barrierStep and writes the six Jacobians (each model.nq() x model.nq(), row-major) of (q', v')
/// with respect to (q, v, tau). runtime_error if the Hessian at the solution is singular.
void barrierStepJacobians(const BarrierWorldModel& model, BarrierWorldData& data, const double* q, const double* v,
                          const double* tau, double* q_out, double* v_out, double* dq_dq, double* dq_dv,
                          double* dq_dtau, double* dv_dq, double* dv_dv, double* dv_dtau);

/// Steps as barrierStep and pulls the cotangents (gq_next, gv_next) of (q', v') back to (gq, gv, gtau): the
/// transposed Jacobians times the cotangents, with one solve and no Jacobian formed.
void barrierStepVjp(const BarrierWorldModel& model, BarrierWorldData& data, const double* q, const double* v,
                    const double* tau, const double* gq_next, const double* gv_next, double* q_out, double* v_out,
                    double* gq, double* gv, double* gtau);

}  // namespace rigidiff
