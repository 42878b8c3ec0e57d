// Reverse mode of the constrained step (contact_step.hpp) without its Jacobians.
#pragma once

#include "rigidiff/world/contact_step.hpp"
#include "rigidiff/world/step_vjp.hpp"

namespace rigidiff {

/// Steps like contactStep and adds to `out` (+=; out.q, out.v, out.tau must be set, the model
/// parameters' slices may be) the products J^T g of the Jacobians that contactStepDerivatives and
/// contactStepParameterDerivatives give, with the cotangents g = (gq_next (tangent space),
/// gv_next) of (q', v'), without forming any nv x nv matrix. With lambda the cotangent of the step
/// velocity (gv' re-expressed, plus dt dIntegrate_dv^T gq'), K, J_C and Q^+ = U V^T of the clamped rows
/// (contact_step_derivatives.hpp):
///   mu = V U^T K^T lambda,  w = (M + E)^-1 (lambda - J_C^T mu)   (w = P^T lambda, one ABA solve),
///   g_tau = dt w,  g_q = dIntegrate_dq^T gq' - dt (dr/dq)^T w + (d(J^T x)/dq)^T w + G_q^T mu,
///   g_v = lambda - dt (dr/dv)^T w + (G_v - J_C (I + S))^T mu + S^T lambda,
/// the residual's products by the reverse-mode RNEA (rnea_vjp.hpp), and the bounce correction's terms;
/// the model parameters' as stepVJP's with dt w in place of its lambda. Differentiates the solved
/// classes, or those of cd.classOverride as contactStepDerivatives does. Unless null, g_friction and
/// g_restitution (one entry per geometry, +=) receive those of the shapes' friction and restitution
/// coefficients (contactCoefficientDerivatives transposed). The cost is that of the step plus products
/// with the rows, linear in the bodies of independent islands.
void contactStepVJP(const Model& model, Data& data, const CollisionModel& cmodel, ContactStepData& cd,
                    const ContactOptions& options, const double* q, const double* v, const double* tau, double dt,
                    const double* frame_wrenches, const double* gq_next, const double* gv_next, double* q_out,
                    double* v_out, const StepCotangents& out, double* g_friction = nullptr,
                    double* g_restitution = nullptr);

/// False when contactStepVJP cannot serve the model (joints the reverse-mode RNEA does not support).
bool contactStepVjpSupported(const Model& model);

}  // namespace rigidiff
