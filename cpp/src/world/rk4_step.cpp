#include "rigidiff/world/rk4_step.hpp"

#include <algorithm>
#include <cmath>

#include "rigidiff/algorithm/configuration.hpp"
#include "rigidiff/algorithm/configuration_derivatives.hpp"
#include "rigidiff/linalg/dense_product.hpp"
#include "rigidiff/macros.hpp"
#include "rigidiff/world/parallel.hpp"
#include "rigidiff/world/step.hpp"
#include "rigidiff/world/step_derivatives.hpp"

namespace rigidiff {

Rk4Workspace::Rk4Workspace(const Model& model) {
  const Eigen::Index nv = model.nv;
  q_stage = VecX::Zero(model.nq);
  for (VecX* x : {&v_stage, &a_stage, &dq, &scratch, &v_sum, &a_sum}) *x = VecX::Zero(nv);
  for (MatX* m : {&DQ, &DV, &DA, &DV_sum, &DA_sum, &tmp}) *m = MatX::Zero(nv, 3 * nv);
  g = VecX::Zero(3 * nv);
  stage_q = MatX::Zero(model.nq, 4);
  for (MatX* m : {&stage_v, &stage_a, &g_stage_v, &g_stage_a}) *m = MatX::Zero(nv, 4);
  for (VecX* x : {&lam, &g_q, &g_v, &g_tmp}) *x = VecX::Zero(nv);
}

namespace {

// DA = d a_i / d(q, v, tau) from the stage's DQ, DV: a = (M + armature)^-1 r, so with the rnea side's
// derivatives of r (passive terms included) DA = -Minv (dr_dq DQ + dr_dv DV) + [0 0 Minv S], S selecting the
// torques inside their effort limits. Needs a_i in data.ddq and the factorisation of M at q_i.
// The first stage (DQ = [I 0 0], DV = [0 I 0]) skips the products with DQ and DV.
void stageDerivatives(const Model& model, Data& data, Rk4Workspace& ws, const double* q_i, const double* v_i,
                      const double* tau, const double* frame_wrenches, bool first) {
  const Eigen::Index nv = model.nv;
  data.ddq_tmp = data.ddq;
  stepResidualDerivatives(model, data, q_i, v_i, 0.0, frame_wrenches, false);
  if (first) {
    ws.tmp.leftCols(nv) = data.dtau_dq;
    ws.tmp.middleCols(nv, nv) = data.dtau_dv;
    denseProduct(data.Minv, ws.tmp.leftCols(2 * nv), ws.DA.leftCols(2 * nv));
    ws.DA.rightCols(nv).setZero();
  } else {
    denseProduct(data.dtau_dq, ws.DQ, ws.tmp);
    denseProduct(data.dtau_dv, ws.DV, ws.tmp, true);
    denseProduct(data.Minv, ws.tmp, ws.DA);
  }
  ws.DA *= -1.0;
  for (int k = 0; k < nv; ++k)
    if (torqueActs(model, k, tau[k])) ws.DA.col(2 * nv + k) += data.Minv.col(k);
}

// q_out = integrate(q, dq) and, with jacobians, DQ = [Jq 0 0] + alpha Jv X (X: derivatives of the velocity
// that dq = alpha v came from).
void moveConfiguration(const Model& model, Rk4Workspace& ws, const double* q, double alpha, const MatX& X,
                       double* q_out, bool jacobians) {
  integrate(model, q, ws.dq.data(), q_out, Motion::Group);
  if (!jacobians) return;
  dIntegrateProduct(model, ws.dq.data(), 1, alpha, X, ws.DQ, false, Motion::Group);
  addDIntegrateBlocks(model, ws.dq.data(), 0, ws.DQ.leftCols(model.nv), Motion::Group);
}

void rk4Run(const Model& model, Data& data, Rk4Workspace& ws, const double* q, const double* v, const double* tau,
            double dt, const double* frame_wrenches, double* q_out, double* v_out, bool jacobians) {
  const int nv = model.nv;
  Eigen::Map<const VecX> v0(v, nv);
  ws.q_stage = Eigen::Map<const VecX>(q, model.nq);
  ws.v_stage = v0;
  ws.v_sum.setZero();
  ws.a_sum.setZero();
  if (jacobians) {
    ws.DQ.setZero();
    ws.DQ.leftCols(nv).diagonal().setOnes();
    ws.DV.setZero();
    ws.DV.middleCols(nv, nv).diagonal().setOnes();
    ws.DV_sum.setZero();
    ws.DA_sum.setZero();
  }
  for (int i = 0; i < 4; ++i) {
    // forward dynamics with the passive terms explicit: the semi-implicit step's free velocity at dt = 0
    freeVelocity(model, data, ws.q_stage.data(), ws.v_stage.data(), tau, 0.0, frame_wrenches, ws.scratch.data());
    ws.a_stage = data.ddq;
    ws.stage_q.col(i) = ws.q_stage;
    ws.stage_v.col(i) = ws.v_stage;
    ws.stage_a.col(i) = ws.a_stage;
    ws.v_sum += kRk4Weight[i] * ws.v_stage;
    ws.a_sum += kRk4Weight[i] * ws.a_stage;
    if (jacobians) {
      stageDerivatives(model, data, ws, ws.q_stage.data(), ws.v_stage.data(), tau, frame_wrenches, i == 0);
      ws.DV_sum += kRk4Weight[i] * ws.DV;
      ws.DA_sum += kRk4Weight[i] * ws.DA;
    }
    if (i == 3) break;
    const double c = kRk4Next[i] * dt;
    ws.dq = c * ws.v_stage;
    moveConfiguration(model, ws, q, c, ws.DV, ws.q_stage.data(), jacobians);
    ws.v_stage = v0 + c * ws.a_stage;
    if (jacobians) {
      ws.DV = c * ws.DA;
      ws.DV.middleCols(nv, nv).diagonal().array() += 1.0;
    }
  }
  const double h = dt / 6.0;
  ws.dq = h * ws.v_sum;
  moveConfiguration(model, ws, q, h, ws.DV_sum, q_out, jacobians);
  Eigen::Map<VecX>(v_out, nv) = v0 + h * ws.a_sum;
  if (jacobians) {
    ws.DV = h * ws.DA_sum;
    ws.DV.middleCols(nv, nv).diagonal().array() += 1.0;
  }
  for (int k = 0; k < nv; ++k)
    if (!std::isfinite(v_out[k]))
      RD_THROW(std::runtime_error, "the RK4 step diverged: v[" << k << "] became " << v_out[k]
                                                               << " (state too energetic for dt = " << dt << "?)");
  for (int k = 0; k < model.nq; ++k)
    if (!std::isfinite(q_out[k]))
      RD_THROW(std::runtime_error, "the RK4 step diverged: q[" << k << "] became " << q_out[k]);
}

}  // namespace

void rk4Step(const Model& model, Data& data, Rk4Workspace& ws, const double* q, const double* v, const double* tau,
             double dt, const double* frame_wrenches, double* q_out, double* v_out) {
  rk4Run(model, data, ws, q, v, tau, dt, frame_wrenches, q_out, v_out, false);
}

void rk4StepDerivatives(const Model& model, Data& data, Rk4Workspace& ws, const double* q, const double* v,
                        const double* tau, double dt, const double* frame_wrenches, double* q_out, double* v_out) {
  rk4Run(model, data, ws, q, v, tau, dt, frame_wrenches, q_out, v_out, true);
}

void rk4Rollout(const Model& model, Data& data, Rk4Workspace& ws, const double* q0, const double* v0,
                const double* taus, int T, double dt, double* Q, double* V) {
  const int nq = model.nq, nv = model.nv;
  std::copy(q0, q0 + nq, Q);
  std::copy(v0, v0 + nv, V);
  for (int t = 0; t < T; ++t)
    rk4Step(model, data, ws, Q + static_cast<long>(t) * nq, V + static_cast<long>(t) * nv,
            taus + static_cast<long>(t) * nv, dt, nullptr, Q + static_cast<long>(t + 1) * nq,
            V + static_cast<long>(t + 1) * nv);
}

void rk4StepBatch(const Model& model, const double* Q, const double* V, const double* TAU, int N, double dt,
                  int threads, double* Qout, double* Vout) {
  const long nq = model.nq, nv = model.nv;
  parallelChunks(N, threads, [&](int begin, int end) {
    Data data(model);
    Rk4Workspace ws(model);
    for (int s = begin; s < end; ++s)
      rk4Step(model, data, ws, Q + s * nq, V + s * nv, TAU + s * nv, dt, nullptr, Qout + s * nq, Vout + s * nv);
  });
}

}  // namespace rigidiff
