#include "rigidiff/bind/api_rk4.hpp"

#include <algorithm>
#include <string>

#include "rigidiff/bind/checks.hpp"
#include "rigidiff/macros.hpp"

namespace rigidiff {
namespace bind {

namespace {
void checkStepInputs(const Model& m, const double* q, const double* v, const double* tau, const double* fext) {
  checkState(m, q, v);
  checkFinite(tau, m.nv, "tau");
  if (fext) checkFinite(fext, 6 * static_cast<long>(m.frames.size()), "f_ext");
}
}  // namespace

void rk4Step(const Model& m, Data& d, Rk4Workspace& ws, const double* q, const double* v, const double* tau,
             double dt, const double* fext, double* q_out, double* v_out) {
  checkStepInputs(m, q, v, tau, fext);
  rigidiff::rk4Step(m, d, ws, q, v, tau, dt, fext, q_out, v_out);
}

void rk4Rollout(const Model& m, const double* q0, const double* v0, const double* taus, int T, double dt, double* Q,
                double* V) {
  checkState(m, q0, v0, "q0", "v0");
  checkFinite(taus, static_cast<long>(T) * m.nv, "taus");
  Data d(m);
  Rk4Workspace ws(m);
  rigidiff::rk4Rollout(m, d, ws, q0, v0, taus, T, dt, Q, V);
}

void rk4StepBatch(const Model& m, const double* Q, const double* V, const double* TAU, int N, double dt, int threads,
                  double* Qout, double* Vout) {
  checkStateRows(m, Q, V, N, TAU);
  rigidiff::rk4StepBatch(m, Q, V, TAU, N, dt, threads, Qout, Vout);
}

void rk4StepJacobians(const Model& m, Data& d, Rk4Workspace& ws, const double* q, const double* v, const double* tau,
                      double dt, const double* fext, double* q_out, double* v_out, double* jac) {
  checkStepInputs(m, q, v, tau, fext);
  rigidiff::rk4StepDerivatives(m, d, ws, q, v, tau, dt, fext, q_out, v_out);
  const Eigen::Index nv = m.nv, block = nv * nv;
  for (int k = 0; k < 6; ++k)
    Eigen::Map<MatX>(jac + k * block, nv, nv) = (k < 3 ? ws.DQ : ws.DV).middleCols((k % 3) * nv, nv);
  checkResult(jac, 6 * block, "step_jacobians");
}

void rk4StepParameterJacobians(const Model& m, Data& d, Rk4Workspace& ws, const double* q, const double* v,
                               const double* tau, double dt, const double* fext, int groups, double* q_out,
                               double* v_out, double* jac, double* pjac) {
  checkModelGroups(groups);
  rk4StepJacobians(m, d, ws, q, v, tau, dt, fext, q_out, v_out, jac);
  const long np = rigidiff::stepParameterCount(m, groups);
  if (np == 0) return;
  rigidiff::rk4StepParameterDerivatives(m, d, ws, q, v, tau, dt, fext, groups, q_out, v_out);
  Eigen::Map<RowMat>(pjac, m.nv, np) = ws.DQp.leftCols(np);
  Eigen::Map<RowMat>(pjac + m.nv * np, m.nv, np) = ws.DVp.leftCols(np);
  checkResult(pjac, 2 * m.nv * np, "step_jacobians");
}

void rk4StepVJP(const Model& m, Data& d, Rk4Workspace& ws, const double* q, const double* v, const double* tau,
                double dt, const double* fext, const double* gq, const double* gv, int groups, double* q_out,
                double* v_out, double* g_state, double* g_tau, double* g_params) {
  checkModelGroups(groups);
  checkStepInputs(m, q, v, tau, fext);
  checkFinite(gq, m.nv, "dL_dq_next");
  checkFinite(gv, m.nv, "dL_dv_next");
  const StepCotangents sc = cotangentOutputs(m, groups, g_state, g_tau, g_params);
  rigidiff::rk4StepVJP(m, d, ws, q, v, tau, dt, gq, gv, q_out, v_out, sc, fext);
  checkResult(g_state, 2 * m.nv, "step_vjp");
  checkResult(g_tau, m.nv, "step_vjp");
  checkResult(g_params, rigidiff::stepParameterCount(m, groups), "step_vjp");
}

void rk4RolloutBackward(const Model& m, const double* Q, const double* V, const double* taus, int T, double dt,
                        const double* GQ, const double* GV, int groups, double* g_taus, double* g_state,
                        double* g_params) {
  checkModelGroups(groups);
  checkRecordedRollout(m, Q, V, taus, T, GQ, GV);
  Data d(m);
  Rk4Workspace ws(m);
  const StepCotangents sc = cotangentOutputs(m, groups, g_state, nullptr, g_params);
  rigidiff::rk4RolloutBackward(m, d, ws, Q, V, taus, T, dt, GQ, GV, g_taus, sc);
  checkResult(g_state, 2 * m.nv, "rollout backward");
  checkResult(g_taus, static_cast<long>(T) * m.nv, "rollout backward");
  checkResult(g_params, rigidiff::stepParameterCount(m, groups), "rollout backward");
}

}  // namespace bind
}  // namespace rigidiff
