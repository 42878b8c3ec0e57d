#include "rigidiff/world/rk4_step.hpp"

#include <algorithm>
#include <cmath>

#include "rigidiff/algorithm/configuration.hpp"
#include "rigidiff/algorithm/configuration_derivatives.hpp"
#include "rigidiff/algorithm/regressor.hpp"
#include "rigidiff/linalg/dense_product.hpp"
#include "rigidiff/macros.hpp"
#include "rigidiff/world/step.hpp"
#include "rigidiff/world/step_derivatives.hpp"
#include "rigidiff/world/step_parameter_derivatives.hpp"

namespace rigidiff {

Rk4Workspace::Rk4Workspace(const Model& model, bool parameters) {
  const Eigen::Index nv = model.nv;
  q_stage = VecX::Zero(model.nq);
  for (VecX* x : {&v_stage, &a_stage, &dq, &scratch, &v_sum, &a_sum}) *x = VecX::Zero(nv);
  for (MatX* m : {&DQ, &DV, &DA, &DV_sum, &DA_sum, &tmp}) *m = MatX::Zero(nv, 3 * nv);
  g = VecX::Zero(3 * nv);
  stage_q = MatX::Zero(model.nq, 4);
  for (MatX* m : {&stage_v, &stage_a, &g_stage_v, &g_stage_a}) *m = MatX::Zero(nv, 4);
  for (VecX* x : {&lam, &g_q, &g_v, &g_tmp}) *x = VecX::Zero(nv);
  const Eigen::Index np = parameters ? stepParameterCount(model, 31) : 0;
  for (MatX* m : {&DQp, &DVp, &DAp, &DVp_sum, &DAp_sum, &Rp}) *m = MatX::Zero(nv, np);
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

// Rp = dr/dp at stage (q_i, v_i, a_i = data.ddq_tmp), the step's residual without its implicit terms:
// [regressor, diag(a), diag(v), diag(difference(rest, q)), -sum m J_c^T] for the groups asked.
void stageResidualParameters(const Model& model, Data& data, Rk4Workspace& ws, const double* q_i, const double* v_i,
                             int groups) {
  const int nv = model.nv;
  int col = 0;
  if (groups & kParamInertia) {
    const int n = 10 * (model.njoints - 1);
    ws.Rp.middleCols(col, n) = inverseDynamicsRegressor(model, data, q_i, v_i, data.ddq_tmp.data());
    col += n;
  }
  auto diagonalGroup = [&](const VecX& d) {
    ws.Rp.middleCols(col, nv).setZero();
    ws.Rp.middleCols(col, nv).diagonal() = d;
    col += nv;
  };
  if (groups & kParamArmature) diagonalGroup(data.ddq_tmp);
  if (groups & kParamDamping) {
    ws.scratch = Eigen::Map<const VecX>(v_i, nv);
    diagonalGroup(ws.scratch);
  }
  if (groups & kParamStiffness) {
    difference(model, model.rest_position.data(), q_i, ws.scratch.data());
    diagonalGroup(ws.scratch);
  }
  if (groups & kParamGravity) {
    gravityTorqueJacobian(model, data, q_i);
    ws.Rp.middleCols(col, 3) = data.Jcom.transpose();
  }
}

// DAp = -Minv (Rp + dr_dq DQp + dr_dv DVp) after stageDerivatives at the same stage (Minv, dtau_dq, dtau_dv).
void stageParameterDerivatives(const Model& model, Data& data, Rk4Workspace& ws, const double* q_i,
                               const double* v_i, int groups, bool first) {
  const Eigen::Index np = stepParameterCount(model, groups);
  stageResidualParameters(model, data, ws, q_i, v_i, groups);
  if (!first) {
    denseProduct(data.dtau_dq, ws.DQp.leftCols(np), ws.Rp.leftCols(np), true);
    denseProduct(data.dtau_dv, ws.DVp.leftCols(np), ws.Rp.leftCols(np), true);
  }
  denseProduct(data.Minv, ws.Rp.leftCols(np), ws.DAp.leftCols(np));
  ws.DAp.leftCols(np) *= -1.0;
}

void rk4Run(const Model& model, Data& data, Rk4Workspace& ws, const double* q, const double* v, const double* tau,
            double dt, const double* frame_wrenches, double* q_out, double* v_out, bool jacobians, int groups = 0) {
  const int nv = model.nv;
  const Eigen::Index np = jacobians ? stepParameterCount(model, groups) : 0;
  RD_CHECK_ARG(np <= ws.DQp.cols(), "rk4StepParameterDerivatives: the workspace has no parameter buffers");
  if (np > 0)
    for (MatX* m : {&ws.DQp, &ws.DVp, &ws.DVp_sum, &ws.DAp_sum}) m->leftCols(np).setZero();
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
    if (np > 0) {
      stageParameterDerivatives(model, data, ws, ws.q_stage.data(), ws.v_stage.data(), groups, i == 0);
      ws.DVp_sum.leftCols(np) += kRk4Weight[i] * ws.DVp.leftCols(np);
      ws.DAp_sum.leftCols(np) += kRk4Weight[i] * ws.DAp.leftCols(np);
    }
    if (i == 3) break;
    const double c = kRk4Next[i] * dt;
    ws.dq = c * ws.v_stage;
    moveConfiguration(model, ws, q, c, ws.DV, ws.q_stage.data(), jacobians);
    if (np > 0) {  // q_{i+1} = integrate(q, c v_i), v_{i+1} = v + c a_i: q does not depend on p
      dIntegrateProduct(model, ws.dq.data(), 1, c, ws.DVp.leftCols(np), ws.DQp.leftCols(np), false, Motion::Group);
      ws.DVp.leftCols(np) = c * ws.DAp.leftCols(np);
    }
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
  if (np > 0) {
    dIntegrateProduct(model, ws.dq.data(), 1, h, ws.DVp_sum.leftCols(np), ws.DQp.leftCols(np), false, Motion::Group);
    ws.DVp.leftCols(np) = h * ws.DAp_sum.leftCols(np);
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

void rk4StepParameterDerivatives(const Model& model, Data& data, Rk4Workspace& ws, const double* q, const double* v,
                                 const double* tau, double dt, const double* frame_wrenches, int groups,
                                 double* q_out, double* v_out) {
  RD_CHECK_ARG(groups >= 0 && groups < 32, "unknown parameter groups " << groups);
  rk4Run(model, data, ws, q, v, tau, dt, frame_wrenches, q_out, v_out, true, groups);
}

void rk4Rollout(const Model& model, Data& data, Rk4Workspace& ws, const double* q0, const double* v0,
                const double* taus, int T, double dt, double* Q, double* V) {
  chainSteps(model, q0, v0, taus, T, Q, V,
             [&](const double* q, const double* v, const double* tau, double* qn, double* vn) {
               rk4Step(model, data, ws, q, v, tau, dt, nullptr, qn, vn);
             });
}

}  // namespace rigidiff
