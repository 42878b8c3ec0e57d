#include "rigidiff/algorithm/aba.hpp"
#include "rigidiff/algorithm/aba_detail.hpp"
#include "rigidiff/algorithm/kinematics.hpp"

namespace rigidiff {

const MatX& computeMinverse(const Model& model, Data& data, const double* q) {
  forwardKinematics(model, data, q);
  for (int i = 1; i < model.njoints; ++i) {
    data.Yaba[i] = model.inertiaMatrices[i];
    data.Fcol[i].setZero();
  }
  // backward pass: rows of the "pre" inverse, Minv_pre[i, subtree(i)] = Dinv (E_i - S^T F_i)
  for (int i = model.njoints - 1; i > 0; --i) {
    const JointModel& jm = model.joints[i];
    const int n = jm.nv, c0 = jm.idx_v, nc = model.subtreeNv[i];
    if (!detail::invertJointInertia(model, data, data.S, i, nullptr)) detail::throwSingular(model, i);
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
