// Reverse mode of the RK4 step (world/rk4_step.hpp): the four stages swept backwards.
#include <cmath>

#include "rigidiff/algorithm/aba.hpp"
#include "rigidiff/algorithm/configuration.hpp"
#include "rigidiff/algorithm/configuration_derivatives.hpp"
#include "rigidiff/algorithm/external_wrench_derivatives.hpp"
#include "rigidiff/algorithm/rnea_vjp.hpp"
#include "rigidiff/macros.hpp"
#include "rigidiff/world/rk4_step.hpp"
#include "rigidiff/world/step.hpp"

namespace rigidiff {

namespace {

// ws.g_q, ws.g_v = the cotangents of stage i's (q_i, v_i) from that of its acceleration g_a (ws.g_stage_a
// column i) and of its velocity (ws.g_stage_v column i): with lambda = M^-1 g_a, the transposed
// derivatives of a = M^-1 r(q, v, tau) (r with the passive terms and frame wrenches); adds lambda to
// out.tau inside the effort limits and -(dr/dp)^T lambda to the parameter cotangents asked.
void stageVJP(const Model& model, Data& data, Rk4Workspace& ws, int i, const double* tau,
              const double* frame_wrenches, const StepCotangents& out) {
  double* g_tau = out.tau;
  const int nv = model.nv;
  const double* q_i = ws.stage_q.col(i).data();
  const double* v_i = ws.stage_v.col(i).data();
  freeVelocity(model, data, q_i, v_i, tau, 0.0, frame_wrenches, ws.scratch.data());  // M's factorisation at q_i
  abaSolve(model, data, ws.g_stage_a.col(i).data(), ws.lam.data());
  if (g_tau)
    for (int k = 0; k < nv; ++k)
      if (torqueActs(model, k, tau[k])) g_tau[k] += ws.lam[k];
  Vec3 g_grav;
  rneaVJP(model, data, q_i, v_i, ws.stage_a.col(i).data(), ws.lam.data(), nullptr, data.vjp_v.data(),
          out.theta ? data.vjp_theta.data() : nullptr, out.gravity ? g_grav.data() : nullptr);
  if (out.theta) Eigen::Map<VecX>(out.theta, data.vjp_theta.size()) -= data.vjp_theta;
  if (out.gravity) Eigen::Map<Vec3>(out.gravity) -= g_grav;
  if (out.armature) Eigen::Map<VecX>(out.armature, nv) -= ws.lam.cwiseProduct(ws.stage_a.col(i));
  if (out.damping) Eigen::Map<VecX>(out.damping, nv) -= ws.lam.cwiseProduct(ws.stage_v.col(i));
  if (out.stiffness) {
    difference(model, model.rest_position.data(), q_i, ws.g_tmp.data());
    Eigen::Map<VecX>(out.stiffness, nv) -= ws.lam.cwiseProduct(ws.g_tmp);
  }
  ws.g_q = -data.vjp_q;
  ws.g_v = ws.g_stage_v.col(i) - data.vjp_v;
  ws.g_v.array() -= model.damping.array() * ws.lam.array();
  if (model.stiffness.any()) {
    ws.g_tmp = model.stiffness.cwiseProduct(ws.lam);
    dDifferenceTransposeProduct(model, model.rest_position.data(), q_i, 1, ws.g_tmp.data(), ws.scratch.data());
    ws.g_q -= ws.scratch;
  }
  if (frame_wrenches) {
    ws.g_tmp.setZero();
    addExternalWrenchVJP(model, data, q_i, frame_wrenches, ws.lam.data(), ws.g_tmp.data());
    ws.g_q -= ws.g_tmp;
  }
}

// After rk4Step at (q, v, tau) (its stages in ws): adds the cotangents of (q, v, tau) and of the
// parameters to out (out.q and out.v required).
void reverseSweep(const Model& model, Data& data, Rk4Workspace& ws, const double* tau, double dt,
                  const double* frame_wrenches, const double* gq_next, const double* gv_next,
                  const StepCotangents& out) {
  const int nv = model.nv;
  Eigen::Map<VecX> gq0(out.q, nv), gv0(out.v, nv);
  Eigen::Map<const VecX> gvn(gv_next, nv);
  const double h = dt / 6.0;
  // q' = integrate(q, h sum w_i v_i), v' = v + h sum w_i a_i
  ws.dq.setZero();
  for (int i = 0; i < 4; ++i) ws.dq += (h * kRk4Weight[i]) * ws.stage_v.col(i);
  dIntegrateTransposeProduct(model, ws.dq.data(), 0, gq_next, ws.g_tmp.data(), Motion::Group);
  gq0 += ws.g_tmp;
  dIntegrateTransposeProduct(model, ws.dq.data(), 1, gq_next, ws.g_tmp.data(), Motion::Group);
  for (int i = 0; i < 4; ++i) {
    ws.g_stage_v.col(i) = (h * kRk4Weight[i]) * ws.g_tmp;
    ws.g_stage_a.col(i) = (h * kRk4Weight[i]) * gvn;
  }
  gv0 += gvn;
  for (int i = 3; i >= 0; --i) {
    stageVJP(model, data, ws, i, tau, frame_wrenches, out);
    gv0 += ws.g_v;
    if (i == 0) {
      gq0 += ws.g_q;
      break;
    }
    // q_i = integrate(q, c v_{i-1}), v_i = v + c a_{i-1}
    const double c = kRk4Next[i - 1] * dt;
    ws.dq = c * ws.stage_v.col(i - 1);
    dIntegrateTransposeProduct(model, ws.dq.data(), 0, ws.g_q.data(), ws.g_tmp.data(), Motion::Group);
    gq0 += ws.g_tmp;
    dIntegrateTransposeProduct(model, ws.dq.data(), 1, ws.g_q.data(), ws.g_tmp.data(), Motion::Group);
    ws.g_stage_v.col(i - 1) += c * ws.g_tmp;
    ws.g_stage_a.col(i - 1) += c * ws.g_v;
  }
}

// One step and its VJP into out (out.q and out.v required).
void stepAndVJP(const Model& model, Data& data, Rk4Workspace& ws, const double* q, const double* v, const double* tau,
                double dt, const double* frame_wrenches, const double* gq_next, const double* gv_next, double* q_out,
                double* v_out, const StepCotangents& out) {
  rk4Step(model, data, ws, q, v, tau, dt, frame_wrenches, q_out, v_out);
  reverseSweep(model, data, ws, tau, dt, frame_wrenches, gq_next, gv_next, out);
}

}  // namespace

void rk4StepVJP(const Model& model, Data& data, Rk4Workspace& ws, const double* q, const double* v, const double* tau,
                double dt, const double* gq_next, const double* gv_next, double* q_out, double* v_out,
                const StepCotangents& out, const double* frame_wrenches) {
  // the sweep needs both state cotangents: collect them in data's scratch and add what was asked
  data.carry_q2.setZero();
  data.carry_v2.setZero();
  StepCotangents sc = out;
  sc.q = data.carry_q2.data();
  sc.v = data.carry_v2.data();
  stepAndVJP(model, data, ws, q, v, tau, dt, frame_wrenches, gq_next, gv_next, q_out, v_out, sc);
  if (out.q) Eigen::Map<VecX>(out.q, model.nv) += data.carry_q2;
  if (out.v) Eigen::Map<VecX>(out.v, model.nv) += data.carry_v2;
}

void rk4RolloutBackward(const Model& model, Data& data, Rk4Workspace& ws, const double* Q, const double* V,
                        const double* taus, int T, double dt, const double* GQ, const double* GV, double* g_taus,
                        const StepCotangents& out) {
  RD_CHECK_ARG(T >= 0, "rk4RolloutBackward: T must be >= 0, got " << T);
  const int nq = model.nq, nv = model.nv;
  StepCotangents sc = out;
  sweepRecordedRollout(model, data, Q, V, T, GQ, GV, g_taus, out,
                       [&](int t, const double* gq_next, const double* gv_next, double* g_q, double* g_v,
                           double* g_tau) {
                         const long o = static_cast<long>(t) * nv;
                         sc.q = g_q;
                         sc.v = g_v;
                         sc.tau = g_tau;
                         stepAndVJP(model, data, ws, Q + static_cast<long>(t) * nq, V + o, taus + o, dt, nullptr,
                                    gq_next, gv_next, data.q_next.data(), data.v_next.data(), sc);
                       });
}

}  // namespace rigidiff
