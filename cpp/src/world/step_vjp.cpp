#include "rigidiff/world/step_vjp.hpp"

#include <cmath>

#include "rigidiff/algorithm/aba.hpp"
#include "rigidiff/algorithm/configuration.hpp"
#include "rigidiff/algorithm/configuration_derivatives.hpp"
#include "rigidiff/algorithm/external_wrench_derivatives.hpp"
#include "rigidiff/algorithm/rnea_vjp.hpp"
#include "rigidiff/macros.hpp"
#include "rigidiff/world/free_joint_motion.hpp"
#include "rigidiff/world/step.hpp"
#include "rigidiff/world/step_parameter_derivatives.hpp"

namespace rigidiff {

void subtractSpringAndWrenchVJP(const Model& model, Data& data, const double* q, const double* frame_wrenches,
                                double* g_q) {
  Eigen::Map<VecX> gqo(g_q, model.nv);
  if (model.stiffness.any()) {
    data.dq_tmp = model.stiffness.cwiseProduct(data.lam);  // the step's scratch, free again
    dDifferenceTransposeProduct(model, model.rest_position.data(), q, 1, data.dq_tmp.data(), data.vjp_tmp.data());
    gqo -= data.vjp_tmp;
  }
  if (frame_wrenches) {
    data.vjp_tmp.setZero();
    addExternalWrenchVJP(model, data, q, frame_wrenches, data.lam.data(), data.vjp_tmp.data());
    gqo -= data.vjp_tmp;
  }
}

void stepVJP(const Model& model, Data& data, const double* q, const double* v, const double* tau, double dt,
             const double* gq_next, const double* gv_next, double* q_out, double* v_out, const StepCotangents& out,
             const double* frame_wrenches) {
  const int nv = model.nv;
  step(model, data, q, v, tau, dt, frame_wrenches, q_out, v_out);  // a in data.ddq, factorisation of M + E
  Eigen::Map<const VecX> vv(v, nv);
  data.ddq_tmp = data.ddq;  // with (a)'s impulse as a generalized force, as stepDerivatives
  addGyroscopicAcceleration(model, v, dt, data.ddq_tmp.data());
  const VecX& a = data.ddq_tmp;

  // v' is the step velocity v_step with free joints re-expressed; v_step reaches q' through
  // integrate(q, dt v_step, Motion::Step) (world/free_joint_motion.hpp)
  data.v_tmp = dt * data.v_step;
  dIntegrateTransposeProduct(model, data.v_tmp.data(), 1, gq_next, data.vjp_tmp.data(), Motion::Step);
  reexpressCotangent(model, dt, data.v_step.data(), gv_next, data.gvt.data());
  data.gvt += dt * data.vjp_tmp;
  data.lam = dt * data.gvt;
  abaSolve(model, data, data.lam.data(), data.lam.data());
  const VecX& lam = data.lam;

  if (out.tau)
    for (int k = 0; k < nv; ++k)
      if (torqueActs(model, k, tau[k])) out.tau[k] += lam[k];
  const bool need_rnea = out.q || out.v || out.theta || out.gravity;
  Vec3 g_grav;
  if (need_rnea)
    rneaVJP(model, data, q, v, a.data(), lam.data(), nullptr, out.v ? data.vjp_v.data() : nullptr,
            out.theta ? data.vjp_theta.data() : nullptr, out.gravity ? g_grav.data() : nullptr);
  if (out.v) {
    Eigen::Map<VecX> gvo(out.v, nv);
    gvo += data.gvt - data.vjp_v;
    addFrameTurnTranspose(model, v, dt, data.gvt.data(), out.v);
    gvo.array() -= (model.damping.array() + dt * model.stiffness.array()) * lam.array();
  }
  if (out.q) {
    Eigen::Map<VecX> gqo(out.q, nv);
    dIntegrateTransposeProduct(model, data.v_tmp.data(), 0, gq_next, data.vjp_tmp.data(), Motion::Step);
    gqo += data.vjp_tmp - data.vjp_q;
    subtractSpringAndWrenchVJP(model, data, q, frame_wrenches, out.q);
  }
  subtractParameterVJP(model, data, q, v, a.data(), dt, g_grav, out);
  addGyroscopicParameterVJP(model, v, data.v_step.data(), dt, lam.data(), gv_next, out.theta, out.armature);
}

void subtractParameterVJP(const Model& model, Data& data, const double* q, const double* v, const double* a_,
                          double dt, const Vec3& g_grav, const StepCotangents& out) {
  const int nv = model.nv;
  Eigen::Map<const VecX> vv(v, nv), a(a_, nv);
  const VecX& lam = data.lam;
  if (out.theta) Eigen::Map<VecX>(out.theta, data.vjp_theta.size()) -= data.vjp_theta;
  if (out.gravity) Eigen::Map<Vec3>(out.gravity) -= g_grav;
  if (out.armature) Eigen::Map<VecX>(out.armature, nv) -= lam.cwiseProduct(a);
  if (out.damping) Eigen::Map<VecX>(out.damping, nv).array() -= lam.array() * (vv.array() + dt * a.array());
  if (out.stiffness) {
    difference(model, model.rest_position.data(), q, data.vjp_tmp.data());
    data.vjp_tmp += dt * vv + (dt * dt) * a;
    Eigen::Map<VecX>(out.stiffness, nv) -= lam.cwiseProduct(data.vjp_tmp);
  }
}

void checkReplayedStep(const Model& model, const Data& data, const double* qr, const double* vr, int t) {
  const int nq = model.nq, nv = model.nv;
  for (int k = 0; k < nv; ++k)
    if (!(std::abs(data.v_next[k] - vr[k]) <= 1e-9 * (1.0 + std::abs(vr[k]))))
      RD_THROW(std::runtime_error, "rolloutBackward: the recorded V[" << t + 1 << "] does not follow from step " << t
                                                                      << " (was the model changed?)");
  for (int k = 0; k < nq; ++k)
    if (!(std::abs(data.q_next[k] - qr[k]) <= 1e-9 * (1.0 + std::abs(qr[k]))))
      RD_THROW(std::runtime_error, "rolloutBackward: the recorded Q[" << t + 1 << "] does not follow from step " << t
                                                                      << " (was the model changed?)");
}

StepCotangents parameterCotangentSlices(const Model& model, int groups, double* g) {
  StepCotangents sc;
  double* p = g;
  if (groups & kParamInertia) {
    sc.theta = p;
    p += 10 * (model.njoints - 1);
  }
  if (groups & kParamArmature) {
    sc.armature = p;
    p += model.nv;
  }
  if (groups & kParamDamping) {
    sc.damping = p;
    p += model.nv;
  }
  if (groups & kParamStiffness) {
    sc.stiffness = p;
    p += model.nv;
  }
  if (groups & kParamGravity) sc.gravity = p;
  return sc;
}

void rolloutBackward(const Model& model, Data& data, const double* Q, const double* V, const double* taus, int T,
                     double dt, const double* GQ, const double* GV, double* g_taus, const StepCotangents& out) {
  const int nq = model.nq, nv = model.nv;
  RD_CHECK_ARG(T >= 0, "rolloutBackward: T must be >= 0, got " << T);
  StepCotangents sc = out;
  sweepRecordedRollout(model, data, Q, V, T, GQ, GV, g_taus, out,
                       [&](int t, const double* gq_next, const double* gv_next, double* g_q, double* g_v,
                           double* g_tau) {
                         const long o = static_cast<long>(t) * nv;
                         sc.q = g_q;
                         sc.v = g_v;
                         sc.tau = g_tau;
                         stepVJP(model, data, Q + static_cast<long>(t) * nq, V + o, taus + o, dt, gq_next, gv_next,
                                 data.q_next.data(), data.v_next.data(), sc);
                       });
}

}  // namespace rigidiff
