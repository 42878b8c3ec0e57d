// Second-order forward-mode numbers: a value with its exact gradient and Hessian with respect to N
// variables. The distance closed forms are written once, templated on the scalar, and evaluated with
// double for values and with Jet for derivatives, so the derivatives are those of the very formula
// whose value is returned (no second hand-derived expression to keep in sync).
#pragma once

#include <Eigen/Core>

namespace rigidiff {
namespace distance {

/// Order 1 carries the gradient only (the Hessian member is left untouched), order 2 both.
template <int N, int Order>
struct Jet {
  static_assert(Order == 1 || Order == 2, "a Jet carries first or second derivatives");
  static constexpr bool kHessian = Order == 2;
  using Gradient = Eigen::Matrix<double, N, 1>;
  using Hessian = Eigen::Matrix<double, N, N>;

  double v = 0.0;
  Gradient g;
  Hessian h;

  Jet() : Jet(0.0) {}
  Jet(double c) : v(c), g(Gradient::Zero()) {  // NOLINT: constants mix freely with variables
    if constexpr (kHessian) h.setZero();
  }
  /// Storage only, for results that the arithmetic below fills entirely (skips zeroing 1 + N + N^2 numbers).
  struct Uninitialized {};
  explicit Jet(Uninitialized) {}
  /// The i-th variable, with value x.
  static Jet variable(double x, int i) {
    Jet r(x);
    r.g[i] = 1.0;
    return r;
  }
};

template <int N, int O>
Jet<N, O> operator+(const Jet<N, O>& a, const Jet<N, O>& b) {
  Jet<N, O> r{typename Jet<N, O>::Uninitialized()};
  r.v = a.v + b.v;
  r.g = a.g + b.g;
  if constexpr (Jet<N, O>::kHessian) r.h = a.h + b.h;
  return r;
}

template <int N, int O>
Jet<N, O> operator-(const Jet<N, O>& a, const Jet<N, O>& b) {
  Jet<N, O> r{typename Jet<N, O>::Uninitialized()};
  r.v = a.v - b.v;
  r.g = a.g - b.g;
  if constexpr (Jet<N, O>::kHessian) r.h = a.h - b.h;
  return r;
}

template <int N, int O>
Jet<N, O> operator-(double c, const Jet<N, O>& a) {
  Jet<N, O> r{typename Jet<N, O>::Uninitialized()};
  r.v = c - a.v;
  r.g = -a.g;
  if constexpr (Jet<N, O>::kHessian) r.h = -a.h;
  return r;
}

// product rule: (ab)'' = a''b + a b'' + a'b'^T + b'a'^T
template <int N, int O>
Jet<N, O> operator*(const Jet<N, O>& a, const Jet<N, O>& b) {
  Jet<N, O> r{typename Jet<N, O>::Uninitialized()};
  r.v = a.v * b.v;
  r.g = a.v * b.g + b.v * a.g;
  if constexpr (Jet<N, O>::kHessian) {
    r.h.noalias() = a.v * b.h + b.v * a.h;
    r.h.noalias() += a.g * b.g.transpose();
    r.h.noalias() += b.g * a.g.transpose();
  }
  return r;
}

template <int N, int O>
Jet<N, O> operator*(const Jet<N, O>& a, double c) {
  Jet<N, O> r{typename Jet<N, O>::Uninitialized()};
  r.v = a.v * c;
  r.g = a.g * c;
  if constexpr (Jet<N, O>::kHessian) r.h = a.h * c;
  return r;
}

// quotient q = a / b from a = q b differentiated twice: q'' = (a'' - q b'' - q'b'^T - b'q'^T) / b
template <int N, int O>
Jet<N, O> operator/(const Jet<N, O>& a, const Jet<N, O>& b) {
  Jet<N, O> r{typename Jet<N, O>::Uninitialized()};
  r.v = a.v / b.v;
  r.g = (a.g - r.v * b.g) / b.v;
  if constexpr (Jet<N, O>::kHessian) {
    r.h.noalias() = a.h - r.v * b.h;
    r.h.noalias() -= r.g * b.g.transpose();
    r.h.noalias() -= b.g * r.g.transpose();
    r.h /= b.v;
  }
  return r;
}

template <int N, int O>
Jet<N, O> operator/(const Jet<N, O>& a, double c) {
  return a * (1.0 / c);
}

/// The value of a scalar, for the branches of a closed form.
inline double valueOf(double x) { return x; }
template <int N, int O>
double valueOf(const Jet<N, O>& x) {
  return x.v;
}

}  // namespace distance
}  // namespace rigidiff
