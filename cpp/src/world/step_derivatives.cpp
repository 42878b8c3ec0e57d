#include "rigidiff/world/step_derivatives.hpp"

#include <cmath>

#include "rigidiff/algorithm/aba.hpp"
#include "rigidiff/algorithm/minverse.hpp"
#include "rigidiff/algorithm/configuration_derivatives.hpp"
#include "rigidiff/algorithm/external_wrench_derivatives.hpp"
#include "rigidiff/algorithm/rnea_derivatives.hpp"
#include "rigidiff/linalg/dense_product.hpp"
#include "rigidiff/world/free_joint_motion.hpp"
#include "rigidiff/world/step.hpp"

namespace rigidiff {

void stepResidualDerivatives(const Model& model, Data& data, const double* q, const double* v, double dt,
                             const double* frame_wrenches, bool minv_ready) {
  computeRNEADerivatives(model, data, q, v, data.ddq_tmp.data(), true);  // the step's aba left q's kinematics
  if (frame_wrenches) addExternalWrenchDerivatives(model, data, q, frame_wrenches, data.dtau_dq);
  if (!minv_ready) computeMinverseFromFactorization(model, data);  // (M + E)^-1 from the step's aba
  // dr/dq = -K d(difference(rest, q))/dq, dr/dv = -(D + dt K): move them to the rnea side
  if (model.stiffness.any()) {
    dDifference(model, model.rest_position.data(), q, 1, data.dv_dq.data());  // scratch
    data.dtau_dq.noalias() += model.stiffness.asDiagonal() * data.dv_dq;
  }
  data.dtau_dv.diagonal() += model.damping + dt * model.stiffness;
}

void stepVelocityFromResidual(const Model& model, Data& data, const MatX& response, const double* tau, double dt) {
  denseProduct(response, data.dtau_dq, data.dv_dq);
  denseProduct(response, data.dtau_dv, data.dv_dv);
  data.dv_dq *= -dt;
  data.dv_dv *= -dt;
  data.dv_dv.diagonal().array() += 1.0;
  stepTorqueDerivatives(model, data, response, tau, dt);
}

void stepTorqueDerivatives(const Model& model, Data& data, const MatX& response, const double* tau, double dt) {
  for (int k = 0; k < model.nv; ++k) {
    if (torqueActs(model, k, tau[k]))
      data.dv_dtau.col(k) = dt * response.col(k);
    else
      data.dv_dtau.col(k).setZero();
  }
}

void stepVelocityDerivatives(const Model& model, Data& data, const double* q, const double* v, const double* tau,
                             double dt, const double* frame_wrenches, bool minv_ready) {
  stepResidualDerivatives(model, data, q, v, dt, frame_wrenches, minv_ready);
  stepVelocityFromResidual(model, data, data.Minv, tau, dt);
  addFrameTurnJacobian(model, v, dt, data.dv_dv);
}

void stepPositionDerivatives(const Model& model, Data& data, double dt) {
  data.v_tmp = dt * data.v_step;
  dIntegrateProduct(model, data.v_tmp.data(), 1, dt, data.dv_dq, data.dq_dq, false, Motion::Step);
  addDIntegrateBlocks(model, data.v_tmp.data(), 0, data.dq_dq, Motion::Step);
  dIntegrateProduct(model, data.v_tmp.data(), 1, dt, data.dv_dv, data.dq_dv, false, Motion::Step);
  dIntegrateProduct(model, data.v_tmp.data(), 1, dt, data.dv_dtau, data.dq_dtau, false, Motion::Step);
}

void stepDerivatives(const Model& model, Data& data, const double* q, const double* v, const double* tau, double dt,
                     double* q_out, double* v_out, const double* frame_wrenches) {
  step(model, data, q, v, tau, dt, frame_wrenches, q_out, v_out);  // leaves a in data.ddq, E in data.extra_diag
  data.ddq_tmp = data.ddq;
  addGyroscopicAcceleration(model, v, dt, data.ddq_tmp.data());  // (a)'s impulse acts as a generalized force
  stepVelocityDerivatives(model, data, q, v, tau, dt, frame_wrenches);
  stepPositionDerivatives(model, data, dt);
  reexpressStepJacobians(model, data, dt);
}

void reexpressStepJacobians(const Model& model, Data& data, double dt) {
  if (!hasStepMaps(model)) return;
  reexpressVelocityRows(model, dt, data.v_step.data(), data.dv_dq);
  reexpressVelocityRows(model, dt, data.v_step.data(), data.dv_dv);
  reexpressVelocityRows(model, dt, data.v_step.data(), data.dv_dtau);
}

}  // namespace rigidiff
