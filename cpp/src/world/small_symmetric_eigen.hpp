// Eigenvalues and eigenvectors of a small symmetric matrix whose size is known at compile time (the barrier
// pairs' 3 x 3 to 9 x 9 Hessians): Householder reduction to tridiagonal form and implicit QR steps with
// Wilkinson shifts, written as plain loops over fixed sizes. About twice as fast as Eigen's general solver on
// 9 x 9 matrices, whose blocks are sized at run time; the same accuracy (backward stable).
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <limits>

namespace rigidiff {

/// A = V diag(lambda) V^T for symmetric A (its lower triangle is read); lambda unsorted, V orthonormal.
/// Returns false when the QR steps did not converge in 30 n steps or A holds a NaN (then lambda and V are
/// not valid: the caller falls back to another solver).
template <int n>
bool symmetricEigen(const Eigen::Matrix<double, n, n>& A_in, Eigen::Matrix<double, n, 1>& lambda,
                    Eigen::Matrix<double, n, n>& V) {
  using Mat = Eigen::Matrix<double, n, n>;
  using Vec = Eigen::Matrix<double, n, 1>;
  // scaled to a largest entry of one: no overflow or underflow in the squares below
  const double scale = A_in.template triangularView<Eigen::Lower>().toDenseMatrix().cwiseAbs().maxCoeff();
  V.setIdentity();
  if (!(scale > 0.0)) {
    lambda.setZero();
    return scale == 0.0;
  }
  Mat A = A_in.template selfadjointView<Eigen::Lower>();
  A /= scale;
  // tridiagonal reduction: column k's entries below the subdiagonal are reflected onto it by
  // P_k = I - beta_k v_k v_k^T (v_k zero above k + 1): A <- P A P = A - v w^T - w v^T with
  // w = p - (beta / 2)(p . v) v, p = beta A v; plain loops over the trailing block (fixed sizes)
  double vs[n][n] = {}, betas[n] = {};  // reflector k: entries k + 1 on of row k
  for (int k = 0; k + 2 < n; ++k) {
    double* v = vs[k];
    betas[k] = 0.0;
    double tail = 0.0;
    for (int i = k + 2; i < n; ++i) tail += A(i, k) * A(i, k);
    if (tail == 0.0) continue;  // already tridiagonal in this column
    const double x0 = A(k + 1, k), norm = std::sqrt(x0 * x0 + tail);
    const double alpha = x0 > 0.0 ? -norm : norm;
    v[k + 1] = x0 - alpha;
    for (int i = k + 2; i < n; ++i) v[i] = A(i, k);
    const double beta = 2.0 / (v[k + 1] * v[k + 1] + tail);
    betas[k] = beta;
    double w[n], pv = 0.0;
    for (int i = k + 1; i < n; ++i) {
      double s = 0.0;
      for (int j = k + 1; j < n; ++j) s += A(i, j) * v[j];
      w[i] = beta * s;
      pv += w[i] * v[i];
    }
    for (int i = k + 1; i < n; ++i) w[i] -= 0.5 * beta * pv * v[i];
    for (int j = k + 1; j < n; ++j)
      for (int i = k + 1; i < n; ++i) A(i, j) -= v[i] * w[j] + w[i] * v[j];
    for (int i = k + 2; i < n; ++i) A(i, k) = A(k, i) = 0.0;
    A(k + 1, k) = A(k, k + 1) = alpha;
  }
  // V = P_0 P_1 ... P_{n-3}, applied from the last (which touches only the trailing block of the identity)
  for (int k = n - 3; k >= 0; --k) {
    if (betas[k] == 0.0) continue;
    const double* v = vs[k];
    for (int c = k + 1; c < n; ++c) {
      double s = 0.0;
      for (int i = k + 1; i < n; ++i) s += v[i] * V(i, c);
      s *= betas[k];
      for (int i = k + 1; i < n; ++i) V(i, c) -= s * v[i];
    }
  }
  Vec d = A.diagonal(), e = Vec::Zero();
  for (int i = 0; i + 1 < n; ++i) e[i] = A(i + 1, i);
  const double eps = std::numeric_limits<double>::epsilon();
  for (int iter = 0; iter < 30 * n; ++iter) {
    for (int i = 0; i + 1 < n; ++i)
      if (std::abs(e[i]) <= eps * (std::abs(d[i]) + std::abs(d[i + 1])) || std::abs(e[i]) <= 1e-300) e[i] = 0.0;
    int q = n - 1;
    while (q > 0 && e[q - 1] == 0.0) --q;
    if (q == 0) {
      lambda = scale * d;
      return true;
    }
    int p = q - 1;
    while (p > 0 && e[p - 1] != 0.0) --p;
    // Wilkinson shift: the eigenvalue of the trailing 2 x 2 block nearer its last diagonal entry
    const double delta = 0.5 * (d[q - 1] - d[q]), b2 = e[q - 1] * e[q - 1];
    const double mu = d[q] - b2 / (delta + std::copysign(std::sqrt(delta * delta + b2), delta));
    double x = d[p] - mu, z = e[p];
    for (int k = p; k < q; ++k) {
      // rotation in the (k, k+1) plane taking (x, z) to (r, 0): the first one starts the bulge, the others chase it
      const double r = std::sqrt(x * x + z * z);  // no overflow: the matrix is scaled to entries <= 1
      const double c = r > 0.0 ? x / r : 1.0, s = r > 0.0 ? -z / r : 0.0;
      if (k > p) e[k - 1] = r;
      const double a = d[k], b = e[k], cc = d[k + 1];
      d[k] = a * c * c - 2.0 * b * c * s + cc * s * s;
      d[k + 1] = a * s * s + 2.0 * b * c * s + cc * c * c;
      e[k] = (a - cc) * c * s + b * (c * c - s * s);
      if (k + 1 < q) {
        z = -s * e[k + 1];
        e[k + 1] *= c;
        x = e[k];
      }
      const Vec vk = V.col(k), vk1 = V.col(k + 1);
      V.col(k) = c * vk - s * vk1;
      V.col(k + 1) = s * vk + c * vk1;
    }
  }
  return false;
}

}  // namespace rigidiff
