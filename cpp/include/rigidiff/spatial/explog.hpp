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

/// Right Jacobian of exp3 at w (3 x 3): exp3(w + d) = exp3(w) exp3(Jr3(w) d + O(d^2)).
/// Jr3(w) = I - (1 - cos t)/t^2 [w]x + (t - sin t)/t^3 [w]x^2, t = |w|; Taylor for small t.
Mat3 Jr3(const Vec3& w);
/// Inverse of Jr3(w) (3 x 3): log3(exp3(w) exp3(d)) = w + Jr3inv(w) d + O(d^2).
/// Finite for |w| < 2 pi (so on the whole range [0, pi] of log3); Taylor for small |w|.
Mat3 Jr3inv(const Vec3& w);
/// Right Jacobian of exp6 at the twist (v, w) (6 x 6, (linear, angular) ordering):
/// exp6(x + d) = exp6(x) exp6(Jr6(x) d + O(d^2)). Jr6 = [[Jr3(w), Q], [0, Jr3(w)]] with Q the
/// translation-rotation coupling block (Barfoot's Q(-v, -w)).
Mat6 Jr6(const Vec6& twist);
/// Inverse of Jr6 (6 x 6): log6(exp6(x) exp6(d)) = x + Jr6inv(x) d + O(d^2). Finite for |w| < 2 pi.
Mat6 Jr6inv(const Vec6& twist);

}  // namespace rigidiff
