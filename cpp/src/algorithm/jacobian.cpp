#include "rigidiff/algorithm/jacobian.hpp"

#include "rigidiff/algorithm/kinematics.hpp"

namespace rigidiff {

void computeJointJacobians(const Model& model, Data& data, const double* q) {
  forwardKinematics(model, data, q);
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& jm = model.joints[i];
    data.oMi[i].actCols(data.S.middleCols(jm.idx_v, jm.nv), data.J.middleCols(jm.idx_v, jm.nv));
  }
}

void computeJointJacobiansTimeVariation(const Model& model, Data& data, const double* q, const double* v) {
  forwardKinematics(model, data, q, v);
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& jm = model.joints[i];
    auto J = data.J.middleCols(jm.idx_v, jm.nv);
    auto dJ = data.dJ.middleCols(jm.idx_v, jm.nv);
    data.oMi[i].actCols(data.S.middleCols(jm.idx_v, jm.nv), J);
    const Vec6 ov = data.oMi[i].act(data.v[i]);
    for (int k = 0; k < jm.nv; ++k) dJ.col(k) = crossMotion(ov, Vec6(J.col(k)));
    if (jm.type == JointType::Universal) {
      // the first column rotates with the second angle: d/dt (R2^T a1) = (R2^T a1) x a2 qdot2
      Vec6 dS = Vec6::Zero();
      dS.tail<3>() = Vec3(data.S.col(jm.idx_v).tail<3>()).cross(jm.axis2) * v[jm.idx_v + 1];
      dJ.col(0) += data.oMi[i].act(dS);
    }
  }
}

namespace {
// column of a world spatial motion m turned into the frame's reference at point p with rotation R
inline Vec6 toFrame(const Vec6& m, const Vec3& p, const Mat3& R, ReferenceFrame rf) {
  Vec6 out;
  out.head<3>() = m.head<3>() + m.tail<3>().cross(p);
  out.tail<3>() = m.tail<3>();
  if (rf == ReferenceFrame::Local) {
    out.head<3>() = R.transpose() * Vec3(out.head<3>());
    out.tail<3>() = R.transpose() * Vec3(out.tail<3>());
  }
  return out;
}
}  // namespace

void frameJacobian(const Model& model, const Data& data, int f, ReferenceFrame rf, double* out) {
  Eigen::Map<Mat6X> Jf(out, 6, model.nv);
  Jf.setZero();
  const SE3 oMf = framePlacement(model, data, f);
  for (int a = model.frames[f].joint; a != 0; a = model.parents[a]) {
    const JointModel& jm = model.joints[a];
    for (int k = jm.idx_v; k < jm.idx_v + jm.nv; ++k) Jf.col(k) = toFrame(data.J.col(k), oMf.p, oMf.R, rf);
  }
}

void frameJacobianTimeVariation(const Model& model, const Data& data, int f, ReferenceFrame rf, double* out) {
  Eigen::Map<Mat6X> dJf(out, 6, model.nv);
  dJf.setZero();
  const int jf = model.frames[f].joint;
  if (jf == 0) return;
  const SE3 oMf = framePlacement(model, data, f);
  const Vec3& p = oMf.p;
  const Vec6 ov = data.oMi[jf].act(data.v[jf]);  // the body's spatial velocity in the world
  const Vec3 w = ov.tail<3>();
  const Vec3 pdot = ov.head<3>() + w.cross(p);  // velocity of the frame origin
  for (int a = jf; a != 0; a = model.parents[a]) {
    const JointModel& jm = model.joints[a];
    for (int k = jm.idx_v; k < jm.idx_v + jm.nv; ++k) {
      const Vec3 Jw = data.J.col(k).tail<3>();
      const Vec3 dJw = data.dJ.col(k).tail<3>();
      // d/dt (v + w x p) = dv + dw x p + w x pdot
      Vec3 lin = data.dJ.col(k).head<3>() + dJw.cross(p) + Jw.cross(pdot);
      Vec3 ang = dJw;
      if (rf == ReferenceFrame::Local) {
        // d/dt (R^T x) = R^T (dx - w x x)
        const Vec3 Jlin = data.J.col(k).head<3>() + Jw.cross(p);
        lin = oMf.R.transpose() * (lin - w.cross(Jlin));
        ang = oMf.R.transpose() * (ang - w.cross(Jw));
      }
      dJf.col(k).head<3>() = lin;
      dJf.col(k).tail<3>() = ang;
    }
  }
}

}  // namespace rigidiff
