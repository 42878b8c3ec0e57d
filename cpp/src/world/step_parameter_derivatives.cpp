#include "rigidiff/world/step_parameter_derivatives.hpp"

#include "rigidiff/algorithm/center_of_mass.hpp"
#include "rigidiff/algorithm/configuration.hpp"
#include "rigidiff/algorithm/configuration_derivatives.hpp"
#include "rigidiff/algorithm/regressor.hpp"
#include "rigidiff/macros.hpp"
#include "rigidiff/world/free_joint_motion.hpp"

namespace rigidiff {

int stepParameterCount(const Model& model, int groups) {
  int n = 0;
  if (groups & kParamInertia) n += 10 * (model.njoints - 1);
  if (groups & kParamArmature) n += model.nv;
  if (groups & kParamDamping) n += model.nv;
  if (groups & kParamStiffness) n += model.nv;
  if (groups & kParamGravity) n += 3;
  return n;
}

void gravityTorqueJacobian(const Model& model, Data& data, const double* q) {
  // gravity force on a dof of joint j: S_j . (-m g, -h x g) summed over j's subtree (world frame)
  centerOfMass(model, data, q);
  auto& Gt = data.Jcom;
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& jm = model.joints[i];
    const double m = data.mass_sub[i];
    const Vec3 h = m * data.com_sub[i];
    for (int k = jm.idx_v; k < jm.idx_v + jm.nv; ++k) {
      const Vec6 s = data.J.col(k);  // world-frame subspace, left by the step's aba
      Gt.col(k) = -(m * s.head<3>() + s.tail<3>().cross(h));
    }
  }
}

void residualParameterColumns(const Model& model, Data& data, const double* q, const double* v_rnea, const double* a,
                              const double* v_damp, const double* x_spring, const MatX& response, double scale,
                              int groups, double* Dv_) {
  using RowMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const int nv = model.nv;
  Eigen::Map<RowMat> Dv(Dv_, nv, stepParameterCount(model, groups));
  int col = 0;
  if (groups & kParamInertia) {
    const int n = 10 * (model.njoints - 1);
    const MatX& Y = inverseDynamicsRegressor(model, data, q, v_rnea, a);
    Dv.middleCols(col, n).noalias() = scale * response * Y;
    col += n;
  }
  auto diagonalGroup = [&](const double* dr) {
    Dv.middleCols(col, nv).noalias() = scale * response * Eigen::Map<const VecX>(dr, nv).asDiagonal();
    col += nv;
  };
  if (groups & kParamArmature) diagonalGroup(a);
  if (groups & kParamDamping) diagonalGroup(v_damp);
  if (groups & kParamStiffness) diagonalGroup(x_spring);
  if (groups & kParamGravity) {
    gravityTorqueJacobian(model, data, q);
    const auto& Gt = data.Jcom;  // (3, nv) scratch: the transposed gravity Jacobian of the torques
    Dv.middleCols(col, 3).noalias() = scale * response * Gt.transpose();
  }
}

void stepParameterDerivatives(const Model& model, Data& data, const double* q, const double* v, double dt, int groups,
                              double* dq_dp, double* dv_dp, bool reexpress) {
  RD_CHECK_ARG(groups >= 0 && groups < 32, "unknown parameter groups " << groups);
  using RowMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const int nv = model.nv, np = stepParameterCount(model, groups);
  Eigen::Map<RowMat> Dv(dv_dp, nv, np), Dq(dq_dp, nv, np);
  Eigen::Map<const VecX> vv(v, nv);
  const VecX& a = data.ddq_tmp;  // the step's acceleration, kept by stepDerivatives
  // r's damping acts on v + dt a, its springs on d + dt v + dt^2 a (data.lam and data.gvt: free scratch)
  data.lam = vv + dt * a;
  difference(model, model.rest_position.data(), q, data.gvt.data());
  data.gvt += dt * data.lam;
  residualParameterColumns(model, data, q, v, a.data(), data.lam.data(), data.gvt.data(), data.Minv, -dt, groups,
                           dv_dp);
  if (groups & kParamInertia)
    addGyroscopicImpulseInertiaColumns(model, v, dt, data.Minv, Dv.leftCols(10 * (model.njoints - 1)));
  dIntegrateProduct(model, data.v_tmp.data(), 1, dt, Dv, Dq, false, Motion::Step);
  if (!reexpress) return;
  if (hasStepMaps(model)) reexpressVelocityRows(model, dt, data.v_step.data(), Dv);
  addGyroscopicRateParameterColumns(model, data.v_step.data(), dt, groups, Dv);
}

}  // namespace rigidiff
