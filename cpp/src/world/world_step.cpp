#include "rigidiff/world/world_step.hpp"

#include <algorithm>
#include <memory>

#include "rigidiff/world/contact_rollout.hpp"
#include "rigidiff/world/contact_step_cotangents.hpp"
#include "rigidiff/world/implicit_step.hpp"
#include "rigidiff/world/parallel.hpp"
#include "rigidiff/world/rk4_step.hpp"
#include "rigidiff/world/step.hpp"
#include "rigidiff/world/step_derivatives.hpp"
#include "rigidiff/world/step_parameter_derivatives.hpp"
#include "rigidiff/world/step_vjp.hpp"

namespace rigidiff {

namespace {

constexpr int kModelGroups = 31;  // the model's parameter groups; the contact coefficients' follow

using RowMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// runs a step's derivatives (which fill data.dq_dq ... data.dv_dtau) with those blocks written straight
// into jac (Data::setStepJacobianStorage)
template <typename Derivatives>
void jacobiansInto(Data& d, double* jac, const Derivatives& derivatives) {
  d.setStepJacobianStorage(jac);
  try {
    derivatives();
  } catch (...) {
    d.setStepJacobianStorage(nullptr);
    throw;
  }
  d.setStepJacobianStorage(nullptr);
}

// the RK4 workspace's state Jacobians into jac's six column-major blocks
void copyRk4Jacobians(const Model& m, const Rk4Workspace& ws, double* jac) {
  const Eigen::Index nv = m.nv, block = nv * nv;
  for (int k = 0; k < 6; ++k)
    Eigen::Map<MatX>(jac + k * block, nv, nv) = (k < 3 ? ws.DQ : ws.DV).middleCols((k % 3) * nv, nv);
}

// the model's parameter Jacobians (nv x nmodel each) into the world's columns of pjac, whose contact
// coefficients' stay zero: without constraint rows they act on nothing
template <typename Dq, typename Dv>
void placeModelColumns(const WorldModel& w, int groups, const Dq& dq, const Dv& dv, double* pjac) {
  const int nv = w.model.nv, np = worldParameterCount(w, groups), nmodel = static_cast<int>(dq.cols());
  std::fill(pjac, pjac + 2L * nv * np, 0.0);
  Eigen::Map<RowMat, 0, Eigen::OuterStride<>>(pjac, nv, nmodel, Eigen::OuterStride<>(np)) = dq;
  Eigen::Map<RowMat, 0, Eigen::OuterStride<>>(pjac + static_cast<long>(nv) * np, nv, nmodel,
                                              Eigen::OuterStride<>(np)) = dv;
}

// the zeroed outputs of a reverse pass without constraints: the state's, the torques' (unless null) and
// the model parameters' cotangent slices; the contact coefficients' entries of g_params stay zero
StepCotangents zeroedCotangents(const WorldModel& w, int groups, double* g_state, double* g_tau, double* g_params) {
  const Model& m = w.model;
  std::fill(g_params, g_params + worldParameterCount(w, groups), 0.0);
  StepCotangents sc = parameterCotangentSlices(m, groups & kModelGroups, g_params);
  std::fill(g_state, g_state + 2 * m.nv, 0.0);
  sc.q = g_state;
  sc.v = g_state + m.nv;
  if (g_tau) {
    std::fill(g_tau, g_tau + m.nv, 0.0);
    sc.tau = g_tau;
  }
  return sc;
}

}  // namespace

int worldParameterCount(const WorldModel& world, int groups) {
  return contactParameterCount(world.model, world.cmodel, groups);
}

void worldStep(const WorldModel& w, WorldData& wd, const double* q, const double* v, const double* tau,
               const double* fext, double* q_out, double* v_out) {
  const double dt = w.options.dt;
  switch (stepKind(w)) {
    case StepKind::Rk4: rk4Step(w.model, wd.data, wd.rk4(w.model), q, v, tau, dt, fext, q_out, v_out); return;
    case StepKind::SemiImplicit: step(w.model, wd.data, q, v, tau, dt, fext, q_out, v_out); return;
    case StepKind::Implicit:
      implicitStep(w.model, wd.data, wd.implicit(w.model), q, v, tau, dt, fext, q_out, v_out);
      return;
    case StepKind::Constrained:
      wd.continueFrom(w.model, q, v);
      contactStep(w.model, wd.data, w.cmodel, wd.contact, w.options.contact, q, v, tau, dt, fext, q_out, v_out);
      wd.endAt(w.model, q_out, v_out);
      return;
  }
}

void worldStepJacobians(const WorldModel& w, WorldData& wd, const double* q, const double* v, const double* tau,
                        const double* fext, int groups, double* q_out, double* v_out, double* jac, double* pjac) {
  const double dt = w.options.dt;
  const int model_groups = groups & kModelGroups;
  const int nmodel = pjac ? stepParameterCount(w.model, model_groups) : 0;
  switch (stepKind(w)) {
    case StepKind::Constrained:
      wd.continueFrom(w.model, q, v);
      contactStepJacobiansInto(w.model, wd.data, w.cmodel, wd.contact, w.options.contact, q, v, tau, dt, fext,
                               pjac ? groups : 0, q_out, v_out, jac, pjac);
      wd.endAt(w.model, q_out, v_out);
      return;
    case StepKind::Rk4: {
      // the parameter derivatives come with the state's: one pass either way
      Rk4Workspace& ws = wd.rk4(w.model);
      if (pjac)
        rk4StepParameterDerivatives(w.model, wd.data, ws, q, v, tau, dt, fext, model_groups, q_out, v_out);
      else
        rk4StepDerivatives(w.model, wd.data, ws, q, v, tau, dt, fext, q_out, v_out);
      copyRk4Jacobians(w.model, ws, jac);
      if (pjac) placeModelColumns(w, groups, ws.DQp.leftCols(nmodel), ws.DVp.leftCols(nmodel), pjac);
      return;
    }
    case StepKind::Implicit: {
      RowMat dq(w.model.nv, pjac ? nmodel : 0), dv(w.model.nv, pjac ? nmodel : 0);
      jacobiansInto(wd.data, jac, [&] {
        if (pjac)
          implicitStepParameterDerivatives(w.model, wd.data, wd.implicit(w.model), q, v, tau, dt, fext, model_groups,
                                           q_out, v_out, dq.data(), dv.data());
        else
          implicitStepDerivatives(w.model, wd.data, wd.implicit(w.model), q, v, tau, dt, fext, q_out, v_out);
      });
      if (pjac) placeModelColumns(w, groups, dq, dv, pjac);
      return;
    }
    case StepKind::SemiImplicit: {
      jacobiansInto(wd.data, jac, [&] { stepDerivatives(w.model, wd.data, q, v, tau, dt, q_out, v_out, fext); });
      if (!pjac) return;
      RowMat dq(w.model.nv, nmodel), dv(w.model.nv, nmodel);
      stepParameterDerivatives(w.model, wd.data, q, v, dt, model_groups, dq.data(), dv.data());
      placeModelColumns(w, groups, dq, dv, pjac);
      return;
    }
  }
}

void worldStepVJP(const WorldModel& w, WorldData& wd, const double* q, const double* v, const double* tau,
                  const double* fext, const double* gq, const double* gv, int groups, bool explore, double* q_out,
                  double* v_out, double* g_state, double* g_tau, double* g_params) {
  const double dt = w.options.dt;
  const StepKind kind = stepKind(w);
  if (kind == StepKind::Constrained) {
    std::vector<double> jac, pjac;  // sized by contactStepCotangents if it needs the dense Jacobians
    std::fill(g_state, g_state + 2 * w.model.nv, 0.0);
    std::fill(g_tau, g_tau + w.model.nv, 0.0);
    std::fill(g_params, g_params + worldParameterCount(w, groups), 0.0);
    wd.continueFrom(w.model, q, v);
    contactStepCotangents(w.model, wd.data, w.cmodel, wd.contact, w.options.contact, q, v, tau, dt, fext, groups,
                          explore, gq, gv, q_out, v_out, jac, pjac, g_state, g_state + w.model.nv, g_tau, g_params);
    wd.endAt(w.model, q_out, v_out);
    return;
  }
  const StepCotangents sc = zeroedCotangents(w, groups, g_state, g_tau, g_params);
  if (kind == StepKind::Rk4)
    rk4StepVJP(w.model, wd.data, wd.rk4(w.model), q, v, tau, dt, gq, gv, q_out, v_out, sc, fext);
  else if (kind == StepKind::Implicit)
    implicitStepVJP(w.model, wd.data, wd.implicit(w.model), q, v, tau, dt, gq, gv, q_out, v_out, sc, fext);
  else
    stepVJP(w.model, wd.data, q, v, tau, dt, gq, gv, q_out, v_out, sc, fext);
}

void worldRollout(const WorldModel& w, const double* q0, const double* v0, const double* taus, int T, double* Q,
                  double* V, int* rows, std::vector<std::int64_t>* keys, std::vector<int>* classes,
                  std::vector<double>* impulses) {
  const Model& m = w.model;
  const double dt = w.options.dt;
  switch (stepKind(w)) {
    case StepKind::Constrained:
      contactRollout(m, w.cmodel, w.options.contact, q0, v0, taus, T, dt, Q, V, rows, keys, classes, impulses);
      return;
    case StepKind::Rk4: {
      Data data(m);
      Rk4Workspace ws(m);
      rk4Rollout(m, data, ws, q0, v0, taus, T, dt, Q, V);
      return;
    }
    case StepKind::Implicit: {
      Data data(m);
      ImplicitWorkspace ws(m);
      implicitRollout(m, data, ws, q0, v0, taus, T, dt, Q, V);
      return;
    }
    case StepKind::SemiImplicit: {
      Data data(m);
      rollout(m, data, q0, v0, taus, T, dt, Q, V);
      return;
    }
  }
}

void worldRolloutBackward(const WorldModel& w, const double* Q, const double* V, const double* taus, int T,
                          const double* GQ, const double* GV, int groups, bool explore, double* g_taus,
                          double* g_state, double* g_params, const int* rows, const std::int64_t* keys,
                          const int* classes, const double* impulses) {
  const Model& m = w.model;
  const double dt = w.options.dt;
  const StepKind kind = stepKind(w);
  if (kind == StepKind::Constrained) {
    contactRolloutBackward(m, w.cmodel, w.options.contact, Q, V, taus, T, dt, GQ, GV, groups, explore, g_taus,
                           g_state, g_params, rows, keys, classes, impulses);
    return;
  }
  const StepCotangents sc = zeroedCotangents(w, groups, g_state, nullptr, g_params);
  Data data(m);
  if (kind == StepKind::Rk4) {
    Rk4Workspace ws(m);
    rk4RolloutBackward(m, data, ws, Q, V, taus, T, dt, GQ, GV, g_taus, sc);
  } else if (kind == StepKind::Implicit) {
    ImplicitWorkspace ws(m);
    implicitRolloutBackward(m, data, ws, Q, V, taus, T, dt, GQ, GV, g_taus, sc);
  } else {
    rolloutBackward(m, data, Q, V, taus, T, dt, GQ, GV, g_taus, sc);
  }
}

void worldStepBatch(const WorldModel& w, const double* Q, const double* V, const double* TAU, int N, int threads,
                    double* Qout, double* Vout) {
  const long nq = w.model.nq, nv = w.model.nv;
  parallelFor(
      N, threads, [&] { return std::make_unique<WorldData>(w); },
      [&](WorldData& wd, long i) {
        wd.forgetEndState();  // every row solves cold
        worldStep(w, wd, Q + i * nq, V + i * nv, TAU + i * nv, nullptr, Qout + i * nq, Vout + i * nv);
      });
}

void worldRolloutBatch(const WorldModel& w, const double* Q0, const double* V0, const double* TAUS, bool sharedTaus,
                       int N, int T, int threads, double* Q, double* V) {
  const long nq = w.model.nq, nv = w.model.nv, steps = T;
  const Model& m = w.model;
  const double dt = w.options.dt;
  const StepKind kind = stepKind(w);
  auto taus = [&](long i) { return TAUS + (sharedTaus ? 0 : i * steps * nv); };
  parallelFor(
      N, threads, [&] { return std::make_unique<WorldData>(w); },
      [&](WorldData& wd, long i) {
        double *Qi = Q + i * (steps + 1) * nq, *Vi = V + i * (steps + 1) * nv;
        if (kind == StepKind::Constrained)
          contactChain(m, wd.data, w.cmodel, wd.contact, w.options.contact, Q0 + i * nq, V0 + i * nv, taus(i), T, dt,
                       Qi, Vi, [](int) {});
        else if (kind == StepKind::Rk4)
          rk4Rollout(m, wd.data, wd.rk4(m), Q0 + i * nq, V0 + i * nv, taus(i), T, dt, Qi, Vi);
        else if (kind == StepKind::Implicit)
          implicitRollout(m, wd.data, wd.implicit(m), Q0 + i * nq, V0 + i * nv, taus(i), T, dt, Qi, Vi);
        else
          rollout(m, wd.data, Q0 + i * nq, V0 + i * nv, taus(i), T, dt, Qi, Vi);
      });
}

void worldStepJacobiansBatch(const WorldModel& w, const double* Q, const double* V, const double* TAU, int N,
                             int threads, double* Qout, double* Vout, double* jac) {
  const long nq = w.model.nq, nv = w.model.nv, block = 6 * nv * nv;
  parallelFor(
      N, threads, [&] { return std::make_unique<WorldData>(w); },
      [&](WorldData& wd, long i) {
        wd.forgetEndState();  // as step_jacobians from a state no step ended at
        worldStepJacobians(w, wd, Q + i * nq, V + i * nv, TAU + i * nv, nullptr, 0, Qout + i * nq, Vout + i * nv,
                           jac + i * block, nullptr);
      });
}

}  // namespace rigidiff
