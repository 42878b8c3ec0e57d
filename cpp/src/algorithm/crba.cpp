#include "rigidiff/algorithm/crba.hpp"

#include "rigidiff/algorithm/kinematics.hpp"

namespace rigidiff {

namespace {

// One-dof joint: F = Ycrb s is a single force, carried up the support.
void fillColumnSingle(const Model& model, Data& data, int i) {
  const int col = model.joints[i].idx_v;
  Vec6 F = data.Ycrb[i] * Vec6(data.S.col(col));
  data.M(col, col) = data.S.col(col).dot(F);
  for (int j = i; model.parents[j] != 0;) {
    F = data.liMi[j].actForce(F);
    j = model.parents[j];
    const JointModel& jp = model.joints[j];
    for (int k = jp.idx_v; k < jp.idx_v + jp.nv; ++k) data.M(k, col) = data.M(col, k) = data.S.col(k).dot(F);
  }
}

// Multi-dof joint: F has one column per dof.
void fillColumnsMulti(const Model& model, Data& data, int i) {
  const JointModel& jm = model.joints[i];
  const int nvi = jm.nv;
  Mat6J F(6, nvi);
  for (int k = 0; k < nvi; ++k) F.col(k) = data.Ycrb[i] * Vec6(data.S.col(jm.idx_v + k));
  data.M.block(jm.idx_v, jm.idx_v, nvi, nvi).noalias() = data.S.middleCols(jm.idx_v, nvi).transpose() * F;
  for (int j = i; model.parents[j] != 0;) {
    data.liMi[j].actForceCols(F, F);
    j = model.parents[j];
    const JointModel& jp = model.joints[j];
    auto blk = data.M.block(jp.idx_v, jm.idx_v, jp.nv, nvi);
    blk.noalias() = data.S.middleCols(jp.idx_v, jp.nv).transpose() * F;
    data.M.block(jm.idx_v, jp.idx_v, nvi, jp.nv) = blk.transpose();
  }
}

}  // namespace

const MatX& crba(const Model& model, Data& data, const double* q) {
  forwardKinematics(model, data, q);
  // entries between joints on different branches stay structurally zero
  data.M.setZero();
  for (int i = 1; i < model.njoints; ++i) data.Ycrb[i] = model.inertias[i];
  for (int i = model.njoints - 1; i > 0; --i) {
    if (model.joints[i].nv == 1)
      fillColumnSingle(model, data, i);
    else
      fillColumnsMulti(model, data, i);
    const int p = model.parents[i];
    if (p != 0) data.Ycrb[p] += data.Ycrb[i].transformed(data.liMi[i]);
  }
  data.M.diagonal() += model.armature;
  return data.M;
}

}  // namespace rigidiff
