#include "rigidiff/algorithm/aba.hpp"

#include "rigidiff/algorithm/aba_detail.hpp"
#include "rigidiff/algorithm/kinematics.hpp"

namespace rigidiff {

// The passes run in the world frame (all quantities at the world origin, world axes), as in
// Featherstone's fixed-frame formulation: articulated inertias then accumulate without any
// transform, which saves most of the cost of the local-frame version.
const VecX& aba(const Model& model, Data& data, const double* q, const double* v, const double* tau, bool with_fext,
                const double* extra_diag) {
  forwardKinematics(model, data, q);
  Mat6X& oS = data.J;  // world-frame motion subspaces (the joint Jacobians)
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& jm = model.joints[i];
    const int n = jm.nv, c0 = jm.idx_v;
    const int p = model.parents[i];
    const SE3& oMi = data.oMi[i];
    Vec6 ovJ;
    if (n == 1) {
      oS.col(c0) = oMi.act(Vec6(data.S.col(c0)));
      ovJ = oS.col(c0) * v[c0];
    } else {
      oMi.actCols(data.S.middleCols(c0, n), oS.middleCols(c0, n));
      ovJ.noalias() = oS.middleCols(c0, n) * Eigen::Map<const VecX>(v + c0, n);
    }
    data.ov[i] = (p == 0) ? ovJ : Vec6(data.ov[p] + ovJ);
    data.oc[i] = crossMotion(data.ov[i], ovJ);
    if (jm.variableSubspace()) data.oc[i] += oMi.act(jointBias(jm, q + jm.idx_q, v + c0));
    const OriginInertia oI(model.inertias[i], oMi);
    oI.writeMatrix(data.Yaba[i]);
    data.pA[i] = crossForce(data.ov[i], oI * data.ov[i]);
    if (with_fext) data.pA[i] -= oMi.actForce(data.fext[i]);
  }
  for (int i = model.njoints - 1; i > 0; --i) {
    const JointModel& jm = model.joints[i];
    const int n = jm.nv, c0 = jm.idx_v;
    const int p = model.parents[i];
    Mat6& Ia = data.Yaba[i];
    Vec6& pa = data.pA[i];
    if (n == 1) {
      // one-dof joints (most of a robot): fixed-size vectors only
      const Vec6 s = oS.col(c0);
      const Vec6 U = Ia * s;
      const double D = s.dot(U) + model.armature[c0] + (extra_diag ? extra_diag[c0] : 0.0);
      if (detail::singularPivot(D, s, Ia, data.oMi[i].p)) detail::throwSingular(model, i, D, data.oMi[i].p.norm(), q);
      const double dinv = 1.0 / D;
      data.U.col(c0) = U;
      data.Dinv[i](0, 0) = dinv;
      const double u = tau[c0] - s.dot(pa);
      data.u[c0] = u;
      if (p == 0) continue;
      // the parent receives Ia - U U^T / D and pa + (Ia - U U^T / D) c + U u / D, formed in one pass
      // each (Ia itself is not needed afterwards)
      const Vec6& oc = data.oc[i];
      data.pA[p] += pa + Ia * oc + U * (dinv * (u - U.dot(oc)));
      const Vec6 Ud = dinv * U;
      Mat6& Ip = data.Yaba[p];
      for (int col = 0; col < 6; ++col) Ip.col(col) += Ia.col(col) - U[col] * Ud;
    } else {
      if (!detail::invertJointInertia(model, data, oS, i, extra_diag))
        detail::throwSingular(model, i, data.Yaba[i].allFinite() ? 0.0 : NAN, data.oMi[i].p.norm(), q);
      const auto U = data.U.middleCols(c0, n);
      auto u = data.u.segment(c0, n);
      u = Eigen::Map<const VecX>(tau + c0, n);
      u.noalias() -= oS.middleCols(c0, n).transpose() * pa;
      if (p == 0) continue;
      Mat6J UD(6, n);
      UD.noalias() = U * data.Dinv[i].topLeftCorner(n, n);
      Ia.noalias() -= UD * U.transpose();
      pa.noalias() += Ia * data.oc[i];
      pa.noalias() += UD * u;
      data.Yaba[p] += Ia;
      data.pA[p] += pa;
    }
  }
  Vec6 a_world = Vec6::Zero();
  a_world.head<3>() = -model.gravity;
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& jm = model.joints[i];
    const int n = jm.nv, c0 = jm.idx_v;
    const int p = model.parents[i];
    Vec6& oa = data.oa_gf[i];
    oa = (p == 0 ? a_world : data.oa_gf[p]) + data.oc[i];
    if (n == 1) {
      const double qdd = data.Dinv[i](0, 0) * (data.u[c0] - data.U.col(c0).dot(oa));
      data.ddq[c0] = qdd;
      oa += oS.col(c0) * qdd;
    } else {
      auto qdd = data.ddq.segment(c0, n);
      VecJ r = data.u.segment(c0, n);
      r.noalias() -= data.U.middleCols(c0, n).transpose() * oa;
      qdd.noalias() = data.Dinv[i].topLeftCorner(n, n) * r;
      oa.noalias() += oS.middleCols(c0, n) * qdd;
    }
  }
  return data.ddq;
}

void abaSolve(const Model& model, Data& data, const double* b, double* x) {
  const Mat6X& oS = data.J;
  for (int i = 1; i < model.njoints; ++i) data.pA[i].setZero();
  for (int i = model.njoints - 1; i > 0; --i) {
    const JointModel& jm = model.joints[i];
    const int n = jm.nv, c0 = jm.idx_v;
    const int p = model.parents[i];
    const Vec6& pa = data.pA[i];
    if (n == 1) {
      const double u = b[c0] - oS.col(c0).dot(pa);
      data.u[c0] = u;
      if (p == 0) continue;
      data.pA[p] += pa + data.U.col(c0) * (data.Dinv[i](0, 0) * u);
    } else {
      auto u = data.u.segment(c0, n);
      u = Eigen::Map<const VecX>(b + c0, n);
      u.noalias() -= oS.middleCols(c0, n).transpose() * pa;
      if (p == 0) continue;
      const VecJ Du = data.Dinv[i].topLeftCorner(n, n) * u;
      data.pA[p] += pa;
      data.pA[p].noalias() += data.U.middleCols(c0, n) * Du;
    }
  }
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& jm = model.joints[i];
    const int n = jm.nv, c0 = jm.idx_v;
    const int p = model.parents[i];
    Vec6& oa = data.oa_gf[i];
    if (p == 0)
      oa.setZero();
    else
      oa = data.oa_gf[p];
    if (n == 1) {
      const double xk = data.Dinv[i](0, 0) * (data.u[c0] - data.U.col(c0).dot(oa));
      x[c0] = xk;
      oa += oS.col(c0) * xk;
    } else {
      VecJ r = data.u.segment(c0, n);
      r.noalias() -= data.U.middleCols(c0, n).transpose() * oa;
      const VecJ xj = data.Dinv[i].topLeftCorner(n, n) * r;
      Eigen::Map<VecX>(x + c0, n) = xj;
      oa.noalias() += oS.middleCols(c0, n) * xj;
    }
  }
}

}  // namespace rigidiff
