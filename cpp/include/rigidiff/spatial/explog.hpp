// Exponential and logarithm maps of SO(3), SE(3) and SE(2), and unit-quaternion helpers (x, y, z, w).
#pragma once

#include "rigidiff/spatial/se3.hpp"

namespace rigidiff {

/// Rotation matrix of the unit quaternion (x, y, z, w) stored at q[0..3] (normalised on the fly).
Mat3 quaternionToMatrix(const double* q);
/// Unit quaternion (x, y, z, w) of a rotation matrix, w >= 0.
Vec4 matrixToQuaternion(const Mat3& R);
/// exp of a rotation vector.
Mat3 exp3(const Vec3& w);
/// Rotation vector of R (angle in [0, pi]).
Vec3 log3(const Mat3& R);
/// exp of a twist (v, w) in (linear, angular) order.
SE3 exp6(const Vec6& twist);
/// Twist (v, w) whose exponential is M.
Vec6 log6(const SE3& M);
/// Rotation by angle about a unit axis.
Mat3 axisAngle(const Vec3& axis, double angle);

}  // namespace rigidiff
