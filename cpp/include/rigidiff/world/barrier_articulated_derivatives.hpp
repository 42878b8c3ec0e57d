// Derivatives of the step of a barrier world with skeletons (barrier_articulated.hpp) by the implicit function
// theorem. At the solution x' = (s', b') (joint coordinates, bodies) the gradient of the step's E vanishes:
//   r = M(s_n) u - h^2 (tau_c - b(s_n, v_n)) + h D ds + h^2 K (s' - s_r) + kappa grad B_limits(s')
//       + P(x')^T g_y(y(x'); y(x_n)) = 0,                      ds = s' - s_n, u = ds - h v_n,
// with y(x) the contact coordinates (the bodies' own, then each link surface's pose), P = dy/dx and g_y the
// gradient of the contact model's potential (bodies' inertia, orthogonality, barrier, friction frozen at y(x_n)).
// Its derivative in x' is the exact Hessian
//   H = M + h D + h^2 K + kappa hess B_limits + P^T H_y P + sum_k (d^2 y_k / ds ds) . g_y,k,
// with H_y the contact model's exact Hessian (barrier_step_derivatives.hpp) and the last term the curvature of
// the surfaces' pose maps (left out of the Newton matrix, which must be PSD, but needed here). In the start
// state, M(s_n) u + h^2 b(s_n, v_n) = h^2 rnea(s_n, v_n, u / h^2) is differentiated by the RNEA derivatives,
// and g_y through the bodies' inertia and the friction's frame and slip reference (at y(x_n), mapped by P(x_n)).
// With free or ball joints the unknowns are the tangent delta' at the solution q' and the joints' equations are
// Jd^T r(dq) with dq = q' (-) q_n in the step's chart (floating_base_chart.hpp; docs/affine.md, "Floating
// bases"): the Hessian gains the derivative of Jd^T, and the outputs map through Jd, Dn and the free joints'
// re-expression of v'.
#pragma once

#include <vector>

#include "rigidiff/world/barrier_articulated.hpp"
#include "rigidiff/world/barrier_step_derivatives.hpp"

namespace rigidiff {

/// One step linearised at its solution, dense over the state's n coordinates. Rows of static meshes are not
/// equations (q' = q, v' = 0 there): they are zero in R, V, T and P, and H is the identity there, decoupled.
struct ArticulatedStepLinearisation {
  Eigen::LDLT<MatX> H;  ///< factors of the exact Hessian of E at the solution
  MatX R;               ///< -dr/dq (a static mesh's columns include the Hessian's coupling to it)
  MatX V;               ///< -dr/dv
  VecX T;               ///< -dr/dtau (diagonal: zero where tau is clipped to an effort limit)
  MatX P;               ///< dr/dtheta (n x barrierParameterCount(world))
  std::vector<char> fixed;  ///< per coordinate: a static mesh's
  /// With free or ball joints (empty otherwise; floating_base_chart.hpp): -dr/dtau = Tl diag(T) (Tl = Jd^T on the
  /// joints, I on the bodies); Jd and Dn the joints' d dq / d delta' and d dq / d delta_n; v_step = dq / h, whose
  /// re-expression is the joints' v'. The unknowns and q' are then in the tangent at q' (delta').
  MatX Tl, Jd, Dn;
  VecX v_step;
};

/// The joint-limit barrier's exact derivative of its gradient in the tangent at q (jointLimitBarrier's), not clamped,
/// along delta (row: the gradient's entry, column: delta's; a planar joint's x and y rows turn with its turn's
/// column), and the derivative of its gradient in shat = dhat^2, each times weight, added to hess (nv x nv) and
/// dshat_grad (nv). Nothing when art.joint_limits is off.
void jointLimitDerivatives(const ArticulatedBarrier& art, double dhat, const double* q, double weight, MatX& hess,
                           double* dshat_grad);

/// G (nv x nv) += sum_i g_i d^2 y_i / ds ds for link surface k, y its pose coordinates (p, rows of R) and g (12) a
/// gradient on them, at the kinematics of data (oMi, J from computeJointJacobians).
void addSurfaceCurvature(const ArticulatedBarrier& art, const Data& data, int k, const double* g, MatX& G);

/// Linearises the step from (q, v, tau) whose solution is q_next, taken with the barrier stiffnesses kappa_start
/// and kappa_end. runtime_error if the Hessian is singular.
void linearizeArticulatedStep(const BarrierWorldModel& world, ArticulatedBarrier& art, ArticulatedBarrierData& ad,
                              BarrierWorldData& data, const double* q, const double* v, const double* tau,
                              const double* q_next, double kappa_start, double kappa_end,
                              ArticulatedStepLinearisation& lin);

/// Steps as articulatedBarrierStep and writes the Jacobians as barrierStepJacobians does (n = the state's size).
void articulatedStepJacobians(const BarrierWorldModel& world, ArticulatedBarrier& art, ArticulatedBarrierData& ad,
                              BarrierWorldData& data, const double* q, const double* v, const double* tau,
                              double* q_out, double* v_out, double* dq_dq, double* dq_dv, double* dq_dtau,
                              double* dv_dq, double* dv_dv, double* dv_dtau, double* dq_dp, double* dv_dp);

/// The reverse mode of one step at its solution, as barrierVjpAt: one solve with the Hessian's factors.
void articulatedVjpAt(const BarrierWorldModel& world, ArticulatedBarrier& art, ArticulatedBarrierData& ad,
                      BarrierWorldData& data, const double* q, const double* v, const double* tau,
                      const double* q_next, double kappa_start, double kappa_end, const double* gq_next,
                      const double* gv_next, double* gq, double* gv, double* gtau, double* gparams);

}  // namespace rigidiff
