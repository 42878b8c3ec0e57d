// The squared-distance closed forms, each written once for any scalar (double, or Jet for exact
// gradients and Hessians), and how a primitive of K points feeds them.
//
// Every form is invariant under translation, so it is written on at most three difference vectors
// d_j = x[to_j] - x[from_j] of the points: 9 variables where the points have 12, which makes the Hessian
// cheaper, and the base of the differences is a point of the shorter feature (an edge's end, a triangle's
// vertex), so a short edge is never the difference of two long vectors.
//
// The derivatives the solvers use come from closed_forms.hpp; the same forms evaluated with Jet (formJet)
// are the reference those are tested against.
#pragma once

#include <array>

#include "closed_forms.hpp"
#include "jet.hpp"
#include "point3.hpp"
#include "rigidiff/fwd.hpp"

namespace rigidiff {
namespace distance {

enum class Form {
  PointPoint,  // |d0|^2
  PointLine,   // |d0 x d1|^2 / |d0|^2: d1 from a point of the line, d0 along it (a parallelogram's squared height)
  Volume,      // (d2 . (d0 x d1))^2 / |d0 x d1|^2: point-plane (d0, d1 in the plane) and line-line (d0, d1 along the lines)
  Mollifier,   // m(|d0 x d1|^2) with m(x) = (x / eps)(2 - x / eps) below eps, 1 above (parameter: eps)
  Threshold,   // parameter |d0|^2 |d1|^2 (parameter: the scale)
};

constexpr int differenceCount(Form f) {
  return f == Form::PointPoint ? 1 : (f == Form::Volume ? 3 : 2);
}

/// A form applied to points: d_j = x[pairs[j][0]] - x[pairs[j][1]].
struct FormCall {
  Form form;
  std::array<std::array<int, 2>, 3> pairs;
  double parameter = 0.0;
};

template <class T>
T formExpression(Form form, const Point3<T>* d, double parameter) {
  switch (form) {
    case Form::PointPoint: return squaredNorm(d[0]);
    case Form::PointLine: return squaredNorm(cross(d[0], d[1])) / squaredNorm(d[0]);
    case Form::Volume: {
      const Point3<T> n = cross(d[0], d[1]);
      const T s = dot(d[2], n);
      return s * s / squaredNorm(n);
    }
    case Form::Mollifier: {
      const T x = squaredNorm(cross(d[0], d[1]));
      if (!(valueOf(x) < parameter)) return T(1.0);  // constant beyond the threshold
      const T r = x / parameter;
      return r * (2.0 - r);
    }
    default: return squaredNorm(d[0]) * squaredNorm(d[1]) * parameter;
  }
}

template <int K>
double formValue(const FormCall& c, const std::array<const Vec3*, K>& x) {
  Point3<double> d[3];
  for (int j = 0; j < differenceCount(c.form); ++j) {
    const Vec3 v = *x[c.pairs[j][0]] - *x[c.pairs[j][1]];
    d[j] = {v[0], v[1], v[2]};
  }
  return formExpression(c.form, d, c.parameter);
}

/// The Jet of a form over its M difference vectors (3M variables).
template <int M, int Order, int K>
Jet<3 * M, Order> formJet(const FormCall& c, const std::array<const Vec3*, K>& x) {
  using J = Jet<3 * M, Order>;
  Point3<J> d[3];
  for (int j = 0; j < M; ++j) {
    const Vec3 v = *x[c.pairs[j][0]] - *x[c.pairs[j][1]];
    d[j] = {J::variable(v[0], 3 * j), J::variable(v[1], 3 * j + 1), J::variable(v[2], 3 * j + 2)};
  }
  return formExpression(c.form, d, c.parameter);
}

/// The same Jet by the hand-differentiated forms of closed_forms.hpp.
template <int M, int Order, int K>
Jet<3 * M, Order> closedFormJet(const FormCall& c, const std::array<const Vec3*, K>& x) {
  Vec3 d[3];
  for (int j = 0; j < M; ++j) d[j] = *x[c.pairs[j][0]] - *x[c.pairs[j][1]];
  if constexpr (M == 1) {
    return closed::pointPoint<Order>(d);
  } else if constexpr (M == 2) {
    switch (c.form) {
      case Form::PointLine: return closed::pointLine<Order>(d);
      case Form::Mollifier: return closed::mollifier<Order>(d, c.parameter);
      default: return closed::threshold<Order>(d, c.parameter);
    }
  } else {
    return closed::volume<Order>(d);
  }
}

// Chain rule through d_j = x[to] - x[from]: the gradient block of d_j adds to `to` and subtracts from
// `from`; the Hessian block (j, k) spreads to the four point pairs with the product of the signs.
template <int M, int Order, int K>
void scatter(const FormCall& c, const Jet<3 * M, Order>& r, Eigen::Matrix<double, 3 * K, 1>* gradient,
             Eigen::Matrix<double, 3 * K, 3 * K>* hessian) {
  if (gradient) {
    gradient->setZero();
    for (int j = 0; j < M; ++j) {
      gradient->template segment<3>(3 * c.pairs[j][0]) += r.g.template segment<3>(3 * j);
      gradient->template segment<3>(3 * c.pairs[j][1]) -= r.g.template segment<3>(3 * j);
    }
  }
  if constexpr (Order == 2) {
    hessian->setZero();
    for (int j = 0; j < M; ++j)
      for (int k = 0; k < M; ++k) {
        const Mat3 b = r.h.template block<3, 3>(3 * j, 3 * k);
        for (int sj = 0; sj < 2; ++sj)
          for (int sk = 0; sk < 2; ++sk)
            hessian->template block<3, 3>(3 * c.pairs[j][sj], 3 * c.pairs[k][sk]) += (sj == sk ? b : Mat3(-b));
      }
  }
}

template <int K, int Order>
void formDerivatives(const FormCall& c, const std::array<const Vec3*, K>& x, Eigen::Matrix<double, 3 * K, 1>* gradient,
                     Eigen::Matrix<double, 3 * K, 3 * K>* hessian) {
  switch (differenceCount(c.form)) {
    case 1: return scatter<1, Order, K>(c, closedFormJet<1, Order, K>(c, x), gradient, hessian);
    case 2: return scatter<2, Order, K>(c, closedFormJet<2, Order, K>(c, x), gradient, hessian);
    default: return scatter<3, Order, K>(c, closedFormJet<3, Order, K>(c, x), gradient, hessian);
  }
}

template <int K>
Eigen::Matrix<double, 3 * K, 1> formGradient(const FormCall& c, const std::array<const Vec3*, K>& x) {
  Eigen::Matrix<double, 3 * K, 1> g;
  formDerivatives<K, 1>(c, x, &g, nullptr);
  return g;
}

template <int K>
Eigen::Matrix<double, 3 * K, 3 * K> formHessian(const FormCall& c, const std::array<const Vec3*, K>& x) {
  Eigen::Matrix<double, 3 * K, 3 * K> h;
  formDerivatives<K, 2>(c, x, nullptr, &h);
  return h;
}

}  // namespace distance
}  // namespace rigidiff
