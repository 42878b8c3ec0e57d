// The constrained step's Jacobians into caller storage and its cotangents J^T g, with the optional
// exploration of a second contact mode: what step_jacobians, step_vjp and the rollout backward pass of a
// world with constraints compute (contact_step_derivatives.hpp, contact_step_vjp.hpp do the work).
#pragma once

#include <vector>

#include "rigidiff/world/contact_step.hpp"

namespace rigidiff {

/// Parameter groups of a constrained step beyond the model's (bits 1..16, step_parameter_derivatives.hpp):
/// the friction (32) and the restitution (64) coefficient of every geometry.
constexpr int kFrictionGroup = 32, kRestitutionGroup = 64;
/// All groups: the model's and the contact coefficients'.
constexpr int kAllParameterGroups = 127;

/// Columns of the constrained step's parameter Jacobians for `groups` (0..kAllParameterGroups): the model
/// groups', then one per geometry for friction, then one per geometry for restitution.
int contactParameterCount(const Model& model, const CollisionModel& cmodel, int groups);

/// One constrained step and its Jacobians: jac, 6 column-major nv x nv blocks (dq_dq, dq_dv, dq_dtau,
/// dv_dq, dv_dv, dv_dtau, as Data::setStepJacobianStorage), and unless null pjac, the parameter
/// Jacobians dq_dp then dv_dp (row-major nv x contactParameterCount(groups)).
void contactStepJacobiansInto(const Model& model, Data& data, const CollisionModel& cmodel, ContactStepData& cd,
                              const ContactOptions& options, const double* q, const double* v, const double* tau,
                              double dt, const double* fext, int groups, double* q_out, double* v_out, double* jac,
                              double* pjac);

/// The loss-driven contact mode of DiffDART's complementarity-aware backward (seed section 4.4), after a
/// step on cd with next-state cotangents (gq, gv): a normal row whose impulse would lower the loss
/// separates, any other clamps; friction rows separate; joint rows keep their classes. Writes it into
/// cd.classOverride and returns true, or returns false (override cleared) if it is the solved mode.
bool lossDrivenClasses(const Model& model, Data& data, ContactStepData& cd, double dt, const double* gq,
                       const double* gv);

/// One constrained step and J^T (gq, gv) added into g_q, g_v, g_tau and g_params (+=; g_params has
/// contactParameterCount(groups) entries): through the clamped rows' factors (contactStepVJP), or by the
/// dense Jacobians (jac, pjac: scratch) for models contactStepVJP does not take. With explore, the
/// loss-driven mode is also differentiated and the mode with the larger state and torque cotangents
/// (|g_v|^2 + |g_tau|^2) is kept; the parameters' always come from the solved mode.
void contactStepCotangents(const Model& model, Data& data, const CollisionModel& cmodel, ContactStepData& cd,
                           const ContactOptions& options, const double* q, const double* v, const double* tau,
                           double dt, const double* fext, int groups, bool explore, const double* gq,
                           const double* gv, double* q_out, double* v_out, std::vector<double>& jac,
                           std::vector<double>& pjac, double* g_q, double* g_v, double* g_tau, double* g_params);

}  // namespace rigidiff
