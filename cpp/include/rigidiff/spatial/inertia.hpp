// Rigid-body spatial inertia: mass, centre of mass and rotational inertia about the centre of mass.
#pragma once

#include "rigidiff/spatial/se3.hpp"

namespace rigidiff {

/// Inertia of a rigid body expressed in some frame f: mass m, centre of mass c (in f) and the
/// rotational inertia Ic about c (in f's axes).
struct Inertia {
  double mass = 0.0;
  Vec3 com = Vec3::Zero();
  Mat3 Ic = Mat3::Zero();

  Inertia() = default;
  Inertia(double m, const Vec3& c, const Mat3& I) : mass(m), com(c), Ic(I) {}
  static Inertia Zero() { return Inertia(); }

  /// Momentum (f, n) of the motion (v, w) at the frame origin.
  Vec6 operator*(const Vec6& m) const {
    Vec6 h;
    h.head<3>() = mass * (m.head<3>() - cross3(com, m.tail<3>()));
    h.tail<3>() = Ic * m.tail<3>() + cross3(com, h.head<3>());
    return h;
  }

  /// 6x6 matrix form.
  Mat6 matrix() const {
    Mat6 M;
    const Mat3 C = mass * skew(com);
    M.topLeftCorner<3, 3>() = mass * Mat3::Identity();
    M.topRightCorner<3, 3>() = -C;
    M.bottomLeftCorner<3, 3>() = C;
    // Ic - m [c]x [c]x = Ic + m (|c|^2 I - c c^T)
    M.bottomRightCorner<3, 3>() = Ic - mass * com * com.transpose();
    M.bottomRightCorner<3, 3>().diagonal().array() += mass * com.squaredNorm();
    return M;
  }

  /// The same inertia expressed in frame a, given aMf.
  Inertia transformed(const SE3& aMf) const { return Inertia(mass, aMf.actPoint(com), aMf.R * Ic * aMf.R.transpose()); }

  /// Sum of two inertias expressed in the same frame.
  Inertia& operator+=(const Inertia& o) {
    const double m = mass + o.mass;
    if (m <= 0.0) {  // massless parts: only rotational inertia, the same about every point
      Ic += o.Ic;
      mass = 0.0;
      return *this;
    }
    const Vec3 c = (mass * com + o.mass * o.com) / m;
    const Mat3 d1 = skew(com - c), d2 = skew(o.com - c);
    Ic = Ic - mass * d1 * d1 + o.Ic - o.mass * d2 * d2;
    com = c;
    mass = m;
    return *this;
  }

  /// Kinetic energy 0.5 m^T I m of the motion m.
  double kineticEnergy(const Vec6& m) const { return 0.5 * m.dot((*this) * m); }
};

/// A rigid-body inertia expressed at the world origin in 10 parameters: mass m, first moment h = m c
/// and rotational inertia I about the origin (world axes). Sums of bodies are sums of the parameters,
/// which makes it the cheap form for composite inertias in world-frame algorithms.
struct OriginInertia {
  double m = 0.0;
  Vec3 h = Vec3::Zero();
  Mat3 I = Mat3::Zero();

  OriginInertia() = default;
  /// The body inertia (in its joint frame i) placed by oMi.
  OriginInertia(const Inertia& body, const SE3& oMi) {
    const Vec3 c = oMi.actPoint(body.com);
    m = body.mass;
    h = m * c;
    I.noalias() = oMi.R * body.Ic * oMi.R.transpose();
    I.noalias() -= h * c.transpose();  // + m (|c|^2 1 - c c^T)
    I.diagonal().array() += h.dot(c);
  }
  OriginInertia& operator+=(const OriginInertia& o) {
    m += o.m;
    h += o.h;
    I += o.I;
    return *this;
  }
  /// Momentum (f, n) of the motion (v, w) at the origin.
  Vec6 operator*(const Vec6& x) const {
    Vec6 out;
    const Vec3 v = x.head<3>(), w = x.tail<3>();
    out.head<3>() = m * v - cross3(h, w);
    out.tail<3>() = I * w + cross3(h, v);
    return out;
  }
  /// 6x6 matrix form [[m 1, -[h]x], [[h]x, I]].
  Mat6 matrix() const {
    Mat6 M;
    writeMatrix(M);
    return M;
  }
  /// The 6x6 matrix form written into M (entry by entry: the hot loops of the world-frame algorithms
  /// fill one per body, and a returned Mat6 would be built and then copied).
  void writeMatrix(Mat6& M) const {
    // column-major: column k holds rows 0-5
    M(0, 0) = m, M(1, 0) = 0.0, M(2, 0) = 0.0, M(3, 0) = 0.0, M(4, 0) = h.z(), M(5, 0) = -h.y();
    M(0, 1) = 0.0, M(1, 1) = m, M(2, 1) = 0.0, M(3, 1) = -h.z(), M(4, 1) = 0.0, M(5, 1) = h.x();
    M(0, 2) = 0.0, M(1, 2) = 0.0, M(2, 2) = m, M(3, 2) = h.y(), M(4, 2) = -h.x(), M(5, 2) = 0.0;
    M(0, 3) = 0.0, M(1, 3) = -h.z(), M(2, 3) = h.y();  // the top right block is the bottom left one's transpose
    M(0, 4) = h.z(), M(1, 4) = 0.0, M(2, 4) = -h.x();
    M(0, 5) = -h.y(), M(1, 5) = h.x(), M(2, 5) = 0.0;
    M.bottomRightCorner<3, 3>() = I;
  }
  /// Rate of the 6x6 inertia of a body moving with the spatial velocity x = (u, w):
  /// [x x*] Y - Y [x x] = [[0, -[a]x], [[a]x, [w]x I - I [w]x - (u h^T + h u^T) + 2 (u.h) 1]], a = m u + w x h.
  Mat6 rate(const Vec6& x) const {
    const Vec3 u = x.head<3>(), w = x.tail<3>();
    const Mat3 A = skew(m * u + cross3(w, h));
    const Mat3 W = skew(w);
    Mat6 B;
    B.topLeftCorner<3, 3>().setZero();
    B.topRightCorner<3, 3>() = -A;
    B.bottomLeftCorner<3, 3>() = A;
    Mat3 D = W * I;
    D -= I * W;
    D.noalias() -= u * h.transpose() + h * u.transpose();
    D.diagonal().array() += 2.0 * u.dot(h);
    B.bottomRightCorner<3, 3>() = D;
    return B;
  }
};

}  // namespace rigidiff
