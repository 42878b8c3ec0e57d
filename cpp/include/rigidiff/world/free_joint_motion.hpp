// How a free joint moves in a time step (docs/conventions.md): on R^3 x SO(3). Its velocity coordinates
// are (u, w), the linear velocity of the child frame's origin and the angular velocity, both in the child
// frame. A step
//   1. advances the origin's velocity in the frame the step starts from: u~ = u' + dt w x u, where
//      u' = u + dt du/dt is the semi-implicit update of the child-frame coordinates (du/dt, from ABA,
//      holds -w x u: the frame turning under a velocity fixed in space). The constraint rows act on this
//      velocity v~ (J(q) v~ is the velocity of the contact points during the step);
//   2. moves q with v~: p' = p + dt R u~, R' = R E, E = exp3(dt w~) (Motion::Step of integrate);
//   3. re-expresses the linear velocity in the new frame: u_out = E^T u~, so that R' u_out = R u~.
// A rolling ball's centre then moves along the ground (the SE(3) exponential of a constant twist would
// swing it down on the screw about the contact point), and a free body's velocity in space is kept.
// Joints other than free joints are untouched: these functions cost a pass over the joints.
#pragma once

#include "rigidiff/multibody/model.hpp"

namespace rigidiff {

/// True when the model has a free joint (the only joints these functions change).
bool hasFreeJoints(const Model& model);

/// Step 1's shift: v_step += dt (w x u, 0) on each free joint, (u, w) from the start velocity v.
void addFrameTurnVelocity(const Model& model, const double* v, double dt, double* v_step);

/// a -= (w x u, 0) on each free joint: the shift divided by dt, taken back from (v_step - v) / dt to leave
/// the acceleration that the step's impulses and forces produced.
void subtractFrameTurnAcceleration(const Model& model, const double* v, double* a);

/// S = d shift / dv (its blocks on free joints: [[dt [w]x, -dt [u]x], [0, 0]]): D += S.
void addFrameTurnJacobian(const Model& model, const double* v, double dt, Eigen::Ref<MatX> D);
/// Rows (m x nv) times S: out -= rows S (the shift's part of a constraint row's velocity).
void subtractRowsTimesFrameTurnJacobian(const Model& model, const double* v, double dt, const MatX& rows,
                                        Eigen::Ref<MatX> out);
/// g_v += S^T g (dims nv): the shift's part of a velocity cotangent.
void addFrameTurnTranspose(const Model& model, const double* v, double dt, const double* g, double* g_v);

/// Step 3: v_out = v_step with each free joint's u replaced by E^T u~ (v_out may alias v_step).
void reexpressFreeVelocities(const Model& model, double dt, const double* v_step, double* v_out);
/// Rows of a derivative of v_step turned into rows of the derivative of v_out (step 3's Jacobian T on the
/// left, in place; D has nv rows): D_u <- E^T D_u + dt [u_out]x Jr3(dt w) D_w.
template <typename Derived>
void reexpressVelocityRows(const Model& model, double dt, const double* v_step, const Eigen::MatrixBase<Derived>& D);
/// g_step = T^T g_out (dims nv; may alias): a cotangent of v_out as one of v_step.
void reexpressCotangent(const Model& model, double dt, const double* v_step, const double* g_out, double* g_step);

/// The (3 x 3) blocks of step 3 at a free joint's part x of v_step: E^T and dt [u_out]x Jr3(dt w).
void freeJointReexpression(const double* x, double dt, Mat3& Et, Mat3& Bw);

template <typename Derived>
void reexpressVelocityRows(const Model& model, double dt, const double* v_step, const Eigen::MatrixBase<Derived>& D_) {
  Eigen::MatrixBase<Derived>& D = const_cast<Eigen::MatrixBase<Derived>&>(D_);
  Mat3 Et, Bw;
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& j = model.joints[i];
    if (j.type != JointType::Free) continue;
    freeJointReexpression(v_step + j.idx_v, dt, Et, Bw);
    for (Eigen::Index c = 0; c < D.cols(); ++c) {  // column by column: no temporary on the heap
      const Vec3 du = D.template block<3, 1>(j.idx_v, c), dw = D.template block<3, 1>(j.idx_v + 3, c);
      D.template block<3, 1>(j.idx_v, c) = Et * du + Bw * dw;
    }
  }
}

}  // namespace rigidiff
