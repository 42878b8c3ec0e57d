#include "rigidiff/algorithm/kinematics.hpp"

#include <cmath>

namespace rigidiff {

namespace {
inline void placeJoint(const Model& model, Data& data, int i, const double* q) {
  const JointModel& jm = model.joints[i];
  if (jm.type == JointType::Revolute) {  // most joints: Rodrigues' formula with the placement folded in
    const double angle = q[jm.idx_q], s = std::sin(angle), c = std::cos(angle);
    SE3& M = data.liMi[i];
    M.R = model.joint_placements[i].R + s * model.placed_axis_cross[i] + (1.0 - c) * model.placed_axis_cross2[i];
    M.p = model.joint_placements[i].p;
  } else {
    data.liMi[i] = model.joint_placements[i] * jointTransform(jm, q + jm.idx_q);
  }
  const int p = model.parents[i];
  data.oMi[i] = (p == 0) ? data.liMi[i] : data.oMi[p] * data.liMi[i];
  // constant subspaces are filled once, when the Data is built
  if (jm.variableSubspace()) jointSubspace(jm, q + jm.idx_q, data.S.data() + 6 * jm.idx_v);
}
}  // namespace

void forwardKinematics(const Model& model, Data& data, const double* q) {
  for (int i = 1; i < model.njoints; ++i) placeJoint(model, data, i, q);
}

void forwardKinematics(const Model& model, Data& data, const double* q, const double* v) {
  for (int i = 1; i < model.njoints; ++i) {
    placeJoint(model, data, i, q);
    const JointModel& jm = model.joints[i];
    const int p = model.parents[i];
    if (jm.nv == 1) {
      data.vJ[i] = Vec6(data.S.col(jm.idx_v)) * v[jm.idx_v];
    } else {
      Eigen::Map<const VecX> qd(v + jm.idx_v, jm.nv);
      data.vJ[i].noalias() = data.S.middleCols(jm.idx_v, jm.nv) * qd;
    }
    data.v[i] = (p == 0) ? data.vJ[i] : Vec6(data.liMi[i].actInv(data.v[p]) + data.vJ[i]);
    data.c[i] = crossMotion(data.v[i], data.vJ[i]);
    if (jm.variableSubspace()) data.c[i] += jointBias(jm, q + jm.idx_q, v + jm.idx_v);
  }
}

void forwardKinematics(const Model& model, Data& data, const double* q, const double* v, const double* a) {
  forwardKinematics(model, data, q, v);
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& jm = model.joints[i];
    const int p = model.parents[i];
    data.a[i] = data.c[i];
    if (jm.nv == 1) {
      data.a[i] += Vec6(data.S.col(jm.idx_v)) * a[jm.idx_v];
    } else {
      Eigen::Map<const VecX> qdd(a + jm.idx_v, jm.nv);
      data.a[i].noalias() += data.S.middleCols(jm.idx_v, jm.nv) * qdd;
    }
    if (p != 0) data.a[i] += data.liMi[i].actInv(data.a[p]);
  }
}

void externalWrenchesFromFrames(const Model& model, Data& data, const double* w) {
  for (int i = 0; i < model.njoints; ++i) data.fext[i].setZero();
  for (std::size_t k = 0; k < model.frames.size(); ++k) {
    const Frame& fr = model.frames[k];
    if (fr.joint == 0) continue;  // welded to the world: the world absorbs the wrench
    Eigen::Map<const Vec6> wk(w + 6 * k);
    // wrench at the frame origin in world axes -> frame axes -> joint frame
    const Mat3 Rf = data.oMi[fr.joint].R * fr.placement.R;
    Vec6 local;
    local.head<3>() = Rf.transpose() * wk.head<3>();
    local.tail<3>() = Rf.transpose() * wk.tail<3>();
    data.fext[fr.joint] += fr.placement.actForce(local);
  }
}

}  // namespace rigidiff
