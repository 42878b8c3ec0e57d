// Free and ball joints in a barrier world's step (world/barrier_floating_base.hpp).
#include "rigidiff/world/barrier_floating_base.hpp"

#include "rigidiff/algorithm/configuration.hpp"
#include "rigidiff/spatial/explog.hpp"

namespace rigidiff {

namespace {

bool rotationGroup(const JointModel& j) { return j.type == JointType::Free || j.type == JointType::Ball; }

}  // namespace

bool hasRotationGroupJoints(const Model& model) {
  for (int i = 1; i < model.njoints; ++i)
    if (rotationGroup(model.joints[i])) return true;
  return false;
}

void stepDisplacement(const Model& model, const double* q_n, const double* q, double* dq) {
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& j = model.joints[i];
    const double *a = q_n + j.idx_q, *b = q + j.idx_q;
    double* d = dq + j.idx_v;
    if (j.type == JointType::Free) {
      const Mat3 Rn = quaternionToMatrix(a + 3);
      Eigen::Map<Vec3> lin(d), ang(d + 3);
      lin = Rn.transpose() * (Vec3(b[0], b[1], b[2]) - Vec3(a[0], a[1], a[2]));
      ang = log3(Rn.transpose() * quaternionToMatrix(b + 3));
    } else if (j.type == JointType::Ball) {
      Eigen::Map<Vec3> ang(d);
      ang = log3(quaternionToMatrix(a).transpose() * quaternionToMatrix(b));
    } else {
      for (int k = 0; k < j.nv; ++k) d[k] = b[k] - a[k];
    }
  }
}

void displacementJacobian(const Model& model, const double* dq, MatX& Jd) {
  Jd.setIdentity(model.nv, model.nv);
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& j = model.joints[i];
    if (!rotationGroup(j)) continue;
    const int o = j.idx_v, a = o + j.nv - 3;  // a: the angular part
    const Vec3 w(dq[a], dq[a + 1], dq[a + 2]);
    if (j.type == JointType::Free) Jd.block<3, 3>(o, o) = exp3(w);
    Jd.block<3, 3>(a, a) = Jr3inv(w);
  }
}

void moveState(const Model& model, int rest, const double* q, const double* dq, double alpha, double* out) {
  VecX step = alpha * Eigen::Map<const VecX>(dq, model.nv);
  if (model.nq > 0) integrate(model, q, step.data(), out, Motion::Step);
  for (int i = 0; i < rest; ++i) out[model.nq + i] = q[model.nq + i] + alpha * dq[model.nv + i];
}

}  // namespace rigidiff
