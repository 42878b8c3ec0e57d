// Rigid transforms acting on spatial motion and force vectors, (linear, angular) ordering.
#pragma once

#include "rigidiff/fwd.hpp"

namespace rigidiff {

/// a x b for 3-vectors (or segments of longer ones), written out: the compiler does not inline Eigen's
/// cross() of vector segments in the algorithms' inner loops. Same operations, same results.
template <typename A, typename B>
inline Vec3 cross3(const A& a, const B& b) {
  return Vec3(a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]);
}

/// A placement aMb: rotation R and translation p such that x_a = R x_b + p.
/// act() maps vectors expressed in frame b to frame a; actInv() maps from a to b.
struct SE3 {
  Mat3 R = Mat3::Identity();
  Vec3 p = Vec3::Zero();

  SE3() = default;
  SE3(const Mat3& rotation, const Vec3& translation) : R(rotation), p(translation) {}
  static SE3 Identity() { return SE3(); }

  SE3 operator*(const SE3& other) const { return SE3(R * other.R, R * other.p + p); }
  SE3 inverse() const { return SE3(R.transpose(), -(R.transpose() * p)); }
  /// this^-1 * other, without forming the inverse.
  SE3 actInv(const SE3& other) const { return SE3(R.transpose() * other.R, R.transpose() * (other.p - p)); }

  Vec3 actPoint(const Vec3& x) const { return R * x + p; }

  /// Motion (v, w) in b -> in a.
  Vec6 act(const Vec6& m) const {
    Vec6 out;
    out.tail<3>().noalias() = R * m.tail<3>();
    out.head<3>().noalias() = R * m.head<3>();
    out.head<3>() += cross3(p, out.tail<3>());
    return out;
  }
  /// Motion (v, w) in a -> in b.
  Vec6 actInv(const Vec6& m) const {
    Vec6 out;
    out.tail<3>().noalias() = R.transpose() * m.tail<3>();
    out.head<3>().noalias() = R.transpose() * (m.head<3>() - cross3(p, m.tail<3>()));
    return out;
  }
  /// Force (f, n) in b -> in a.
  Vec6 actForce(const Vec6& f) const {
    Vec6 out;
    out.head<3>().noalias() = R * f.head<3>();
    out.tail<3>().noalias() = R * f.tail<3>();
    out.tail<3>() += cross3(p, out.head<3>());
    return out;
  }
  /// Force (f, n) in a -> in b.
  Vec6 actInvForce(const Vec6& f) const {
    Vec6 out;
    out.head<3>().noalias() = R.transpose() * f.head<3>();
    out.tail<3>().noalias() = R.transpose() * (f.tail<3>() - cross3(p, f.head<3>()));
    return out;
  }

  /// Columns of motions (6 x k) in b -> in a.
  template <typename In, typename Out>
  void actCols(const Eigen::MatrixBase<In>& m, const Eigen::MatrixBase<Out>& out_) const {
    auto& out = const_cast<Eigen::MatrixBase<Out>&>(out_);
    for (Eigen::Index k = 0; k < m.cols(); ++k) {
      Vec3 w = R * m.col(k).template tail<3>();
      out.col(k).template head<3>() = R * m.col(k).template head<3>() + cross3(p, w);
      out.col(k).template tail<3>() = w;
    }
  }
  /// Columns of forces (6 x k) in b -> in a.
  template <typename In, typename Out>
  void actForceCols(const Eigen::MatrixBase<In>& f, const Eigen::MatrixBase<Out>& out_) const {
    auto& out = const_cast<Eigen::MatrixBase<Out>&>(out_);
    for (Eigen::Index k = 0; k < f.cols(); ++k) {
      Vec3 lin = R * f.col(k).template head<3>();
      out.col(k).template tail<3>() = R * f.col(k).template tail<3>() + cross3(p, lin);
      out.col(k).template head<3>() = lin;
    }
  }

  /// 6x6 matrix of act() on motions.
  Mat6 actionMatrix() const {
    Mat6 X;
    X.topLeftCorner<3, 3>() = R;
    X.topRightCorner<3, 3>() = skew(p) * R;
    X.bottomLeftCorner<3, 3>().setZero();
    X.bottomRightCorner<3, 3>() = R;
    return X;
  }
};

/// Spatial cross product on motions: m1 x m2.
inline Vec6 crossMotion(const Vec6& m1, const Vec6& m2) {
  Vec6 out;
  out.head<3>() = cross3(m1.tail<3>(), m2.head<3>()) + cross3(m1.head<3>(), m2.tail<3>());
  out.tail<3>() = cross3(m1.tail<3>(), m2.tail<3>());
  return out;
}

/// Spatial cross product of a motion with a force: m x* f.
inline Vec6 crossForce(const Vec6& m, const Vec6& f) {
  Vec6 out;
  out.head<3>() = cross3(m.tail<3>(), f.head<3>());
  out.tail<3>() = cross3(m.tail<3>(), f.tail<3>()) + cross3(m.head<3>(), f.head<3>());
  return out;
}

/// Articulated (6x6) inertia of frame b re-expressed in frame a: X* Ia X^-1, computed block-wise.
inline void addTransformedInertia(const SE3& aMb, const Mat6& Ib, Mat6& Ia_out) {
  const Mat3& R = aMb.R;
  Mat3 A = R * Ib.topLeftCorner<3, 3>() * R.transpose();
  Mat3 B = R * Ib.topRightCorner<3, 3>() * R.transpose();
  Mat3 D = R * Ib.bottomRightCorner<3, 3>() * R.transpose();
  const Mat3 P = skew(aMb.p);
  Mat3 Bn = B - A * P;
  Mat3 Cn = Bn.transpose();
  Ia_out.topLeftCorner<3, 3>() += A;
  Ia_out.topRightCorner<3, 3>() += Bn;
  Ia_out.bottomLeftCorner<3, 3>() += Cn;
  Ia_out.bottomRightCorner<3, 3>() += D + P * B - Cn * P;
}

}  // namespace rigidiff
