// The PSD projection (negative eigenvalues clamped to zero) of a Hessian over up to four points that moves
// nothing when all its points move together, as every barrier pair's Hessian (b'' g g^T + b' H_d) does: its
// distance depends on the points' differences only.
//
// Such an H over n points has the common translation in its null space, so with the rows of Q = U (x) I3
// an orthonormal basis of the rest (U: n - 1 orthonormal rows orthogonal to (1, ..., 1)), H = Q^T (Q H Q^T) Q
// and its projection is Q^T PSD(Q H Q^T) Q: the same matrix, from an eigen-decomposition of size 3(n - 1)
// instead of 3n (9 instead of 12 for a point-triangle or edge-edge pair, about half the work).
#pragma once

#include <Eigen/Eigenvalues>
#include <cmath>

#include "rigidiff/collision/distance/distance_types.hpp"
#include "rigidiff/fwd.hpp"
#include "small_symmetric_eigen.hpp"

namespace rigidiff {

namespace translation_psd {

// U for n = 2, 3, 4 (rows of n entries, padded to 4): for four points a Hadamard matrix's last three rows
// (exact in binary), for three the Helmert rows
inline const double (&complementRows(int n))[3][4] {
  static const double u2[3][4] = {{M_SQRT1_2, -M_SQRT1_2}};
  static const double u3[3][4] = {{M_SQRT1_2, -M_SQRT1_2, 0.0},
                                  {1.0 / std::sqrt(6.0), 1.0 / std::sqrt(6.0), -2.0 / std::sqrt(6.0)}};
  static const double u4[3][4] = {{0.5, 0.5, -0.5, -0.5}, {0.5, -0.5, 0.5, -0.5}, {0.5, -0.5, -0.5, 0.5}};
  return n == 2 ? u2 : (n == 3 ? u3 : u4);
}

// H over the live points live[0..n) (3 x 3 blocks of H) with its negative part removed, in place
template <int n>
void clampLive(Eigen::Matrix<double, 12, 12>& H, const int* live) {
  constexpr int m = 3 * (n - 1);
  using Reduced = Eigen::Matrix<double, m, m>;
  const auto& U = complementRows(n);
  // R = Q H Q^T in two passes of 3 x 3 blocks: T = Q H, then R = T Q^T
  Eigen::Matrix<double, m, 3 * n> T;
  for (int a = 0; a < n - 1; ++a)
    for (int l = 0; l < n; ++l) {
      Mat3 s = Mat3::Zero();
      for (int k = 0; k < n; ++k) s += U[a][k] * H.block<3, 3>(3 * live[k], 3 * live[l]);
      T.template block<3, 3>(3 * a, 3 * l) = s;
    }
  Reduced R;
  for (int a = 0; a < n - 1; ++a)
    for (int b = 0; b < n - 1; ++b) {
      Mat3 s = Mat3::Zero();
      for (int l = 0; l < n; ++l) s += U[b][l] * T.template block<3, 3>(3 * a, 3 * l);
      R.template block<3, 3>(3 * a, 3 * b) = s;
    }
  Eigen::Matrix<double, m, 1> lambda;
  Reduced V;
  if (!symmetricEigen<m>(R, lambda, V)) {  // not converged (or not finite): Eigen's solver decides, at dynamic
    // size (rarely run: one instantiation for every m costs more compile time than it could save at run time)
    const Eigen::SelfAdjointEigenSolver<MatX> eig{MatX(R)};
    lambda = eig.eigenvalues();
    V = eig.eigenvectors();
  }
  // H minus its negative part sum_{lambda < 0} lambda w w^T with w = Q^T v (usually a few of the eigenvalues)
  for (int k = 0; k < m; ++k) {
    if (!(lambda[k] < 0.0)) continue;
    Eigen::Matrix<double, 12, 1> w = Eigen::Matrix<double, 12, 1>::Zero();
    for (int l = 0; l < n; ++l)
      for (int a = 0; a < n - 1; ++a) w.segment<3>(3 * live[l]) += U[a][l] * V.col(k).template segment<3>(3 * a);
    H.noalias() -= lambda[k] * w * w.transpose();
  }
}

}  // namespace translation_psd

/// The PSD projection of a symmetric H over four points (12 x 12) whose rows sum to zero over the points
/// (H (t, t, t, t) = 0 for every t). Points whose rows are all zero (those a distance type leaves out) are
/// left out of the decomposition and stay zero.
inline Mat12 projectTranslationInvariantToPsd(Mat12 H) {
  int live[4], n = 0;
  for (int k = 0; k < 4; ++k)
    if (!H.middleRows<3>(3 * k).isZero(0.0)) live[n++] = k;
  switch (n) {
    case 4: translation_psd::clampLive<4>(H, live); break;
    case 3: translation_psd::clampLive<3>(H, live); break;
    case 2: translation_psd::clampLive<2>(H, live); break;
    default: {  // one live point: not translation-invariant unless zero; clamp its block as it is
      if (n == 1) {
        // at dynamic size, as clampLive's fallback: no solver instantiated for this rare case alone
        const Eigen::SelfAdjointEigenSolver<MatX> eig{MatX(H.block<3, 3>(3 * live[0], 3 * live[0]))};
        for (int k = 0; k < 3 && eig.eigenvalues()[k] < 0.0; ++k)
          H.block<3, 3>(3 * live[0], 3 * live[0]) -=
              eig.eigenvalues()[k] * eig.eigenvectors().col(k) * eig.eigenvectors().col(k).transpose();
      }
    }
  }
  return H;
}

}  // namespace rigidiff
