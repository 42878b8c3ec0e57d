// The pseudo-inverse of a rank-deficient system as a product of two thin factors, read off its complete
// orthogonal decomposition A P = Q [T 0; 0 0] Z (T: r x r upper triangular, r = rank):
//   A^+ = P Z^T [T^-1; 0] [I 0] Q^T = U V^T,   U = P (Z^T)(:, 0:r) T^-1 (cols x r),   V = Q(:, 0:r) (rows x r).
// Clamping systems of redundant contacts (four corners of a flat foot) have r well below their size, so
// products with U and V cost less than products with the square A^+, and forming them costs less than
// solving for A^+ column by column.
#pragma once

#include <Eigen/QR>

#include "rigidiff/fwd.hpp"

namespace rigidiff {
namespace contact {

namespace detail {
// x <- (I - tau v v^T) x on the entries x_head, x_tail[0:len] with v = (1, ess[0], ess[stride], ...)
inline void reflect(double tau, const double* ess, int stride, int len, double* x_head, double* x_tail) {
  double dot = *x_head;
  for (int i = 0; i < len; ++i) dot += ess[i * stride] * x_tail[i];
  const double s = tau * dot;
  *x_head -= s;
  for (int i = 0; i < len; ++i) x_tail[i] -= s * ess[i * stride];
}
}  // namespace detail

/// cod.compute(A), compiled once (contact/pseudo_inverse.cpp): Eigen's decomposition is seconds of compile time
/// in every translation unit that instantiates it.
void computeCod(Eigen::CompleteOrthogonalDecomposition<MatX>& cod, const Eigen::Ref<const MatX>& A);

/// U (cols x r) and V (rows x r) with A^+ = U V^T, from the decomposition of A; returns r. Both are
/// empty (r = 0) when A is zero. The reflectors are applied by plain loops: at these sizes (tens of rows)
/// Eigen's Householder sequences spend most of their time outside the arithmetic.
inline int pseudoInverseFactors(const Eigen::CompleteOrthogonalDecomposition<MatX>& cod, MatX& U, MatX& V) {
  const int r = static_cast<int>(cod.rank());
  const int rows = static_cast<int>(cod.rows()), cols = static_cast<int>(cod.cols());
  const MatX& qtz = cod.matrixQTZ();
  U.resize(cols, r);
  V.resize(rows, r);
  if (r == 0) return 0;
  // V = H_0 ... H_(r-1) [I; 0], Q's reflector k being I - tau_k v v^T with v = e_k + qtz(k+1:, k)
  V.setIdentity();
  for (int k = r - 1; k >= 0; --k) {
    const double tau = cod.hCoeffs()(k);
    const int len = rows - k - 1;
    const double* ess = qtz.data() + static_cast<Eigen::Index>(k) * rows + k + 1;
    if (tau != 0.0)
      for (int c = k; c < r; ++c)  // columns left of k are still zero in rows k and below
        detail::reflect(tau, ess, 1, len, &V(k, c), &V(k, c) + 1);
  }
  // U = Z^T [I; 0] = G_(r-1) ... G_0 [I; 0] (cols x r) first, Z's reflector k acting on entry k and the
  // entries r.. with essential part qtz(k, r:) (a row: stride `rows`); Z = I at full rank, where the
  // decomposition leaves its coefficients unset (Eigen's own solve skips Z there too)
  U.setIdentity();
  if (r < cols) {
    for (int k = 0; k < r; ++k) {
      const double tau = cod.zCoeffs()(k);
      if (tau == 0.0) continue;
      const double* ess = qtz.data() + static_cast<Eigen::Index>(r) * rows + k;
      for (int c = 0; c < r; ++c) detail::reflect(tau, ess, rows, cols - r, &U(k, c), &U(r, c));
    }
  }
  // then U = P U T^-1 (a permutation product may act in place)
  qtz.topLeftCorner(r, r).triangularView<Eigen::Upper>().solveInPlace<Eigen::OnTheRight>(U);
  U = cod.colsPermutation() * U;
  return r;
}

/// out = (A^+)^T z = V U^T z (dim rows) from the decomposition of A, without forming U and V: the same
/// reflectors applied to one vector, O(rows r + cols r) instead of the factors' O(rows cols r).
/// scratch grows to cols entries if shorter; z has cols entries.
inline void pseudoInverseTransposeProduct(const Eigen::CompleteOrthogonalDecomposition<MatX>& cod,
                                          const Ref<const VecX>& z, VecX& scratch, Ref<VecX> out) {
  const int r = static_cast<int>(cod.rank());
  const int rows = static_cast<int>(cod.rows()), cols = static_cast<int>(cod.cols());
  const MatX& qtz = cod.matrixQTZ();
  out.setZero();
  if (r == 0) return;
  // U^T z = T^-T [I 0] Z P^T z, Z = G_0 ... G_(r-1) (pseudoInverseFactors builds Z^T [I; 0])
  if (scratch.size() < cols) scratch.resize(cols);
  auto x = scratch.head(cols);
  x.noalias() = cod.colsPermutation().transpose() * z;
  if (r < cols) {
    for (int k = r - 1; k >= 0; --k) {
      const double tau = cod.zCoeffs()(k);
      if (tau == 0.0) continue;
      const double* ess = qtz.data() + static_cast<Eigen::Index>(r) * rows + k;
      detail::reflect(tau, ess, rows, cols - r, &x[k], &x[r]);
    }
  }
  auto y = x.head(r);
  qtz.topLeftCorner(r, r).triangularView<Eigen::Upper>().transpose().solveInPlace(y);
  // then V = H_0 ... H_(r-1) [I; 0] times it
  out.head(r) = y;
  for (int k = r - 1; k >= 0; --k) {
    const double tau = cod.hCoeffs()(k);
    const double* ess = qtz.data() + static_cast<Eigen::Index>(k) * rows + k + 1;
    if (tau != 0.0) detail::reflect(tau, ess, 1, rows - k - 1, &out[k], &out[k] + 1);
  }
}

}  // namespace contact
}  // namespace rigidiff
