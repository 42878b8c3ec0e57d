#include "rigidiff/multibody/data.hpp"

#include <new>

namespace rigidiff {

Data::Data(const Model& model) {
  const std::size_t n = static_cast<std::size_t>(model.njoints);
  const Eigen::Index nv = model.nv;
  liMi.assign(n, SE3());
  oMi.assign(n, SE3());
  v.assign(n, Vec6::Zero());
  a.assign(n, Vec6::Zero());
  a_gf.assign(n, Vec6::Zero());
  vJ.assign(n, Vec6::Zero());
  c.assign(n, Vec6::Zero());
  f.assign(n, Vec6::Zero());
  fext.assign(n, Vec6::Zero());
  S = Mat6X::Zero(6, nv);
  double q_neutral[7];
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& jm = model.joints[i];
    jointNeutral(jm, q_neutral);
    jointSubspace(jm, q_neutral, S.data() + 6 * jm.idx_v);
  }
  Yaba.assign(n, Mat6::Zero());
  pA.assign(n, Vec6::Zero());
  ov.assign(n, Vec6::Zero());
  oc.assign(n, Vec6::Zero());
  oa_gf.assign(n, Vec6::Zero());
  Dinv.assign(n, Mat6::Zero());
  Ycrb.assign(n, Inertia());
  oYcrb10.assign(n, OriginInertia());
  Fcol.assign(n, Mat6X::Zero(6, nv));
  U = Mat6X::Zero(6, nv);
  Ftmp = Mat6X::Zero(6, nv);
  u = VecX::Zero(nv);
  tau = VecX::Zero(nv);
  ddq = VecX::Zero(nv);
  M = MatX::Zero(nv, nv);
  Minv = MatX::Zero(nv, nv);
  J = Mat6X::Zero(6, nv);
  dJ = Mat6X::Zero(6, nv);
  mass_sub.assign(n, 0.0);
  com_sub.assign(n, Vec3::Zero());
  Jcom = Eigen::Matrix<double, 3, Eigen::Dynamic>::Zero(3, nv);
  oYcrb.assign(n, Mat6::Zero());
  oBcrb.assign(n, Mat6::Zero());
  oH.assign(n, Vec6::Zero());
  oF.assign(n, Vec6::Zero());
  dtau_dq = MatX::Zero(nv, nv);
  dP.setZero(nv, 6);
  dC.setZero(nv, 6);
  dtau_dv = MatX::Zero(nv, nv);
  ddq_dq = MatX::Zero(nv, nv);
  ddq_dv = MatX::Zero(nv, nv);
  ddq_tmp = VecX::Zero(nv);
  step_nv = nv;
  step_jacobian_storage = VecX::Zero(6 * nv * nv);
  setStepJacobianStorage(nullptr);
  const Eigen::Index ntheta = 10 * (model.njoints - 1);
  Yreg = MatX::Zero(nv, ntheta);
  fbar.assign(n, Vec6::Zero());
  abar.assign(n, Vec6::Zero());
  vbar.assign(n, Vec6::Zero());
  vjp_theta = VecX::Zero(ntheta);
  for (VecX* x : {&vjp_q, &vjp_v, &lam, &gvt, &vjp_tmp, &carry_q, &carry_v, &carry_q2, &carry_v2, &v_next})
    *x = VecX::Zero(nv);
  q_next = VecX::Zero(model.nq);
  tau_eff = VecX::Zero(nv);
  extra_diag = VecX::Zero(nv);
  dq_tmp = VecX::Zero(nv);
  v_tmp = VecX::Zero(nv);
  v_step = VecX::Zero(nv);
}

void Data::setStepJacobianStorage(double* external) {
  double* p = external ? external : step_jacobian_storage.data();
  const Eigen::Index nv = step_nv, block = nv * nv;
  Eigen::Map<MatX>* maps[] = {&dq_dq, &dq_dv, &dq_dtau, &dv_dq, &dv_dv, &dv_dtau};
  for (int k = 0; k < 6; ++k) new (maps[k]) Eigen::Map<MatX>(p + k * block, nv, nv);
}

}  // namespace rigidiff
