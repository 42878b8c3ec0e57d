#include "rigidiff/spatial/explog.hpp"

#include <cmath>

namespace rigidiff {

Mat3 quaternionToMatrix(const double* q) {
  const double n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  const double x = q[0] / n, y = q[1] / n, z = q[2] / n, w = q[3] / n;
  Mat3 R;
  R << 1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),  //
      2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),   //
      2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y);
  return R;
}

Vec4 matrixToQuaternion(const Mat3& R) {
  Vec4 q;
  const double tr = R.trace();
  // pivot on the largest of (w, x, y, z) for accuracy
  if (tr > 0.0) {
    const double s = 2.0 * std::sqrt(1.0 + tr);
    q << (R(2, 1) - R(1, 2)) / s, (R(0, 2) - R(2, 0)) / s, (R(1, 0) - R(0, 1)) / s, 0.25 * s;
  } else if (R(0, 0) > R(1, 1) && R(0, 0) > R(2, 2)) {
    const double s = 2.0 * std::sqrt(1.0 + R(0, 0) - R(1, 1) - R(2, 2));
    q << 0.25 * s, (R(0, 1) + R(1, 0)) / s, (R(0, 2) + R(2, 0)) / s, (R(2, 1) - R(1, 2)) / s;
  } else if (R(1, 1) > R(2, 2)) {
    const double s = 2.0 * std::sqrt(1.0 + R(1, 1) - R(0, 0) - R(2, 2));
    q << (R(0, 1) + R(1, 0)) / s, 0.25 * s, (R(1, 2) + R(2, 1)) / s, (R(0, 2) - R(2, 0)) / s;
  } else {
    const double s = 2.0 * std::sqrt(1.0 + R(2, 2) - R(0, 0) - R(1, 1));
    q << (R(0, 2) + R(2, 0)) / s, (R(1, 2) + R(2, 1)) / s, 0.25 * s, (R(1, 0) - R(0, 1)) / s;
  }
  q.normalize();
  if (q[3] < 0.0) q = -q;
  return q;
}

Mat3 axisAngle(const Vec3& a, double angle) {
  // Rodrigues: c I + s [a]x + (1 - c) a a^T
  const double c = std::cos(angle), s = std::sin(angle), t = 1.0 - c;
  Mat3 R;
  R << c + t * a.x() * a.x(), t * a.x() * a.y() - s * a.z(), t * a.x() * a.z() + s * a.y(),  //
      t * a.x() * a.y() + s * a.z(), c + t * a.y() * a.y(), t * a.y() * a.z() - s * a.x(),   //
      t * a.x() * a.z() - s * a.y(), t * a.y() * a.z() + s * a.x(), c + t * a.z() * a.z();
  return R;
}

Mat3 exp3(const Vec3& w) {
  const double t2 = w.squaredNorm();
  const double t = std::sqrt(t2);
  double a, b;  // R = I + a [w] + b [w]^2
  if (t < 1e-4) {
    a = 1.0 - t2 / 6.0 + t2 * t2 / 120.0;
    b = 0.5 - t2 / 24.0 + t2 * t2 / 720.0;
  } else {
    a = std::sin(t) / t;
    b = (1.0 - std::cos(t)) / t2;
  }
  const Mat3 K = skew(w);
  return Mat3::Identity() + a * K + b * K * K;
}

Vec3 log3(const Mat3& R) {
  // through the quaternion: robust at small angles and near pi
  const Vec4 q = matrixToQuaternion(R);
  const Vec3 xyz = q.head<3>();
  const double s = xyz.norm();
  const double w = q[3];
  if (s < 1e-8) return xyz * (2.0 / w);  // angle/sin(angle/2) -> 2/w
  const double angle = 2.0 * std::atan2(s, w);
  return xyz * (angle / s);
}

SE3 exp6(const Vec6& twist) {
  const Vec3 v = twist.head<3>(), w = twist.tail<3>();
  const double t2 = w.squaredNorm();
  const double t = std::sqrt(t2);
  double a, b, c;  // R = I + a K + b K^2; V = I + b K + c K^2
  if (t < 1e-4) {
    a = 1.0 - t2 / 6.0 + t2 * t2 / 120.0;
    b = 0.5 - t2 / 24.0 + t2 * t2 / 720.0;
    c = 1.0 / 6.0 - t2 / 120.0 + t2 * t2 / 5040.0;
  } else {
    a = std::sin(t) / t;
    b = (1.0 - std::cos(t)) / t2;
    c = (t - std::sin(t)) / (t2 * t);
  }
  const Mat3 K = skew(w);
  const Mat3 K2 = K * K;
  return SE3(Mat3::Identity() + a * K + b * K2, (Mat3::Identity() + b * K + c * K2) * v);
}

Vec6 log6(const SE3& M) {
  const Vec3 w = log3(M.R);
  const double t2 = w.squaredNorm();
  const double t = std::sqrt(t2);
  double d;  // V^-1 = I - 0.5 K + d K^2
  if (t < 1e-4) {
    d = 1.0 / 12.0 + t2 / 720.0 + t2 * t2 / 30240.0;
  } else {
    d = (1.0 - t * std::sin(t) / (2.0 * (1.0 - std::cos(t)))) / t2;
  }
  const Mat3 K = skew(w);
  Vec6 out;
  out.head<3>() = (Mat3::Identity() - 0.5 * K + d * K * K) * M.p;
  out.tail<3>() = w;
  return out;
}

}  // namespace rigidiff
