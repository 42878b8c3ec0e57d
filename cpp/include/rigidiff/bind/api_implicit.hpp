// The implicit step as seen by Cython (world/implicit_step.hpp): the counterparts of step, rollout,
// stepBatch, stepJacobians, stepVJP and rolloutBackward in api.hpp, same layouts and checks.
#pragma once

#include "rigidiff/multibody/data.hpp"
#include "rigidiff/world/implicit_step.hpp"

namespace rigidiff {
namespace bind {

void implicitStep(const Model& m, Data& d, ImplicitWorkspace& ws, const double* q, const double* v,
                  const double* tau, double dt, const double* fext, double* q_out, double* v_out);
void implicitRollout(const Model& m, const double* q0, const double* v0, const double* taus, int T, double dt,
                     double* Q, double* V);
void implicitStepBatch(const Model& m, const double* Q, const double* V, const double* TAU, int N, double dt,
                       int threads, double* Qout, double* Vout);
/// jac as stepJacobians: 6 blocks dq_dq, dq_dv, dq_dtau, dv_dq, dv_dv, dv_dtau, each nv x nv column-major.
void implicitStepJacobians(const Model& m, Data& d, ImplicitWorkspace& ws, const double* q, const double* v,
                           const double* tau, double dt, const double* fext, double* q_out, double* v_out,
                           double* jac);
/// implicitStepJacobians plus pjac as stepParameterJacobians (2 x nv x stepParameterCount(groups), row-major).
void implicitStepParameterJacobians(const Model& m, Data& d, ImplicitWorkspace& ws, const double* q, const double* v,
                                    const double* tau, double dt, const double* fext, int groups, double* q_out,
                                    double* v_out, double* jac, double* pjac);
/// Outputs overwritten, as stepVJP: g_state (2 nv: q tangent, v), g_tau (nv), g_params.
void implicitStepVJP(const Model& m, Data& d, ImplicitWorkspace& ws, const double* q, const double* v,
                     const double* tau, double dt, const double* fext, const double* gq, const double* gv, int groups,
                     double* q_out, double* v_out, double* g_state, double* g_tau, double* g_params);
/// Outputs overwritten, as rolloutBackward: g_taus (T x nv), g_state (2 nv), g_params.
void implicitRolloutBackward(const Model& m, const double* Q, const double* V, const double* taus, int T, double dt,
                             const double* GQ, const double* GV, int groups, double* g_taus, double* g_state,
                             double* g_params);

}  // namespace bind
}  // namespace rigidiff
