#include "rigidiff/world/step.hpp"

#include <algorithm>
#include <cmath>

#include "rigidiff/algorithm/aba.hpp"
#include "rigidiff/algorithm/configuration.hpp"
#include "rigidiff/algorithm/kinematics.hpp"
#include "rigidiff/macros.hpp"
#include "rigidiff/world/free_joint_motion.hpp"

namespace rigidiff {

void freeVelocity(const Model& model, Data& data, const double* q, const double* v, const double* tau, double dt,
                  const double* frame_wrenches, double* v_out) {
  const int nv = model.nv;
  Eigen::Map<const VecX> vv(v, nv), tt(tau, nv);
  // spring displacement from the rest configuration, in the tangent space
  if (model.stiffness.any())
    difference(model, model.rest_position.data(), q, data.dq_tmp.data());
  else
    data.dq_tmp.setZero();
  data.tau_eff = tt.cwiseMax(-model.effort_limit).cwiseMin(model.effort_limit);
  data.tau_eff.array() -=
      model.damping.array() * vv.array() + model.stiffness.array() * (data.dq_tmp.array() + dt * vv.array());
  data.extra_diag = dt * model.damping + (dt * dt) * model.stiffness;
  const bool with_fext = frame_wrenches != nullptr;
  if (with_fext) {
    forwardKinematics(model, data, q);
    externalWrenchesFromFrames(model, data, frame_wrenches);
  }
  const VecX& ddq = aba(model, data, q, v, data.tau_eff.data(), with_fext, data.extra_diag.data());
  Eigen::Map<VecX>(v_out, nv) = vv + dt * ddq;
  addFrameTurnVelocity(model, v, dt, v_out);
}

void finishStep(const Model& model, Data& data, const double* q, double dt, double* q_out, double* v_out) {
  const int nv = model.nv;
  data.v_step = Eigen::Map<const VecX>(v_out, nv);
  data.v_tmp = dt * data.v_step;
  integrate(model, q, data.v_tmp.data(), q_out, Motion::Step);
  reexpressFreeVelocities(model, dt, v_out, v_out);
  for (int k = 0; k < nv; ++k)
    if (!std::isfinite(v_out[k]))
      RD_THROW(std::runtime_error, "the step diverged: v[" << k << "] became " << v_out[k]
                                                           << " (state too energetic for dt = " << dt << "?)");
  for (int k = 0; k < model.nq; ++k)
    if (!std::isfinite(q_out[k])) RD_THROW(std::runtime_error, "the step diverged: q[" << k << "] became " << q_out[k]);
}

void step(const Model& model, Data& data, const double* q, const double* v, const double* tau, double dt,
          const double* frame_wrenches, double* q_out, double* v_out) {
  freeVelocity(model, data, q, v, tau, dt, frame_wrenches, v_out);
  finishStep(model, data, q, dt, q_out, v_out);
}

void throwAtRolloutStep(long t, long T, const std::runtime_error& error) {
  RD_THROW(std::runtime_error, "rollout step " << t << " of " << T << " (a state the rollout reached): " << error.what());
}

void rollout(const Model& model, Data& data, const double* q0, const double* v0, const double* taus, int T, double dt,
             double* Q, double* V) {
  chainSteps(model, q0, v0, taus, T, Q, V,
             [&](const double* q, const double* v, const double* tau, double* qn, double* vn) {
               step(model, data, q, v, tau, dt, nullptr, qn, vn);
             });
}

}  // namespace rigidiff
