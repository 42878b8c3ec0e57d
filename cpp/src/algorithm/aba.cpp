#include "rigidiff/algorithm/aba.hpp"

#include <cmath>

#include "rigidiff/algorithm/kinematics.hpp"
#include "rigidiff/macros.hpp"

namespace rigidiff {

namespace {

// D^-1 of joint i from U = Yaba S (columns of data.U); returns false when D is singular.
bool invertJointInertia(const Model& model, Data& data, int i, const double* extra_diag) {
  const JointModel& jm = model.joints[i];
  const int n = jm.nv;
  const auto S = data.S.middleCols(jm.idx_v, n);
  auto U = data.U.middleCols(jm.idx_v, n);
  U.noalias() = data.Yaba[i] * S;
  if (n == 1) {
    double D = S.col(0).dot(U.col(0)) + model.armature[jm.idx_v];
    if (extra_diag) D += extra_diag[jm.idx_v];
    if (!(D > 1e-14 * (1.0 + std::abs(U.col(0).norm())))) return false;
    data.Dinv[i](0, 0) = 1.0 / D;
    return true;
  }
  MatJJ D(n, n);
  D.noalias() = S.transpose() * U;
  D.diagonal() += model.armature.segment(jm.idx_v, n);
  if (extra_diag) D.diagonal() += Eigen::Map<const VecX>(extra_diag + jm.idx_v, n);
  Eigen::LLT<MatJJ> llt(D);
  if (llt.info() != Eigen::Success) return false;
  data.Dinv[i].topLeftCorner(n, n) = llt.solve(MatJJ::Identity(n, n));
  return true;
}

[[noreturn]] void singular(const Model& model, int i) {
  RD_THROW(std::runtime_error, "articulated inertia of joint '" << model.names[i]
                                   << "' is singular: the bodies it moves have no mass or inertia along its axes");
}

}  // namespace

const VecX& aba(const Model& model, Data& data, const double* q, const double* v, const double* tau, bool with_fext,
                const double* extra_diag) {
  forwardKinematics(model, data, q, v);
  for (int i = 1; i < model.njoints; ++i) {
    const Inertia& I = model.inertias[i];
    data.Yaba[i] = I.matrix();
    data.pA[i] = crossForce(data.v[i], I * data.v[i]);
    if (with_fext) data.pA[i] -= data.fext[i];
  }
  for (int i = model.njoints - 1; i > 0; --i) {
    const JointModel& jm = model.joints[i];
    const int n = jm.nv;
    if (!invertJointInertia(model, data, i, extra_diag)) singular(model, i);
    const auto S = data.S.middleCols(jm.idx_v, n);
    const auto U = data.U.middleCols(jm.idx_v, n);
    auto u = data.u.segment(jm.idx_v, n);
    u.noalias() = Eigen::Map<const VecX>(tau + jm.idx_v, n) - S.transpose() * data.pA[i];
    const int p = model.parents[i];
    if (p == 0) continue;
    Mat6 Ia = data.Yaba[i];
    Vec6 pa = data.pA[i];
    if (n == 1) {
      const double dinv = data.Dinv[i](0, 0);
      Ia.noalias() -= dinv * U.col(0) * U.col(0).transpose();
      pa.noalias() += Ia * data.c[i] + U.col(0) * (dinv * u[0]);
    } else {
      const auto Dinv = data.Dinv[i].topLeftCorner(n, n);
      Mat6J UD(6, n);
      UD.noalias() = U * Dinv;
      Ia.noalias() -= UD * U.transpose();
      pa.noalias() += Ia * data.c[i] + UD * u;
    }
    addTransformedInertia(data.liMi[i], Ia, data.Yaba[p]);
    data.pA[p] += data.liMi[i].actForce(pa);
  }
  Vec6 a_world = Vec6::Zero();
  a_world.head<3>() = -model.gravity;
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& jm = model.joints[i];
    const int n = jm.nv;
    const int p = model.parents[i];
    data.a_gf[i] = data.liMi[i].actInv(p == 0 ? a_world : data.a_gf[p]) + data.c[i];
    auto qdd = data.ddq.segment(jm.idx_v, n);
    const auto U = data.U.middleCols(jm.idx_v, n);
    if (n == 1) {
      qdd[0] = data.Dinv[i](0, 0) * (data.u[jm.idx_v] - U.col(0).dot(data.a_gf[i]));
    } else {
      VecJ r = data.u.segment(jm.idx_v, n) - U.transpose() * data.a_gf[i];
      qdd.noalias() = data.Dinv[i].topLeftCorner(n, n) * r;
    }
    data.a_gf[i].noalias() += data.S.middleCols(jm.idx_v, n) * qdd;
  }
  return data.ddq;
}

