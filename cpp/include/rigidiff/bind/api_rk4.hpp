// The RK4 integrator as seen by Cython (world/rk4_step.hpp): the counterparts of step, rollout,
// stepBatch, stepJacobians, stepVJP and rolloutBackward in api.hpp, same layouts and checks.
#pragma once

#include "rigidiff/collision/collision_model.hpp"
#include "rigidiff/multibody/data.hpp"
#include "rigidiff/world/contact_step.hpp"
#include "rigidiff/world/rk4_step.hpp"

namespace rigidiff {
namespace bind {

/// Why a world's step needs constraint rows (which the RK4 step has not): 0 (it does not),
/// kNeedsContacts (a pair of shapes that may touch), kNeedsJointFriction, kNeedsJointLimits
/// (api_contact_step.cpp; needsConstraints is constraintReason != 0).
constexpr int kNeedsContacts = 1, kNeedsJointFriction = 2, kNeedsJointLimits = 3;
int constraintReason(const Model& m, const CollisionModel& cm, const ContactOptions& o);

void rk4Step(const Model& m, Data& d, Rk4Workspace& ws, const double* q, const double* v, const double* tau,
             double dt, const double* fext, double* q_out, double* v_out);
void rk4Rollout(const Model& m, const double* q0, const double* v0, const double* taus, int T, double dt, double* Q,
                double* V);
void rk4StepBatch(const Model& m, const double* Q, const double* V, const double* TAU, int N, double dt, int threads,
                  double* Qout, double* Vout);
/// jac as stepJacobians: 6 blocks dq_dq, dq_dv, dq_dtau, dv_dq, dv_dv, dv_dtau, each nv x nv column-major.
void rk4StepJacobians(const Model& m, Data& d, Rk4Workspace& ws, const double* q, const double* v, const double* tau,
                      double dt, const double* fext, double* q_out, double* v_out, double* jac);
/// rk4StepJacobians plus pjac as stepParameterJacobians (ws made with parameters).
void rk4StepParameterJacobians(const Model& m, Data& d, Rk4Workspace& ws, const double* q, const double* v,
                               const double* tau, double dt, const double* fext, int groups, double* q_out,
                               double* v_out, double* jac, double* pjac);
/// Outputs overwritten, as stepVJP: g_state (2 nv: q tangent, v), g_tau (nv), g_params.
void rk4StepVJP(const Model& m, Data& d, Rk4Workspace& ws, const double* q, const double* v, const double* tau,
                double dt, const double* fext, const double* gq, const double* gv, int groups, double* q_out,
                double* v_out, double* g_state, double* g_tau, double* g_params);
/// Outputs overwritten, as rolloutBackward: g_taus (T x nv), g_state (2 nv), g_params.
void rk4RolloutBackward(const Model& m, const double* Q, const double* V, const double* taus, int T, double dt,
                        const double* GQ, const double* GV, int groups, double* g_taus, double* g_state,
                        double* g_params);

}  // namespace bind
}  // namespace rigidiff
