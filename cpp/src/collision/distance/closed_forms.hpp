// The forms of forms.hpp differentiated by hand: the same gradients and Hessians over the difference vectors
// as their Jet evaluation (formJet, kept as the reference the tests compare with), without carrying a
// 3M-vector and a 3M x 3M matrix through every product of the expression.
//
// Each form is a product or quotient of three pieces whose derivatives are short:
//   |a|^2:                   gradient 2a, Hessian 2I
//   C = |a x b|^2:           gradient (2 b x c, 2 c x a) with c = a x b; Hessian blocks
//                            aa = 2(|b|^2 I - b b^T), bb = 2(|a|^2 I - a a^T), ab = 2(a b^T - (a.b) I - [c]x)
//   s = d2 . (d0 x d1):      gradient (d1 x d2, d2 x d0, d0 x d1); Hessian blocks 01 = -[d2]x, 02 = [d1]x,
//                            12 = -[d0]x (their transposes below the diagonal, zero diagonal blocks)
// and the quotient rule of jet.hpp combines them.
#pragma once

#include "jet.hpp"
#include "rigidiff/fwd.hpp"

namespace rigidiff {
namespace distance {

namespace closed {

/// |d[j]|^2 as a Jet over N variables (the difference vectors' 3-blocks).
template <int N, int Order>
Jet<N, Order> squaredLength(const Vec3& a, int j) {
  Jet<N, Order> r(a.squaredNorm());
  r.g.template segment<3>(3 * j) = 2.0 * a;
  if constexpr (Order == 2) r.h.template block<3, 3>(3 * j, 3 * j) = 2.0 * Mat3::Identity();
  return r;
}

/// |a x b|^2 with a = d[0], b = d[1] (the first six variables).
template <int N, int Order>
Jet<N, Order> crossSquared(const Vec3& a, const Vec3& b) {
  const Vec3 c = a.cross(b);
  Jet<N, Order> r(c.squaredNorm());
  r.g.template segment<3>(0) = 2.0 * b.cross(c);
  r.g.template segment<3>(3) = 2.0 * c.cross(a);
  if constexpr (Order == 2) {
    const Mat3 I = Mat3::Identity();
    r.h.template block<3, 3>(0, 0) = 2.0 * (b.squaredNorm() * I - b * b.transpose());
    r.h.template block<3, 3>(3, 3) = 2.0 * (a.squaredNorm() * I - a * a.transpose());
    const Mat3 ab = 2.0 * (a * b.transpose() - a.dot(b) * I - skew(c));
    r.h.template block<3, 3>(0, 3) = ab;
    r.h.template block<3, 3>(3, 0) = ab.transpose();
  }
  return r;
}

/// (d2 . (d0 x d1))^2 over the nine variables.
template <int Order>
Jet<9, Order> tripleSquared(const Vec3* d) {
  const double s = d[2].dot(d[0].cross(d[1]));
  Eigen::Matrix<double, 9, 1> gs;
  gs << d[1].cross(d[2]), d[2].cross(d[0]), d[0].cross(d[1]);
  Jet<9, Order> r{typename Jet<9, Order>::Uninitialized()};
  r.v = s * s;
  r.g = 2.0 * s * gs;
  if constexpr (Order == 2) {
    // 2 (gs gs^T + s Hs), Hs from the three cross-product matrices
    r.h.noalias() = 2.0 * gs * gs.transpose();
    const Mat3 k01 = -2.0 * s * skew(d[2]), k02 = 2.0 * s * skew(d[1]), k12 = -2.0 * s * skew(d[0]);
    r.h.template block<3, 3>(0, 3) += k01;
    r.h.template block<3, 3>(3, 0) += k01.transpose();
    r.h.template block<3, 3>(0, 6) += k02;
    r.h.template block<3, 3>(6, 0) += k02.transpose();
    r.h.template block<3, 3>(3, 6) += k12;
    r.h.template block<3, 3>(6, 3) += k12.transpose();
  }
  return r;
}

/// PointPoint: |d0|^2.
template <int Order>
Jet<3, Order> pointPoint(const Vec3* d) {
  return squaredLength<3, Order>(d[0], 0);
}

/// PointLine: |d0 x d1|^2 / |d0|^2.
template <int Order>
Jet<6, Order> pointLine(const Vec3* d) {
  return crossSquared<6, Order>(d[0], d[1]) / squaredLength<6, Order>(d[0], 0);
}

/// Volume: (d2 . (d0 x d1))^2 / |d0 x d1|^2.
template <int Order>
Jet<9, Order> volume(const Vec3* d) {
  return tripleSquared<Order>(d) / crossSquared<9, Order>(d[0], d[1]);
}

/// Mollifier: m(x) = r (2 - r) with r = x / eps, x = |d0 x d1|^2, below eps; 1 above.
template <int Order>
Jet<6, Order> mollifier(const Vec3* d, double eps) {
  using J = Jet<6, Order>;
  const J x = crossSquared<6, Order>(d[0], d[1]);
  if (!(x.v < eps)) return J(1.0);  // constant beyond the threshold
  // m' = 2 (1 - r) / eps, m'' = -2 / eps^2
  const double r = x.v / eps, m1 = 2.0 * (1.0 - r) / eps;
  J out{typename J::Uninitialized()};
  out.v = r * (2.0 - r);
  out.g = m1 * x.g;
  if constexpr (Order == 2) {
    out.h.noalias() = (-2.0 / (eps * eps)) * x.g * x.g.transpose();
    out.h += m1 * x.h;
  }
  return out;
}

/// Threshold: scale |d0|^2 |d1|^2.
template <int Order>
Jet<6, Order> threshold(const Vec3* d, double scale) {
  const double A = d[0].squaredNorm(), B = d[1].squaredNorm();
  Jet<6, Order> out{typename Jet<6, Order>::Uninitialized()};
  out.v = A * B * scale;
  out.g << (2.0 * B * scale) * d[0], (2.0 * A * scale) * d[1];
  if constexpr (Order == 2) {
    const Mat3 I = Mat3::Identity();
    out.h.template block<3, 3>(0, 0) = (2.0 * B * scale) * I;
    out.h.template block<3, 3>(3, 3) = (2.0 * A * scale) * I;
    out.h.template block<3, 3>(0, 3) = (4.0 * scale) * d[0] * d[1].transpose();
    out.h.template block<3, 3>(3, 0) = (4.0 * scale) * d[1] * d[0].transpose();
  }
  return out;
}

}  // namespace closed
}  // namespace distance
}  // namespace rigidiff