const MatX& computeMinverse(const Model& model, Data& data, const double* q) {
  forwardKinematics(model, data, q);
  for (int i = 1; i < model.njoints; ++i) {
    data.Yaba[i] = model.inertias[i].matrix();
    data.Fcol[i].setZero();
  }
  // backward pass: rows of the "pre" inverse, Minv_pre[i, subtree(i)] = Dinv (E_i - S^T F_i)
  for (int i = model.njoints - 1; i > 0; --i) {
    const JointModel& jm = model.joints[i];
    const int n = jm.nv, c0 = jm.idx_v, nc = model.subtreeNv[i];
    if (!invertJointInertia(model, data, i, nullptr)) singular(model, i);
    const auto S = data.S.middleCols(c0, n);
    const auto U = data.U.middleCols(c0, n);
    const auto Dinv = data.Dinv[i].topLeftCorner(n, n);
    auto rows = data.Minv.block(c0, c0, n, nc);
    rows.setZero();
    rows.leftCols(n) = Dinv;
    if (nc > n) {
      auto tmp = data.Ftmp.topLeftCorner(n, nc - n);
      tmp.noalias() = S.transpose() * data.Fcol[i].middleCols(c0 + n, nc - n);
      rows.rightCols(nc - n).noalias() -= Dinv * tmp;
    }
    const int p = model.parents[i];
    if (p == 0) continue;
    // carry F_i + U Minv_pre[i, :] to the parent
    auto Fi = data.Fcol[i].middleCols(c0, nc);
    Fi.noalias() += U * rows;
    auto Fp = data.Fcol[p].middleCols(c0, nc);
    for (int k = 0; k < nc; ++k) Fp.col(k) += data.liMi[i].actForce(Vec6(Fi.col(k)));
    Mat6J UD(6, n);
    UD.noalias() = U * Dinv;
    Mat6 Ia = data.Yaba[i];
    Ia.noalias() -= UD * U.transpose();
    addTransformedInertia(data.liMi[i], Ia, data.Yaba[p]);
  }
  // forward pass: A_i = X^-1 A_parent, Minv[i, :] = Minv_pre[i, :] - Dinv U^T A_i, A_i += S Minv[i, :]
  const int nv = model.nv;
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& jm = model.joints[i];
    const int n = jm.nv, c0 = jm.idx_v, nc = model.subtreeNv[i];
    const int p = model.parents[i];
    Mat6X& A = data.Fcol[i];
    auto rows = data.Minv.middleRows(c0, n);
    // entries outside the subtree start from zero (set here because the backward pass only wrote the subtree)
    rows.leftCols(c0).setZero();
    rows.rightCols(nv - c0 - nc).setZero();
    if (p == 0) {
      A.setZero();
    } else {
      for (int k = 0; k < nv; ++k) A.col(k) = data.liMi[i].actInv(Vec6(data.Fcol[p].col(k)));
      auto tmp = data.Ftmp.topRows(n);
      tmp.noalias() = data.U.middleCols(c0, n).transpose() * A;
      rows.noalias() -= data.Dinv[i].topLeftCorner(n, n) * tmp;
    }
    A.noalias() += data.S.middleCols(c0, n) * rows;
  }
  return data.Minv;
}

}  // namespace rigidiff
