#include "rigidiff/algorithm/crba.hpp"

#include "rigidiff/algorithm/kinematics.hpp"

namespace rigidiff {

// World-frame composite rigid-body algorithm: with every subspace and composite inertia expressed
// at the world origin, M(j, i) = S_j^T (Ycrb_i S_i) for every ancestor j of i, with no transforms.
const MatX& crba(const Model& model, Data& data, const double* q) {
  forwardKinematics(model, data, q);
  Mat6X& oS = data.J;
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& jm = model.joints[i];
    data.oMi[i].actCols(data.S.middleCols(jm.idx_v, jm.nv), oS.middleCols(jm.idx_v, jm.nv));
    data.oYcrb10[i] = OriginInertia(model.inertias[i], data.oMi[i]);
  }
  data.M.setZero();  // entries between joints on different branches stay zero
  for (int i = model.njoints - 1; i > 0; --i) {
    const JointModel& jm = model.joints[i];
    const int c0 = jm.idx_v;
    if (jm.nv == 1) {
      const Vec6 F = data.oYcrb10[i] * Vec6(oS.col(c0));
      data.M(c0, c0) = oS.col(c0).dot(F);
      for (int j = model.parents[i]; j != 0; j = model.parents[j]) {
        const JointModel& jp = model.joints[j];
        for (int k = jp.idx_v; k < jp.idx_v + jp.nv; ++k) data.M(k, c0) = data.M(c0, k) = oS.col(k).dot(F);
      }
    } else {
      Mat6J F(6, jm.nv);
      for (int k = 0; k < jm.nv; ++k) F.col(k) = data.oYcrb10[i] * Vec6(oS.col(c0 + k));
      auto diag = data.M.block(c0, c0, jm.nv, jm.nv);
      diag.noalias() = oS.middleCols(c0, jm.nv).transpose() * F;
      for (int r = 0; r < jm.nv; ++r)  // exact symmetry
        for (int c = 0; c < r; ++c) diag(r, c) = diag(c, r) = 0.5 * (diag(r, c) + diag(c, r));
      for (int j = model.parents[i]; j != 0; j = model.parents[j]) {
        const JointModel& jp = model.joints[j];
        auto blk = data.M.block(jp.idx_v, c0, jp.nv, jm.nv);
        blk.noalias() = oS.middleCols(jp.idx_v, jp.nv).transpose() * F;
        data.M.block(c0, jp.idx_v, jm.nv, jp.nv) = blk.transpose();
      }
    }
    const int p = model.parents[i];
    if (p != 0) data.oYcrb10[p] += data.oYcrb10[i];
  }
  data.M.diagonal() += model.armature;
  return data.M;
}

}  // namespace rigidiff
