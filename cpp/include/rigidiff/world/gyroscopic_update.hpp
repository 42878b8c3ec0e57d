// The implicit gyroscopic update of one joint (World(gyroscopic="implicit"), world/free_joint_motion.hpp): the
// per-joint maps (a) and (b) and their derivatives. free_joint_motion.cpp applies them to every gyroscopic joint.
#pragma once

#include "rigidiff/multibody/model.hpp"

namespace rigidiff {

using Mat63 = Eigen::Matrix<double, 6, 3>;

/// The constants of a gyroscopic joint i: its velocity indices, Ig, and the angular columns of A^-1 (A the joint's
/// block of M + dt D + dt^2 K) and of B^-1 (B its block of M). Matrices hold n = nv rows.
struct GyroscopicJoint {
  int i = 0, o = 0, oa = 0, n = 0;  // joint, first velocity index, first angular index, nv
  const char* name = nullptr;        // the joint's, for errors (the model's string)
  Mat3 Ig = Mat3::Zero();
  Mat63 CA = Mat63::Zero(), CB = Mat63::Zero();
};
GyroscopicJoint gyroscopicJoint(const Model& model, int i, double dt);

/// (a)'s impulse r = dt w x Ig w - Ig (w - y) at the start rate w (the explicit gyroscopic impulse given back, the
/// implicit one taken) and, if dr, dr/dw.
Vec3 gyroscopicImpulse(const GyroscopicJoint& g, const Vec3& w, double dt, Mat3* dr);
/// (a) at the start rate w: the velocity shift CA r (n entries) and, if dS, its Jacobian CA dr/dw (n x 3).
Vec6 gyroscopicShift(const GyroscopicJoint& g, const Vec3& w, double dt, Mat63* dS);
/// (a)'s dr/dtheta_k for the 10 inertia parameters of the body (regressor.hpp's inertiaParameters).
void gyroscopicShiftInertiaDerivatives(const Model& model, const GyroscopicJoint& g, const Vec3& w, double dt,
                                       Vec3 dr[10]);

/// (b) at the joint's part x of v_step: z = x + CB s, s = (exp3(dt w~ / 2)^T - I) Ig w~ (the second half of the
/// gyroscopic impulse, through the joint's inertia), and if Z its Jacobian dz/dx (n x n).
Vec6 gyroscopicHalfImpulse(const GyroscopicJoint& g, const double* x, double dt, Mat6* Z);
/// The angular velocity w~ of x from z's angular part (Newton's method), and x = z - CB s.
Vec6 invertGyroscopicHalfImpulse(const GyroscopicJoint& g, const Vec6& z, double dt);
/// (b)'s dz/dtheta_k (inertia parameters) and dz/d armature_k (the joint's dofs) at x.
void gyroscopicHalfImpulseParameterDerivatives(const Model& model, const GyroscopicJoint& g, const double* x,
                                               double dt, Vec6 dz_theta[10], Vec6 dz_armature[6]);

}  // namespace rigidiff
