#include "rigidiff/algorithm/minverse.hpp"
#include "rigidiff/algorithm/aba_detail.hpp"
#include "rigidiff/algorithm/kinematics.hpp"

namespace rigidiff {

namespace {

// The two sweeps of the inverse once the factorisation (data.U, data.Dinv, world subspaces in
// data.J) is known. Backward: rows of the "pre" inverse, Minv_pre[i, subtree(i)] = Dinv (E_i - S^T F_i);
// forward, on the upper triangle: Minv[i, c0:] -= Dinv U^T A_parent, A_i = A_parent + S Minv[i, c0:].
// One-dof joints (most of a robot) take fixed-size vectors: dynamic-size products of a 6-row block
// would go through Eigen's general matrix product, whose set-up costs more than the arithmetic here.
// With treeOf (the root joint of each joint), only the diagonal blocks of the kinematic trees are filled:
// M^-1 couples no two trees, and a forest of many small trees (free bodies, particles) then costs the
// sum of its trees' squares instead of nv^2.
void minverseSweeps(const Model& model, Data& data, const std::vector<int>* treeOf = nullptr) {
  const Mat6X& oS = data.J;
  const int nv = model.nv;
  auto treeEnd = [&](int i) {
    if (!treeOf) return nv;
    const int root = (*treeOf)[i];
    return model.joints[root].idx_v + model.subtree_nv[root];
  };
  for (int i = 1; i < model.njoints; ++i)
    data.Fcol[i].middleCols(model.joints[i].idx_v, model.subtree_nv[i]).setZero();  // read by the backward sweep
  for (int i = model.njoints - 1; i > 0; --i) {
    const JointModel& jm = model.joints[i];
    const int n = jm.nv, c0 = jm.idx_v, nc = model.subtree_nv[i];
    const int p = model.parents[i];
    if (n == 1) {
      const Vec6 s = oS.col(c0), U = data.U.col(c0);
      const double dinv = data.Dinv[i](0, 0);
      auto row = data.Minv.row(c0).segment(c0, nc);
      row[0] = dinv;
      if (nc > 1) row.tail(nc - 1).noalias() = -dinv * (s.transpose() * data.Fcol[i].middleCols(c0 + 1, nc - 1));
      if (p == 0) continue;
      auto Fi = data.Fcol[i].middleCols(c0, nc);
      Fi.noalias() += U * row;
      data.Fcol[p].middleCols(c0, nc) += Fi;
      continue;
    }
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
    if (p == 0) continue;
    auto Fi = data.Fcol[i].middleCols(c0, nc);
    Fi.noalias() += U * rows;
    data.Fcol[p].middleCols(c0, nc) += Fi;
  }
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& jm = model.joints[i];
    const int n = jm.nv, c0 = jm.idx_v, nc = model.subtree_nv[i], w = treeEnd(i) - c0;
    const int p = model.parents[i];
    auto rows = data.Minv.block(c0, c0, n, w);
    rows.rightCols(w - nc).setZero();  // the backward sweep wrote only the subtree's columns
    auto A = data.Fcol[i].middleCols(c0, w);
    if (n == 1) {
      auto row = data.Minv.row(c0).segment(c0, w);
      if (p == 0) {
        A.noalias() = Vec6(oS.col(c0)) * row;
        continue;
      }
      const auto Ap = data.Fcol[p].middleCols(c0, w);
      row.noalias() -= data.Dinv[i](0, 0) * (Vec6(data.U.col(c0)).transpose() * Ap);
      A = Ap;
      A.noalias() += Vec6(oS.col(c0)) * row;
      continue;
    }
    if (p == 0) {
      if (nc == n) continue;  // a tree of one joint: its force columns feed no child
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
  if (!treeOf) {
    data.Minv.triangularView<Eigen::StrictlyLower>() = data.Minv.transpose();
    return;
  }
  for (int t = 1; t < model.njoints; ++t) {
    if (model.parents[t] != 0) continue;
    auto block = data.Minv.block(model.joints[t].idx_v, model.joints[t].idx_v, model.subtree_nv[t], model.subtree_nv[t]);
    block.triangularView<Eigen::StrictlyLower>() = block.transpose();
  }
}

}  // namespace

// The ABA run symbolically on tau = identity columns (Carpentier & Mansard 2018), in the world frame
// so that forces and accelerations pass between bodies without transforms. Only the upper triangle
// (columns from each joint's own index on) is computed; the lower one is copied at the end.
const MatX& computeMinverse(const Model& model, Data& data, const double* q, const double* extra_diag) {
  forwardKinematics(model, data, q);
  Mat6X& oS = data.J;
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& jm = model.joints[i];
    data.oMi[i].actCols(data.S.middleCols(jm.idx_v, jm.nv), oS.middleCols(jm.idx_v, jm.nv));
    OriginInertia(model.inertias[i], data.oMi[i]).writeMatrix(data.Yaba[i]);
  }
  // the articulated-body factorisation: U = Yaba S, Dinv, and the articulated inertias
  for (int i = model.njoints - 1; i > 0; --i) {
    const JointModel& jm = model.joints[i];
    const int n = jm.nv, c0 = jm.idx_v, p = model.parents[i];
    if (n == 1) {
      const Vec6 s = oS.col(c0);
      const Vec6 U = data.Yaba[i] * s;
      const double D = s.dot(U) + model.armature[c0] + (extra_diag ? extra_diag[c0] : 0.0);
      if (detail::singularPivot(D, s, data.Yaba[i], data.oMi[i].p)) detail::throwSingular(model, i, D, data.oMi[i].p.norm(), q);
      data.U.col(c0) = U;
      data.Dinv[i](0, 0) = 1.0 / D;
      if (p == 0) continue;
      data.Yaba[i].noalias() -= (U / D) * U.transpose();
    } else {
      if (!detail::invertJointInertia(model, data, oS, i, extra_diag))
        detail::throwSingular(model, i, data.Yaba[i].allFinite() ? 0.0 : NAN, data.oMi[i].p.norm(), q);
      if (p == 0) continue;
      const auto U = data.U.middleCols(c0, n);
      Mat6J UD(6, n);
      UD.noalias() = U * data.Dinv[i].topLeftCorner(n, n);
      data.Yaba[i].noalias() -= UD * U.transpose();
    }
    data.Yaba[p] += data.Yaba[i];
  }
  minverseSweeps(model, data);
  return data.Minv;
}

const MatX& computeMinverseFromFactorization(const Model& model, Data& data) {
  minverseSweeps(model, data);
  return data.Minv;
}

void computeMinverseTreeBlocksFromFactorization(const Model& model, Data& data, const std::vector<int>& treeOf) {
  minverseSweeps(model, data, &treeOf);
}

void clearMinverseOffTreeBlocks(const Model& model, Data& data) {
  for (int t = 1; t < model.njoints; ++t) {
    if (model.parents[t] != 0) continue;
    const int b = model.joints[t].idx_v, n = model.subtree_nv[t];
    data.Minv.block(b, 0, n, b).setZero();
    data.Minv.block(b, b + n, n, model.nv - b - n).setZero();
  }
}

}  // namespace rigidiff
