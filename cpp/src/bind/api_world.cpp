// The world's calls, one entry point each (declared in rigidiff/bind/api_world.hpp): the checks of their
// inputs and outputs around world/world_step.hpp and trajopt/trajectory_kernels.hpp.
#include "rigidiff/bind/api_world.hpp"

#include <cmath>
#include <string>

#include "rigidiff/bind/checks.hpp"
#include "rigidiff/trajopt/trajectory_kernels.hpp"
#include "rigidiff/world/contact_step_cotangents.hpp"
#include "rigidiff/world/world_step.hpp"

namespace rigidiff {
namespace bind {

namespace {

void checkGroups(int groups) {
  RD_CHECK_ARG(groups >= 0 && groups <= kAllParameterGroups, "unknown parameter groups " << groups);
}

void checkStepInputs(const Model& m, const double* q, const double* v, const double* tau, const double* fext) {
  checkState(m, q, v);
  checkFinite(tau, m.nv, "tau");
  if (fext) checkFinite(fext, 6 * static_cast<long>(m.frames.size()), "f_ext");
}

void checkNotNaN(const double* x, long n, const char* name) {
  for (long i = 0; i < n; ++i) RD_CHECK_ARG(!std::isnan(x[i]), name << "[" << i << "] is NaN");
}

}  // namespace

int addBodyPart(WorldModel& world, int j, const double* inertia, bool own) {
  return world.addBodyPart(j, readInertia(inertia), own);
}

void setBodyPartInertia(WorldModel& world, int b, const double* inertia) {
  world.setBodyPartInertia(b, readInertia(inertia));
}

int addStateBlock(WorldModel& world, const std::string& name, int kind, int nq, int nv) {
  RD_CHECK_ARG(kind == 0 || kind == 1, "state block " << name << ": unknown kind " << kind);
  return world.addStateBlock(name, static_cast<BlockKind>(kind), nq, nv);
}

bool readStateBlock(const WorldModel& world, const std::string& name, int* out) {
  const int b = world.findStateBlock(name);
  if (b < 0) return false;
  const StateBlock& block = world.blocks[b];
  out[0] = static_cast<int>(block.kind);
  out[1] = block.q_begin;
  out[2] = block.nq;
  out[3] = block.v_begin;
  out[4] = block.nv;
  return true;
}

void refreshWorld(WorldModel& world) { world.refresh(); }

int worldParameterCount(const WorldModel& world, int groups) {
  checkGroups(groups);
  return rigidiff::worldParameterCount(world, groups);
}

void worldStep(const WorldModel& w, WorldData& wd, const double* q, const double* v, const double* tau,
               const double* fext, double* q_out, double* v_out) {
  checkStepInputs(w.model, q, v, tau, fext);
  rigidiff::worldStep(w, wd, q, v, tau, fext, q_out, v_out);
}

void worldStepJacobians(const WorldModel& w, WorldData& wd, const double* q, const double* v, const double* tau,
                        const double* fext, int groups, double* q_out, double* v_out, double* jac, double* pjac) {
  checkGroups(groups);
  checkStepInputs(w.model, q, v, tau, fext);
  rigidiff::worldStepJacobians(w, wd, q, v, tau, fext, groups, q_out, v_out, jac, pjac);
  const long nv = w.model.nv;
  checkResult(jac, 6 * nv * nv, "step_jacobians");
  if (pjac) checkResult(pjac, 2 * nv * rigidiff::worldParameterCount(w, groups), "step_jacobians");
}

void worldStepVJP(const WorldModel& w, WorldData& wd, const double* q, const double* v, const double* tau,
                  const double* fext, const double* gq, const double* gv, int groups, bool explore, double* q_out,
                  double* v_out, double* g_state, double* g_tau, double* g_params) {
  checkGroups(groups);
  checkStepInputs(w.model, q, v, tau, fext);
  checkFinite(gq, w.model.nv, "dL_dq_next");
  checkFinite(gv, w.model.nv, "dL_dv_next");
  rigidiff::worldStepVJP(w, wd, q, v, tau, fext, gq, gv, groups, explore, q_out, v_out, g_state, g_tau, g_params);
  checkResult(g_state, 2 * w.model.nv, "step_vjp");
  checkResult(g_tau, w.model.nv, "step_vjp");
  checkResult(g_params, rigidiff::worldParameterCount(w, groups), "step_vjp");
}

void worldRollout(const WorldModel& w, const double* q0, const double* v0, const double* taus, int T, double* Q,
                  double* V, int* rows, std::vector<std::int64_t>* keys, std::vector<int>* classes,
                  std::vector<double>* impulses) {
  RD_CHECK_ARG(T >= 0, "a rollout needs T >= 0 steps, got " << T);
  checkState(w.model, q0, v0, "q0", "v0");
  checkFinite(taus, static_cast<long>(T) * w.model.nv, "taus");
  rigidiff::worldRollout(w, q0, v0, taus, T, Q, V, rows, keys, classes, impulses);
}

void worldRolloutBackward(const WorldModel& w, const double* Q, const double* V, const double* taus, int T,
                          const double* GQ, const double* GV, int groups, bool explore, double* g_taus,
                          double* g_state, double* g_params, const int* rows, const std::int64_t* keys,
                          const int* classes, const double* impulses) {
  checkGroups(groups);
  checkRecordedRollout(w.model, Q, V, taus, T, GQ, GV);
  rigidiff::worldRolloutBackward(w, Q, V, taus, T, GQ, GV, groups, explore, g_taus, g_state, g_params, rows, keys,
                                 classes, impulses);
  checkResult(g_state, 2 * w.model.nv, "rollout backward");
  checkResult(g_taus, static_cast<long>(T) * w.model.nv, "rollout backward");
  checkResult(g_params, rigidiff::worldParameterCount(w, groups), "rollout backward");
}

void worldTrajectoryJacobians(const WorldModel& w, WorldData& wd, const double* Q, const double* V,
                              const double* TAU, int T, double* jac, int threads) {
  RD_CHECK_ARG(T >= 0, "T must be >= 0, got " << T);
  RD_CHECK_ARG(threads >= 1, "threads must be >= 1, got " << threads);
  checkStateRows(w.model, Q, V, T, TAU);
  rigidiff::trajectoryJacobians(w, wd, Q, V, TAU, T, jac, threads);
  checkResult(jac, 6L * T * w.model.nv * w.model.nv, "step_jacobians");
}

void worldClosedLoopRollout(const WorldModel& w, WorldData& wd, const double* q0, const double* v0,
                            const double* Qr, const double* Vr, const double* Ur, const double* k, const double* K,
                            double alpha, const double* S, int nu, const double* lo, const double* hi, int T,
                            double* Q, double* V, double* U) {
  RD_CHECK_ARG(T >= 0 && nu >= 1, "closedLoopRollout: T >= 0 and nu >= 1 needed, got " << T << ", " << nu);
  const Model& m = w.model;
  checkState(m, q0, v0, "q0", "v0");
  checkStateRows(m, Qr, Vr, T);
  RD_CHECK_ARG(std::isfinite(alpha), "alpha must be finite, got " << alpha);
  checkFinite(Ur, static_cast<long>(T) * nu, "U");
  checkFinite(k, static_cast<long>(T) * nu, "k");
  checkFinite(K, static_cast<long>(T) * nu * 2 * m.nv, "K");
  checkFinite(S, static_cast<long>(m.nv) * nu, "S");
  checkNotNaN(lo, static_cast<long>(T) * nu, "lo");  // infinite bounds are no bounds
  checkNotNaN(hi, static_cast<long>(T) * nu, "hi");
  rigidiff::closedLoopRollout(w, wd, q0, v0, Qr, Vr, Ur, k, K, alpha, S, nu, lo, hi, T, Q, V, U);
}

void worldStepBatch(const WorldModel& w, const double* Q, const double* V, const double* TAU, int N, int threads,
                    double* Qout, double* Vout) {
  RD_CHECK_ARG(N >= 0, "a batch needs N >= 0 states, got " << N);
  checkStateRows(w.model, Q, V, N, TAU);
  rigidiff::worldStepBatch(w, Q, V, TAU, N, threads, Qout, Vout);
}

void worldRolloutBatch(const WorldModel& w, const double* Q0, const double* V0, const double* TAUS, bool sharedTaus,
                       int N, int T, int threads, double* Q, double* V) {
  RD_CHECK_ARG(N >= 0 && T >= 0, "a batch needs N >= 0 rollouts of T >= 0 steps, got N = " << N << ", T = " << T);
  checkStateRows(w.model, Q0, V0, N);
  checkFinite(TAUS, (sharedTaus ? 1 : static_cast<long>(N)) * T * w.model.nv, "taus");
  rigidiff::worldRolloutBatch(w, Q0, V0, TAUS, sharedTaus, N, T, threads, Q, V);
}

void worldStepJacobiansBatch(const WorldModel& w, const double* Q, const double* V, const double* TAU, int N,
                             int threads, double* Qout, double* Vout, double* jac) {
  RD_CHECK_ARG(N >= 0, "a batch needs N >= 0 states, got " << N);
  checkStateRows(w.model, Q, V, N, TAU);
  rigidiff::worldStepJacobiansBatch(w, Q, V, TAU, N, threads, Qout, Vout, jac);
  checkResult(jac, 6L * N * w.model.nv * w.model.nv, "step_jacobians");
}

}  // namespace bind
}  // namespace rigidiff
