#include "rigidiff/bind/api_implicit.hpp"

#include "rigidiff/bind/checks.hpp"
#include "rigidiff/macros.hpp"

namespace rigidiff {
namespace bind {

void implicitStep(const Model& m, Data& d, ImplicitWorkspace& ws, const double* q, const double* v,
                  const double* tau, double dt, const double* fext, double* q_out, double* v_out) {
  checkStepInputs(m, q, v, tau, fext);
  rigidiff::implicitStep(m, d, ws, q, v, tau, dt, fext, q_out, v_out);
}

void implicitRollout(const Model& m, const double* q0, const double* v0, const double* taus, int T, double dt,
                     double* Q, double* V) {
  checkState(m, q0, v0, "q0", "v0");
  checkFinite(taus, static_cast<long>(T) * m.nv, "taus");
  Data d(m);
  ImplicitWorkspace ws(m);
  rigidiff::implicitRollout(m, d, ws, q0, v0, taus, T, dt, Q, V);
}

void implicitStepBatch(const Model& m, const double* Q, const double* V, const double* TAU, int N, double dt,
                       int threads, double* Qout, double* Vout) {
  checkStateRows(m, Q, V, N, TAU);
  rigidiff::implicitStepBatch(m, Q, V, TAU, N, dt, threads, Qout, Vout);
}

void implicitStepJacobians(const Model& m, Data& d, ImplicitWorkspace& ws, const double* q, const double* v,
                           const double* tau, double dt, const double* fext, double* q_out, double* v_out,
                           double* jac) {
  checkStepInputs(m, q, v, tau, fext);
  intoStepJacobians(m, d, jac,
                    [&] { rigidiff::implicitStepDerivatives(m, d, ws, q, v, tau, dt, fext, q_out, v_out); });
}

void implicitStepParameterJacobians(const Model& m, Data& d, ImplicitWorkspace& ws, const double* q, const double* v,
                                    const double* tau, double dt, const double* fext, int groups, double* q_out,
                                    double* v_out, double* jac, double* pjac) {
  checkModelGroups(groups);
  checkStepInputs(m, q, v, tau, fext);
  const long np = rigidiff::stepParameterCount(m, groups);
  intoStepJacobians(m, d, jac, [&] {
    rigidiff::implicitStepParameterDerivatives(m, d, ws, q, v, tau, dt, fext, groups, q_out, v_out, pjac,
                                               pjac + m.nv * np);
  });
  checkResult(pjac, 2 * m.nv * np, "step_jacobians");
}

void implicitStepVJP(const Model& m, Data& d, ImplicitWorkspace& ws, const double* q, const double* v,
                     const double* tau, double dt, const double* fext, const double* gq, const double* gv, int groups,
                     double* q_out, double* v_out, double* g_state, double* g_tau, double* g_params) {
  stepVJPInto(m, q, v, tau, fext, gq, gv, groups, g_state, g_tau, g_params, [&](const StepCotangents& sc) {
    rigidiff::implicitStepVJP(m, d, ws, q, v, tau, dt, gq, gv, q_out, v_out, sc, fext);
  });
}

void implicitRolloutBackward(const Model& m, const double* Q, const double* V, const double* taus, int T, double dt,
                             const double* GQ, const double* GV, int groups, double* g_taus, double* g_state,
                             double* g_params) {
  rolloutBackwardInto(m, Q, V, taus, T, GQ, GV, groups, g_taus, g_state, g_params, [&](const StepCotangents& sc) {
    Data d(m);
    ImplicitWorkspace ws(m);
    rigidiff::implicitRolloutBackward(m, d, ws, Q, V, taus, T, dt, GQ, GV, g_taus, sc);
  });
}

}  // namespace bind
}  // namespace rigidiff
