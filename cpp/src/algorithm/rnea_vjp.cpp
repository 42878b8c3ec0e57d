#include "rigidiff/algorithm/rnea_vjp.hpp"

#include "rigidiff/algorithm/regressor.hpp"
#include "rigidiff/algorithm/rnea.hpp"
#include "rigidiff/macros.hpp"

namespace rigidiff {

void rneaVJP(const Model& model, Data& data, const double* q, const double* v, const double* a, const double* lambda,
             double* g_q, double* g_v, double* g_theta, double* g_gravity) {
  for (int i = 1; i < model.njoints; ++i)
    RD_CHECK_ARG(!model.joints[i].variableSubspace(),
                 "reverse-mode derivatives do not support universal joints (joint " << model.names[i] << ")");
  rnea(model, data, q, v, a, false);  // liMi, v, vJ, c, a_gf and the composite forces f
  Vec6 a_world = Vec6::Zero();
  a_world.head<3>() = -model.gravity;
  const int nv = model.nv;
  VecX& gq = data.vjp_q;
  gq.setZero();

  // top-down: cotangents of the composite forces
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& jm = model.joints[i];
    const int p = model.parents[i];
    const auto S = data.S.middleCols(jm.idx_v, jm.nv);
    Vec6 u = Vec6::Zero();
    if (p > 0) {
      u = data.liMi[i].actInv(data.fbar[p]);
      for (int k = 0; k < jm.nv; ++k) gq[jm.idx_v + k] -= crossMotion(S.col(k), u).dot(data.f[i]);
    }
    data.fbar[i] = u;
    data.fbar[i].noalias() += S * Eigen::Map<const VecJ>(lambda + jm.idx_v, jm.nv);
    data.abar[i].setZero();
    data.vbar[i].setZero();
  }

  // bottom-up: cotangents of accelerations and velocities
  Vec6 abar_world = Vec6::Zero();
  for (int i = model.njoints - 1; i > 0; --i) {
    const JointModel& jm = model.joints[i];
    const int p = model.parents[i];
    const auto S = data.S.middleCols(jm.idx_v, jm.nv);
    const Mat6& I = model.inertia_matrices[i];
    const Vec6& fb = data.fbar[i];
    const Vec6& vi = data.v[i];
    // f_i = I a_i + v_i x* (I v_i)
    data.abar[i].noalias() += I * fb;
    data.vbar[i].noalias() += I * crossMotion(fb, vi);
    data.vbar[i] -= crossForce(fb, I * vi);
    // a_i = X_i a_p + S qdd + v_i x vJ_i
    data.vbar[i] += crossForce(data.vJ[i], data.abar[i]);
    if (g_theta) {
      Eigen::Map<Vec10> gt(g_theta + 10 * (i - 1));
      gt.noalias() = bodyRegressor(vi, data.a_gf[i]).transpose() * fb;
    }
    if (g_v) {
      const Vec6 w = data.vbar[i] - crossForce(vi, data.abar[i]);
      Eigen::Map<VecJ>(g_v + jm.idx_v, jm.nv).noalias() = S.transpose() * w;
    }
    const Vec6 Xa = data.liMi[i].actInv(p == 0 ? a_world : data.a_gf[p]);
    const Vec6 Xv = (p == 0) ? Vec6::Zero() : data.liMi[i].actInv(data.v[p]);
    for (int k = 0; k < jm.nv; ++k) {
      const Vec6 s = S.col(k);
      gq[jm.idx_v + k] -= crossMotion(s, Xa).dot(data.abar[i]) + crossMotion(s, Xv).dot(data.vbar[i]);
    }
    if (p > 0) {
      data.abar[p] += data.liMi[i].actForce(data.abar[i]);
      data.vbar[p] += data.liMi[i].actForce(data.vbar[i]);
    } else {
      abar_world += data.liMi[i].actForce(data.abar[i]);
    }
  }
  if (g_q) Eigen::Map<VecX>(g_q, nv) = gq;
  if (g_gravity) Eigen::Map<Vec3>(g_gravity).noalias() = -abar_world.head<3>();
}

}  // namespace rigidiff
