#include "rigidiff/algorithm/rnea.hpp"

#include "rigidiff/algorithm/kinematics.hpp"

namespace rigidiff {

namespace {
const VecX& rneaImpl(const Model& model, Data& data, const double* q, const double* v, const double* a,
                     bool with_fext) {
  forwardKinematics(model, data, q, v);
  Vec6 a_world = Vec6::Zero();
  a_world.head<3>() = -model.gravity;
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& jm = model.joints[i];
    const int p = model.parents[i];
    data.a_gf[i] = data.c[i] + data.liMi[i].actInv(p == 0 ? a_world : data.a_gf[p]);
    if (a != nullptr) {
      if (jm.nv == 1) {
        data.a_gf[i] += Vec6(data.S.col(jm.idx_v)) * a[jm.idx_v];
      } else {
        Eigen::Map<const VecX> qdd(a + jm.idx_v, jm.nv);
        data.a_gf[i].noalias() += data.S.middleCols(jm.idx_v, jm.nv) * qdd;
      }
    }
    const Mat6& I = model.inertia_matrices[i];
    data.f[i].noalias() = I * data.a_gf[i];
    data.f[i] += crossForce(data.v[i], I * data.v[i]);
    if (with_fext) data.f[i] -= data.fext[i];
  }
  for (int i = model.njoints - 1; i > 0; --i) {
    const JointModel& jm = model.joints[i];
    if (jm.nv == 1)
      data.tau[jm.idx_v] = data.S.col(jm.idx_v).dot(data.f[i]);
    else
      data.tau.segment(jm.idx_v, jm.nv).noalias() = data.S.middleCols(jm.idx_v, jm.nv).transpose() * data.f[i];
    const int p = model.parents[i];
    if (p != 0) data.f[p] += data.liMi[i].actForce(data.f[i]);
  }
  if (a != nullptr) {
    Eigen::Map<const VecX> acc(a, model.nv);
    data.tau.array() += model.armature.array() * acc.array();
  }
  return data.tau;
}
}  // namespace

const VecX& rnea(const Model& model, Data& data, const double* q, const double* v, const double* a, bool with_fext) {
  return rneaImpl(model, data, q, v, a, with_fext);
}

const VecX& nonLinearEffects(const Model& model, Data& data, const double* q, const double* v) {
  return rneaImpl(model, data, q, v, nullptr, false);
}

}  // namespace rigidiff
