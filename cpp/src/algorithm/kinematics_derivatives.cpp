#include "rigidiff/algorithm/kinematics_derivatives.hpp"

#include "rigidiff/algorithm/center_of_mass.hpp"
#include "rigidiff/algorithm/kinematics.hpp"
#include "rigidiff/macros.hpp"

namespace rigidiff {

namespace {

// World-frame spatial velocities (and accelerations if a) of every joint into data.ov / data.oa_gf
// (gravity excluded), and the world subspaces into data.J.
void worldMotions(const Model& model, Data& data, const double* q, const double* v, const double* a) {
  if (a)
    forwardKinematics(model, data, q, v, a);
  else
    forwardKinematics(model, data, q, v);
  data.ov[0].setZero();
  data.oa_gf[0].setZero();
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& jm = model.joints[i];
    data.oMi[i].actCols(data.S.middleCols(jm.idx_v, jm.nv), data.J.middleCols(jm.idx_v, jm.nv));
    data.ov[i] = data.oMi[i].act(data.v[i]);
    if (a) data.oa_gf[i] = data.oMi[i].act(data.a[i]);
  }
}

// Converts a world-frame derivative column dm of a motion m (at the world origin) of frame placement
// oMf into rf; s is the perturbing subspace column (or nullptr for derivatives that do not move the frame).
Vec6 toFrame(const SE3& oMf, const Vec6& m, const Vec6& dm, const Vec6* s, ReferenceFrame rf) {
  if (rf == ReferenceFrame::Local) {
    // m_local = Ad(oMf)^-1 m, and oMf moves as exp(s d) oMf
    return s ? oMf.actInv(Vec6(dm - crossMotion(*s, m))) : oMf.actInv(dm);
  }
  // world axes at the frame origin p: (lin + ang x p, ang); p moves with the point velocity of s
  const Vec3& p = oMf.p;
  Vec6 out;
  out.head<3>() = dm.head<3>() + dm.tail<3>().cross(p);
  out.tail<3>() = dm.tail<3>();
  if (s) out.head<3>() += m.tail<3>().cross(s->head<3>() + s->tail<3>().cross(p));
  return out;
}

void checkFrameIndex(const Model& model, int f) {
  if (f < 0 || f >= static_cast<int>(model.frames.size()))
    RD_THROW(std::out_of_range, "frame index " << f << " out of range [0, " << model.frames.size() << ")");
}

// The formulas hold for joints whose motion subspace is constant in the child frame.
void checkChain(const Model& model, int j) {
  for (; j > 0; j = model.parents[j])
    RD_CHECK_ARG(!model.joints[j].variableSubspace(),
                 "kinematic derivatives do not support universal joints (joint " << model.names[j] << ")");
}

}  // namespace

void frameVelocityDerivatives(const Model& model, Data& data, const double* q, const double* v, int f,
                              ReferenceFrame rf, double* dv_dq, double* dv_dv) {
  checkFrameIndex(model, f);
  checkChain(model, model.frames[f].joint);
  worldMotions(model, data, q, v, nullptr);
  Eigen::Map<Mat6X> Dq(dv_dq, 6, model.nv), Dv(dv_dv, 6, model.nv);
  Dq.setZero();
  Dv.setZero();
  const int b = model.frames[f].joint;
  if (b == 0) return;
  const SE3 oMf = data.oMi[b] * model.frames[f].placement;
  const Vec6& ovb = data.ov[b];
  for (int j = b; j > 0; j = model.parents[j]) {
    const JointModel& jm = model.joints[j];
    const Vec6 rel = ovb - data.ov[model.parents[j]];
    for (int k = jm.idx_v; k < jm.idx_v + jm.nv; ++k) {
      const Vec6 s = data.J.col(k);
      Dq.col(k) = toFrame(oMf, ovb, crossMotion(s, rel), &s, rf);
      Dv.col(k) = toFrame(oMf, ovb, s, nullptr, rf);
    }
  }
}

void frameAccelerationDerivatives(const Model& model, Data& data, const double* q, const double* v, const double* a,
                                  int f, ReferenceFrame rf, double* da_dq, double* da_dv, double* da_da) {
  checkFrameIndex(model, f);
  checkChain(model, model.frames[f].joint);
  worldMotions(model, data, q, v, a);
  Eigen::Map<Mat6X> Dq(da_dq, 6, model.nv), Dv(da_dv, 6, model.nv), Da(da_da, 6, model.nv);
  Dq.setZero();
  Dv.setZero();
  Da.setZero();
  const int b = model.frames[f].joint;
  if (b == 0) return;
  const SE3 oMf = data.oMi[b] * model.frames[f].placement;
  const Vec6 &ovb = data.ov[b], &oab = data.oa_gf[b];
  for (int j = b; j > 0; j = model.parents[j]) {
    const JointModel& jm = model.joints[j];
    const int p = model.parents[j];
    const Vec6 vrel = ovb - data.ov[p], arel = oab - data.oa_gf[p];
    for (int k = jm.idx_v; k < jm.idx_v + jm.nv; ++k) {
      const Vec6 s = data.J.col(k);
      const Vec6 dq = crossMotion(s, arel) - crossMotion(crossMotion(s, data.ov[p]), vrel);
      // the frame's velocity also changes with q: the velocity term of a moving frame is taken care
      // of by toFrame through the acceleration itself (a transforms like a motion)
      Dq.col(k) = toFrame(oMf, oab, dq, &s, rf);
      Dv.col(k) = toFrame(oMf, oab, Vec6(crossMotion(data.ov[j], s) + crossMotion(s, vrel)), nullptr, rf);
      Da.col(k) = toFrame(oMf, oab, s, nullptr, rf);
    }
  }
}

void centerOfMassVelocityDerivatives(const Model& model, Data& data, const double* q, const double* v,
                                     double* dvcom_dq) {
  for (int j = 1; j < model.njoints; ++j) checkChain(model, j);
  worldMotions(model, data, q, v, nullptr);
  centerOfMass(model, data, q);  // per-subtree masses; the joints' own centres below
  Eigen::Map<Eigen::Matrix<double, 3, Eigen::Dynamic>> D(dvcom_dq, 3, model.nv);
  D.setZero();
  const double total = data.mass_sub[0];
  if (!(total > 0.0)) return;
  for (int j = 1; j < model.njoints; ++j) {
    const JointModel& jm = model.joints[j];
    const Vec6& ovl = data.ov[model.parents[j]];
    // the subtree of j: joints j .. j + (number of joints in it) - 1, contiguous in depth-first order
    for (int i = j; i < model.njoints && model.supports(j, i); ++i) {
      const Inertia& I = model.inertias[i];
      if (I.mass == 0.0) continue;
      const Vec3 c = data.oMi[i].actPoint(I.com);
      const Vec6 rel = data.ov[i] - ovl;
      for (int k = jm.idx_v; k < jm.idx_v + jm.nv; ++k) {
        const Vec6 s = data.J.col(k);
        const Vec6 dv = crossMotion(s, rel);
        const Vec3 dc = s.head<3>() + s.tail<3>().cross(c);
        D.col(k) += (I.mass / total) * (dv.head<3>() + dv.tail<3>().cross(c) + data.ov[i].tail<3>().cross(dc));
      }
    }
  }
}

}  // namespace rigidiff
