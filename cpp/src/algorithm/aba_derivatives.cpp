#include "rigidiff/algorithm/aba_derivatives.hpp"

#include "rigidiff/algorithm/aba.hpp"
#include "rigidiff/algorithm/minverse.hpp"
#include "rigidiff/algorithm/external_wrench_derivatives.hpp"
#include "rigidiff/algorithm/kinematics.hpp"
#include "rigidiff/algorithm/rnea_derivatives.hpp"

namespace rigidiff {

// ddq = M^-1 (tau - b(q, v)) and M ddq + b = rnea(q, v, ddq) = tau, so differentiating the identity
// rnea(q, v, ddq(q, v, tau)) = tau gives d ddq / dx = -M^-1 d rnea / dx at a = ddq.
void computeABADerivatives(const Model& model, Data& data, const double* q, const double* v, const double* tau,
                           const double* frame_wrenches) {
  if (frame_wrenches) {
    forwardKinematics(model, data, q);
    externalWrenchesFromFrames(model, data, frame_wrenches);
  }
  aba(model, data, q, v, tau, frame_wrenches != nullptr);
  data.ddq_tmp = data.ddq;
  computeMinverseFromFactorization(model, data);
  computeRNEADerivatives(model, data, q, v, data.ddq_tmp.data(), true);  // aba left q's kinematics
  if (frame_wrenches) addExternalWrenchDerivatives(model, data, q, frame_wrenches, data.dtau_dq);
  data.ddq_dq.noalias() = -data.Minv * data.dtau_dq;
  data.ddq_dv.noalias() = -data.Minv * data.dtau_dv;
  data.ddq = data.ddq_tmp;
}

}  // namespace rigidiff
