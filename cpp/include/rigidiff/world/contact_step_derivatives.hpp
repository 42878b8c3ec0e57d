// Jacobians of the constrained step (contact_step.hpp) with the classification of its LCP rows held
// fixed: DiffDART's clamping-set method, with exact contact geometry.
#pragma once

#include "rigidiff/world/contact_step.hpp"

namespace rigidiff {

/// Steps like contactStep and fills data.dq_dq, dq_dv, dq_dtau, dv_dq, dv_dv, dv_dtau (nv x nv, q in
/// the tangent space). With C the clamping rows, U the rows at a friction bound (x_U = E x_C) and the
/// impulse P x_C of the clamped rows:
///   (M + E) (v' - v_free) = J^T P x_C,   J_C v' = target_C(q, v).
/// Differentiating both at fixed classes: with s the derivative of v' at fixed impulses (the step's
/// derivative at a' = (v' - v) / dt, plus (M + E)^-1 d(J^T x)/dq) and K = (M + E)^-1 J^T P,
///   dv' = s + K Q^+ (d target_C - (dJ_C) v' - J_C s),   Q = J_C K.
/// dJ and d(J^T x) carry the motion of the Jacobian columns and the exact derivatives of the contact
/// points, normals (collision/feature_derivatives.hpp) and friction directions (friction_basis.hpp);
/// d target carries speculative gaps, restitution (-e J v) and penetration correction. Exact when the
/// clamping system is consistent (every clamped row meets its target, as in resting and sliding
/// contact); Q^+ is the minimum-norm pseudo-inverse, so redundant contacts give the derivative of the
/// standardised solution. Leaves in cd what contactStepParameterDerivatives needs.
/// If cd.classOverride holds one class per row of the step, the derivatives are those of that contact
/// mode instead of the solved one (contact-mode exploration; the step's results are unchanged).
void contactStepDerivatives(const Model& model, Data& data, const CollisionModel& cmodel, ContactStepData& cd,
                            const ContactOptions& options, const double* q, const double* v, const double* tau,
                            double dt, const double* frame_wrenches, double* q_out, double* v_out);

/// After contactStepDerivatives at the same state: Jacobians of (q', v') with respect to the model
/// parameters of `groups` (step_parameter_derivatives.hpp), corrected by the clamped rows as above,
/// into dq_dp and dv_dp (nv x stepParameterCount, row-major).
void contactStepParameterDerivatives(const Model& model, Data& data, ContactStepData& cd, const double* q,
                                     const double* v, double dt, int groups, double* dq_dp, double* dv_dp);

/// After contactStepDerivatives at the same state: Jacobians of (q', v') with respect to the friction
/// and restitution coefficients of every geometry (nv x ngeometries each, column-major). A contact's
/// coefficient is combined from its two geometries' (options' rules; at a tie of min or max each gets
/// half the derivative). Friction moves the impulses of rows at the friction bound (x_u = +-mu x_n),
/// restitution the targets of bouncing rows (-e J v); both then pass through the clamped rows as above.
void contactCoefficientDerivatives(const Model& model, Data& data, const CollisionModel& cmodel, ContactStepData& cd,
                                   const ContactOptions& options, const double* v, double dt, MatX& dq_dmu,
                                   MatX& dv_dmu, MatX& dq_de, MatX& dv_de);

}  // namespace rigidiff
