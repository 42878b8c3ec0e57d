#include "rigidiff/world/free_joint_motion.hpp"

#include <algorithm>

#include "rigidiff/spatial/explog.hpp"

namespace rigidiff {

namespace {
// f(o, u, w) for every free joint: o its first velocity index, (u, w) its part of v
template <typename F>
void forEachFreeJoint(const Model& model, const double* v, F&& f) {
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& j = model.joints[i];
    if (j.type != JointType::Free) continue;
    const int o = j.idx_v;
    f(o, Vec3(v[o], v[o + 1], v[o + 2]), Vec3(v[o + 3], v[o + 4], v[o + 5]));
  }
}
}  // namespace

bool hasFreeJoints(const Model& model) {
  for (int i = 1; i < model.njoints; ++i)
    if (model.joints[i].type == JointType::Free) return true;
  return false;
}

void addFrameTurnVelocity(const Model& model, const double* v, double dt, double* v_step) {
  forEachFreeJoint(model, v, [&](int o, const Vec3& u, const Vec3& w) {
    Eigen::Map<Vec3>(v_step + o) += dt * w.cross(u);
  });
}

void subtractFrameTurnAcceleration(const Model& model, const double* v, double* a) {
  forEachFreeJoint(model, v, [&](int o, const Vec3& u, const Vec3& w) { Eigen::Map<Vec3>(a + o) -= w.cross(u); });
}

void addFrameTurnJacobian(const Model& model, const double* v, double dt, Eigen::Ref<MatX> D) {
  forEachFreeJoint(model, v, [&](int o, const Vec3& u, const Vec3& w) {
    D.block<3, 3>(o, o) += dt * skew(w);
    D.block<3, 3>(o, o + 3) -= dt * skew(u);
  });
}

void subtractRowsTimesFrameTurnJacobian(const Model& model, const double* v, double dt, const MatX& rows,
                                        Eigen::Ref<MatX> out) {
  forEachFreeJoint(model, v, [&](int o, const Vec3& u, const Vec3& w) {
    out.middleCols<3>(o).noalias() -= rows.middleCols<3>(o) * (dt * skew(w));
    out.middleCols<3>(o + 3).noalias() += rows.middleCols<3>(o) * (dt * skew(u));
  });
}

void addFrameTurnTranspose(const Model& model, const double* v, double dt, const double* g, double* g_v) {
  forEachFreeJoint(model, v, [&](int o, const Vec3& u, const Vec3& w) {
    // S^T: [dt [w]x]^T gu = dt gu x w on u, [-dt [u]x]^T gu = dt u x gu on w
    const Vec3 gu(g[o], g[o + 1], g[o + 2]);
    Eigen::Map<Vec3>(g_v + o) += dt * gu.cross(w);
    Eigen::Map<Vec3>(g_v + o + 3) += dt * u.cross(gu);
  });
}

void freeJointReexpression(const double* x, double dt, Mat3& Et, Mat3& Bw) {
  const Vec3 u(x[0], x[1], x[2]), th = dt * Vec3(x[3], x[4], x[5]);
  Et = exp3(th).transpose();
  // d(E(th)^T u)/d th = [E^T u]x Jr3(th), since E(th + d)^T = (I - [Jr3(th) d]x) E(th)^T to first order
  Bw = dt * skew(Et * u) * Jr3(th);
}

void reexpressFreeVelocities(const Model& model, double dt, const double* v_step, double* v_out) {
  if (v_out != v_step) std::copy(v_step, v_step + model.nv, v_out);
  forEachFreeJoint(model, v_step, [&](int o, const Vec3& u, const Vec3& w) {
    Eigen::Map<Vec3>(v_out + o) = exp3(dt * w).transpose() * u;
  });
}

void reexpressCotangent(const Model& model, double dt, const double* v_step, const double* g_out, double* g_step) {
  if (g_step != g_out) std::copy(g_out, g_out + model.nv, g_step);
  Mat3 Et, Bw;
  forEachFreeJoint(model, v_step, [&](int o, const Vec3&, const Vec3&) {
    freeJointReexpression(v_step + o, dt, Et, Bw);
    const Vec3 gu(g_out[o], g_out[o + 1], g_out[o + 2]);  // read before g_step (it may alias) is written
    Eigen::Map<Vec3>(g_step + o) = Et.transpose() * gu;
    Eigen::Map<Vec3>(g_step + o + 3) += Bw.transpose() * gu;
  });
}

}  // namespace rigidiff
