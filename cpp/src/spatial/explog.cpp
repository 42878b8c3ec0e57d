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

// below this angle exp3 sums its series (see there)
constexpr double kExpTaylor = 1e-2;

Mat3 exp3(const Vec3& w) {
  const double t2 = w.squaredNorm();
  const double t = std::sqrt(t2);
  double a, b;  // R = I + a [w] + b [w]^2
  if (t < kExpTaylor) {
    // series through t^8: the first term left out is below 3e-28 of the sum, so this is exact in double
    // precision, and a time step's rotation (dt |w| < 1e-2) costs no sine
    a = 1.0 - t2 / 6.0 * (1.0 - t2 / 20.0 * (1.0 - t2 / 42.0 * (1.0 - t2 / 72.0)));
    b = 0.5 * (1.0 - t2 / 12.0 * (1.0 - t2 / 30.0 * (1.0 - t2 / 56.0 * (1.0 - t2 / 90.0))));
  } else {
    a = std::sin(t) / t;
    b = 2.0 * std::sin(0.5 * t) * std::sin(0.5 * t) / t2;  // 1 - cos t, without cancellation
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
    b = 2.0 * std::sin(0.5 * t) * std::sin(0.5 * t) / t2;  // 1 - cos t, without cancellation
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
    d = (1.0 - 0.5 * t * std::cos(0.5 * t) / std::sin(0.5 * t)) / t2;  // t sin t / (2 (1 - cos t)) = (t/2) cot(t/2)
  }
  const Mat3 K = skew(w);
  Vec6 out;
  out.head<3>() = (Mat3::Identity() - 0.5 * K + d * K * K) * M.p;
  out.tail<3>() = w;
  return out;
}

namespace {

// below this rotation angle the Jacobian coefficients use their Taylor series (the closed forms
// lose ~eps/t^4 to cancellation, the truncated series less than 1e-16 here)
constexpr double kJacobianTaylor = 1e-2;

// Barfoot's coupling block Q(rho, phi) of the SE(3) left Jacobian (3 x 3), twist (rho, phi) in
// (linear, angular) order: Jl6 = [[Jl3, Q], [0, Jl3]].
Mat3 leftCoupling(const Vec3& rho, const Vec3& phi) {
  const double t2 = phi.squaredNorm();
  const double t = std::sqrt(t2);
  double c1, c2, c3;
  if (t < kJacobianTaylor) {
    c1 = 1.0 / 6.0 - t2 / 120.0 + t2 * t2 / 5040.0;
    c2 = 1.0 / 24.0 - t2 / 720.0 + t2 * t2 / 40320.0;
    c3 = 1.0 / 120.0 - t2 / 2520.0 + t2 * t2 / 120960.0;
  } else {
    const double s = std::sin(t), c = std::cos(t), sh = std::sin(0.5 * t);
    c1 = (t - s) / (t2 * t);
    c2 = (t2 - 4.0 * sh * sh) / (2.0 * t2 * t2);  // 2 cos t - 2 = -4 sin^2(t/2)
    c3 = (2.0 * t - 3.0 * s + t * c) / (2.0 * t2 * t2 * t);
  }
  const Mat3 P = skew(phi), X = skew(rho);
  const Mat3 PX = P * X, XP = X * P;
  const Mat3 PXP = PX * P;
  return 0.5 * X + c1 * (PX + XP + PXP) + c2 * (P * PX + XP * P - 3.0 * PXP) + c3 * (PXP * P + P * PXP);
}

}  // namespace

Mat3 Jr3(const Vec3& w) {
  const double t2 = w.squaredNorm();
  const double t = std::sqrt(t2);
  double b, c;  // Jr = I - b K + c K^2
  if (t < kJacobianTaylor) {
    b = 0.5 - t2 / 24.0 + t2 * t2 / 720.0;
    c = 1.0 / 6.0 - t2 / 120.0 + t2 * t2 / 5040.0;
  } else {
    const double sh = std::sin(0.5 * t);
    b = 2.0 * sh * sh / t2;  // 1 - cos t = 2 sin^2(t/2), without cancellation
    c = (t - std::sin(t)) / (t2 * t);
  }
  const Mat3 K = skew(w);
  return Mat3::Identity() - b * K + c * K * K;
}

Mat3 Jr3inv(const Vec3& w) {
  const double t2 = w.squaredNorm();
  const double t = std::sqrt(t2);
  double e;  // Jr^-1 = I + K/2 + e K^2, e = (1 - (t/2) cot(t/2)) / t^2
  if (t < kJacobianTaylor) {
    e = 1.0 / 12.0 + t2 / 720.0 + t2 * t2 / 30240.0;
  } else {
    e = (1.0 - 0.5 * t * std::cos(0.5 * t) / std::sin(0.5 * t)) / t2;
  }
  const Mat3 K = skew(w);
  return Mat3::Identity() + 0.5 * K + e * K * K;
}

Mat6 Jr6(const Vec6& twist) {
  const Vec3 w = twist.tail<3>();
  Mat6 J;
  J.topLeftCorner<3, 3>() = Jr3(w);
  J.bottomRightCorner<3, 3>() = J.topLeftCorner<3, 3>();
  J.bottomLeftCorner<3, 3>().setZero();
  J.topRightCorner<3, 3>() = leftCoupling(-twist.head<3>(), -w);  // Jr(x) = Jl(-x)
  return J;
}

Mat6 Jr6inv(const Vec6& twist) {
  const Vec3 w = twist.tail<3>();
  const Mat3 A = Jr3inv(w);
  Mat6 J;
  J.topLeftCorner<3, 3>() = A;
  J.bottomRightCorner<3, 3>() = A;
  J.bottomLeftCorner<3, 3>().setZero();
  J.topRightCorner<3, 3>() = -A * leftCoupling(-twist.head<3>(), -w) * A;
  return J;
}

}  // namespace rigidiff
