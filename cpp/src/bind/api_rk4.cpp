#include "rigidiff/bind/api_rk4.hpp"

#include <algorithm>
#include <string>

#include "rigidiff/bind/checks.hpp"
#include "rigidiff/macros.hpp"

namespace rigidiff {
namespace bind {

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
  stepVJPInto(m, q, v, tau, fext, gq, gv, groups, g_state, g_tau, g_params, [&](const StepCotangents& sc) {
    rigidiff::rk4StepVJP(m, d, ws, q, v, tau, dt, gq, gv, q_out, v_out, sc, fext);
  });
}

void rk4RolloutBackward(const Model& m, const double* Q, const double* V, const double* taus, int T, double dt,
                        const double* GQ, const double* GV, int groups, double* g_taus, double* g_state,
                        double* g_params) {
  rolloutBackwardInto(m, Q, V, taus, T, GQ, GV, groups, g_taus, g_state, g_params, [&](const StepCotangents& sc) {
    Data d(m);
    Rk4Workspace ws(m);
    rigidiff::rk4RolloutBackward(m, d, ws, Q, V, taus, T, dt, GQ, GV, g_taus, sc);
  });
}

}  // namespace bind
}  // namespace rigidiff
