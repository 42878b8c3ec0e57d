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
  const VecX& a = data.ddq;

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
  // carry_* hold the cotangent of state t + 1, carry_*2 collect that of state t
  data.carry_q = Eigen::Map<const VecX>(GQ + static_cast<long>(T) * nv, nv);
  data.carry_v = Eigen::Map<const VecX>(GV + static_cast<long>(T) * nv, nv);
  StepCotangents sc = out;
  for (int t = T - 1; t >= 0; --t) {
    const long o = static_cast<long>(t) * nv;
    data.carry_q2 = Eigen::Map<const VecX>(GQ + o, nv);
    data.carry_v2 = Eigen::Map<const VecX>(GV + o, nv);
    Eigen::Map<VecX>(g_taus + o, nv).setZero();
    sc.q = data.carry_q2.data();
    sc.v = data.carry_v2.data();
    sc.tau = g_taus + o;
    stepVJP(model, data, Q + static_cast<long>(t) * nq, V + o, taus + o, dt, data.carry_q.data(), data.carry_v.data(),
            data.q_next.data(), data.v_next.data(), sc);
    const double* qr = Q + static_cast<long>(t + 1) * nq;
    const double* vr = V + o + nv;
    for (int k = 0; k < nv; ++k)
      if (!(std::abs(data.v_next[k] - vr[k]) <= 1e-9 * (1.0 + std::abs(vr[k]))))
        RD_THROW(std::runtime_error, "rolloutBackward: the recorded V[" << t + 1 << "] does not follow from step " << t
                                                                        << " (was the model changed?)");
    for (int k = 0; k < nq; ++k)
      if (!(std::abs(data.q_next[k] - qr[k]) <= 1e-9 * (1.0 + std::abs(qr[k]))))
        RD_THROW(std::runtime_error, "rolloutBackward: the recorded Q[" << t + 1 << "] does not follow from step " << t
                                                                        << " (was the model changed?)");
    data.carry_q.swap(data.carry_q2);
    data.carry_v.swap(data.carry_v2);
  }
  if (out.q) Eigen::Map<VecX>(out.q, nv) += data.carry_q;
  if (out.v) Eigen::Map<VecX>(out.v, nv) += data.carry_v;
}

}  // namespace rigidiff
