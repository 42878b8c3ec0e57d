// The backward pass of iLQR: a Riccati recursion on the local model x' = A x + B u of every step and
// the quadratic model of the cost, with box-bounded controls (Tassa, Mansard and Todorov 2014).
#pragma once

#include <Eigen/Core>

namespace rigidiff {

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// min 0.5 x^T H x + g^T x subject to lo <= x <= hi (H symmetric positive definite), by projected
/// Newton from x0 (clamped). On return, free(i) is true for the entries not held at a bound. Returns
/// false if H or one of its free blocks is not positive definite.
bool boxQP(const RowMatrix& H, const Eigen::VectorXd& g, const Eigen::VectorXd& lo, const Eigen::VectorXd& hi,
           const Eigen::VectorXd& x0, Eigen::VectorXd& x, Eigen::Array<bool, Eigen::Dynamic, 1>& free);

/// The sizes and arrays of one backward pass; every array is row-major, one block per step.
struct RiccatiProblem {
  int T = 0, nx = 0, nu = 0;
  const double* A = nullptr;    // (T, nx, nx) state Jacobians
  const double* B = nullptr;    // (T, nx, nu) control Jacobians
  const double* lx = nullptr;   // (T+1, nx) cost gradients with respect to the state
  const double* lxx = nullptr;  // (T+1, nx, nx) their Hessians
  const double* lu = nullptr;   // (T, nu)
  const double* luu = nullptr;  // (T, nu, nu)
  const double* lo = nullptr;   // (T, nu) bounds of the control change k (may be -inf), or null for none
  const double* hi = nullptr;   // (T, nu) (may be +inf)
};

/// Gains k (T, nu) (read as the box QP's start, overwritten) and K (T, nu, nx) of the control
/// change u = k + K dx, and dV = (sum k^T Q_u, sum 0.5 k^T Q_uu k), the terms of the expected cost
/// change. mu regularises Q_uu (+ mu I). Returns false if a regularised Q_uu is not positive definite.
bool riccatiBackward(const RiccatiProblem& p, double mu, double* k, double* K, double* dV);

}  // namespace rigidiff
