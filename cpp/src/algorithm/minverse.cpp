#include "rigidiff/algorithm/aba.hpp"
#include "rigidiff/algorithm/aba_detail.hpp"
#include "rigidiff/algorithm/kinematics.hpp"

namespace rigidiff {

// The ABA run symbolically on tau = identity columns (Carpentier & Mansard 2018), in the world frame
// so that forces and accelerations pass between bodies without transforms. Only the upper triangle
// (columns from each joint's own index on) is computed; the lower one is copied at the end.
const MatX& computeMinverse(const Model& model, Data& data, const double* q, const double* extra_diag) {
  forwardKinematics(model, data, q);
  Mat6X& oS = data.J;
  const int nv = model.nv;
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& jm = model.joints[i];
    data.oMi[i].actCols(data.S.middleCols(jm.idx_v, jm.nv), oS.middleCols(jm.idx_v, jm.nv));
    data.Yaba[i] = model.inertias[i].transformed(data.oMi[i]).matrix();
    data.Fcol[i].setZero();
  }
  // backward pass: rows of the "pre" inverse, Minv_pre[i, subtree(i)] = Dinv (E_i - S^T F_i)
  for (int i = model.njoints - 1; i > 0; --i) {
    const JointModel& jm = model.joints[i];
    const int n = jm.nv, c0 = jm.idx_v, nc = model.subtreeNv[i];
    if (!detail::invertJointInertia(model, data, oS, i, extra_diag)) detail::throwSingular(model, i);
    const auto S = oS.middleCols(c0, n);
    const auto U = data.U.middleCols(c0, n);
    const auto Dinv = data.Dinv[i].topLeftCorner(n, n);
    auto rows = data.Minv.block(c0, c0, n, nc);
    rows.leftCols(n) = Dinv;
    if (nc > n) {
      auto tmp = data.Ftmp.topLeftCorner(n, nc - n);
      tmp.noalias() = S.transpose() * data.Fcol[i].middleCols(c0 + n, nc - n);
      rows.rightCols(nc - n).noalias() = -Dinv * tmp;
    }
    const int p = model.parents[i];
    if (p == 0) continue;
    auto Fi = data.Fcol[i].middleCols(c0, nc);
    Fi.noalias() += U * rows;
    data.Fcol[p].middleCols(c0, nc) += Fi;
    Mat6J UD(6, n);
    UD.noalias() = U * Dinv;
    data.Yaba[i].noalias() -= UD * U.transpose();
    data.Yaba[p] += data.Yaba[i];
  }
  // forward pass on the upper triangle: Minv[i, c0:] -= Dinv U^T A_parent; A_i = A_parent + S Minv[i, c0:]
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& jm = model.joints[i];
    const int n = jm.nv, c0 = jm.idx_v, nc = model.subtreeNv[i], w = nv - c0;
    const int p = model.parents[i];
    auto rows = data.Minv.block(c0, c0, n, w);
    rows.rightCols(w - nc).setZero();  // the backward pass wrote only the subtree's columns
    auto A = data.Fcol[i].middleCols(c0, w);
    if (p == 0) {
      A.setZero();
    } else {
      const auto Ap = data.Fcol[p].middleCols(c0, w);
      auto tmp = data.Ftmp.topLeftCorner(n, w);
      tmp.noalias() = data.U.middleCols(c0, n).transpose() * Ap;
      rows.noalias() -= data.Dinv[i].topLeftCorner(n, n) * tmp;
      A = Ap;
    }
    A.noalias() += oS.middleCols(c0, n) * rows;
  }
  data.Minv.triangularView<Eigen::StrictlyLower>() = data.Minv.transpose();
  return data.Minv;
}

}  // namespace rigidiff
