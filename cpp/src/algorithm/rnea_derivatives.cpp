#include "rigidiff/algorithm/rnea_derivatives.hpp"

#include "rigidiff/algorithm/kinematics.hpp"
#include "rigidiff/macros.hpp"

namespace rigidiff {

// Notation (all quantities at the world origin, world axes): J_i the subspace columns of joint i,
// v_i / a_i body velocities / accelerations (a_0 = -g), f_i body forces, and over the subtree of i:
// F_i = sum f, Y_i = sum inertias, H_i = sum momenta, B_i = sum inertia rates. A tangent
// perturbation of dof s of joint j moves the subtree of j rigidly by the twist s; with u = s x v_p
// (p = parent of j) the subtree's force derivative is
//   dF_i/dq_s = s x* F_i - G_i,  G_i = Y_i (s x a_p - u x v_p) + u x* H_i + B_i u   (i in subtree(j))
// and dtau_i/dq_s = -J_i^T G_i for i in subtree(j), J_i^T (s x* F_j - G_j) for ancestors i of j
// (the rotation of J_i cancels against s x* F_i). For velocities, with w = s x (v_p + v_j),
//   dF_i/dqdot_s = B_i s + s x* H_i - Y_i w.
void computeRNEADerivatives(const Model& model, Data& data, const double* q, const double* v, const double* a,
                            bool kinematics_ready) {
  if (!kinematics_ready) forwardKinematics(model, data, q);
  Mat6X& J = data.J;
  Vec6 a_world = Vec6::Zero();
  a_world.head<3>() = -model.gravity;
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& jm = model.joints[i];
    RD_CHECK_ARG(!jm.variableSubspace(),
                 "derivatives are not available for the universal joint '" << model.names[i] << "' yet");
    const int n = jm.nv, c0 = jm.idx_v, p = model.parents[i];
    if (!kinematics_ready) data.oMi[i].actCols(data.S.middleCols(c0, n), J.middleCols(c0, n));
    Vec6 ovJ, oaJ;
    ovJ.noalias() = J.middleCols(c0, n) * Eigen::Map<const VecX>(v + c0, n);
    oaJ.noalias() = J.middleCols(c0, n) * Eigen::Map<const VecX>(a + c0, n);
    data.ov[i] = (p == 0) ? ovJ : Vec6(data.ov[p] + ovJ);
    data.oa_gf[i] = (p == 0 ? a_world : data.oa_gf[p]) + oaJ + crossMotion(data.ov[i], ovJ);
    const OriginInertia oI(model.inertias[i], data.oMi[i]);
    oI.writeMatrix(data.oYcrb[i]);
    data.oH[i] = oI * data.ov[i];
    data.oF[i] = oI * data.oa_gf[i] + crossForce(data.ov[i], data.oH[i]);
    data.oBcrb[i] = oI.rate(data.ov[i]);  // [v x*] Y - Y [v x]
  }
  for (int i = model.njoints - 1; i > 0; --i) {
    const JointModel& jm = model.joints[i];
    data.tau.segment(jm.idx_v, jm.nv).noalias() = J.middleCols(jm.idx_v, jm.nv).transpose() * data.oF[i];
    const int p = model.parents[i];
    if (p == 0) continue;
    data.oYcrb[p] += data.oYcrb[i];
    data.oH[p] += data.oH[i];
    data.oF[p] += data.oF[i];
    data.oBcrb[p] += data.oBcrb[i];
  }
  data.tau.array() += model.armature.array() * Eigen::Map<const VecX>(a, model.nv).array();

  // per dof row k of joint i, precomputed: P_k = J_k^T Y_i and C_k = J_k^T B_i - (J_k x* H_i)^T, so that
  // J_i^T G_i = P x + C u and J_i^T Gv_i = C s - P w (using <m, u x* H> = -<u, m x* H>)
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& ji = model.joints[i];
    for (int k = ji.idx_v; k < ji.idx_v + ji.nv; ++k) {
      const Vec6 m = J.col(k);
      data.dP.row(k).noalias() = m.transpose() * data.oYcrb[i];
      data.dC.row(k).noalias() = m.transpose() * data.oBcrb[i];
      data.dC.row(k) -= crossForce(m, data.oH[i]).transpose();
    }
  }
  data.dtau_dq.setZero();
  data.dtau_dv.setZero();
  for (int j = 1; j < model.njoints; ++j) {
    const JointModel& jj = model.joints[j];
    const int p = model.parents[j];
    const Vec6 vp = (p == 0) ? Vec6::Zero() : data.ov[p];
    const Vec6& ap = (p == 0) ? a_world : data.oa_gf[p];
    // the subtree of j: contiguous joints (depth-first), hence contiguous rows [idx_v, idx_v + subtree_nv)
    const int r0 = jj.idx_v, nr = model.subtree_nv[j];
    for (int col = jj.idx_v; col < jj.idx_v + jj.nv; ++col) {
      const Vec6 s = J.col(col);
      const Vec6 u = crossMotion(s, vp);
      const Vec6 x = crossMotion(s, ap) - crossMotion(u, vp);
      const Vec6 w = crossMotion(s, Vec6(vp + data.ov[j]));
      // row by row with fixed-size dot products: dynamic-size matrix-vector products of these small
      // blocks cost more in set-up than in arithmetic
      double* dq = data.dtau_dq.col(col).data();
      double* dv = data.dtau_dv.col(col).data();
      for (int r = r0; r < r0 + nr; ++r) {
        const Eigen::Map<const Vec6> P(data.dP.row(r).data()), C(data.dC.row(r).data());
        dq[r] = -(P.dot(x) + C.dot(u));
        dv[r] = C.dot(s) - P.dot(w);
      }
      // rows of the strict ancestors of j
      const Vec6 Gj = data.oYcrb[j] * x + crossForce(u, data.oH[j]) + data.oBcrb[j] * u;
      const Vec6 dFq = crossForce(s, data.oF[j]) - Gj;
      const Vec6 dFv = data.oBcrb[j] * s + crossForce(s, data.oH[j]) - data.oYcrb[j] * w;
      for (int i = p; i != 0; i = model.parents[i]) {
        const JointModel& ji = model.joints[i];
        for (int k = ji.idx_v; k < ji.idx_v + ji.nv; ++k) {
          const Eigen::Map<const Vec6> Jk(J.col(k).data());
          dq[k] = Jk.dot(dFq);
          dv[k] = Jk.dot(dFv);
        }
      }
    }
  }
}

}  // namespace rigidiff
