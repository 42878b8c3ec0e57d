// The minimum-norm least-squares solution x = Q^+ r of a symmetric positive semi-definite system, from a
// Cholesky factorisation with diagonal pivoting that stops at the rank: P^T Q P = L L^T, L = [L1; L2]
// (m x k, L1 lower triangular k x k). With X = L2 L1^-1 and B = [I; X], P^T Q P = B (L1 L1^T) B^T and
//   Q^+ = P B (B^T B)^-1 (L1 L1^T)^-1 (B^T B)^-1 B^T P^T,   B^T B = I + X^T X,
// which costs about m k^2 (m: rows, k: rank), where a complete orthogonal decomposition costs several m^3.
// Clamping systems of resting piles have many more rows than their bodies have dofs (k << m).
#pragma once

#include <vector>

#include "rigidiff/fwd.hpp"

namespace rigidiff {
namespace contact {

/// Buffers of minNormPsdSolve, sized for systems of up to n rows (resize only grows them).
struct MinNormPsdWorkspace {
  void resize(int n);
  /// pivoted factor (n x n; row-major: a new column is one product of the rows below with the pivot row)
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> L;
  MatX S;                  ///< I + X^T X (n x n), top-left block used
  VecX d, s, t;            ///< updated diagonal, permuted right-hand side, reduced vector (dim n)
  std::vector<int> perm;   ///< pivot order (dim n)
  int m = 0;               ///< size of the factorised system
  int rank = 0;            ///< its rank k (S's lower triangle holds the Cholesky factor of I + X^T X if k < m)
  /// the matrix and tolerances of the last minNormPsdSolve that factorised (kept is false once another
  /// factorisation replaced it): a later solve of the same bits reuses the factor
  MatX keptQ;
  double keptLow = 0.0, keptHigh = 0.0;
  bool kept = false;
};

/// Factorises the top-left m x m block of Q (symmetric positive semi-definite) into ws for
/// minNormPsdApply. The rank is the number of pivots above `lowTolerance` times the largest diagonal
/// entry; returns false when a pivot falls between `lowTolerance` and `highTolerance` times it, where the
/// rank is not clear-cut, or when Q is zero or not finite: the caller then decides with a rank-revealing
/// decomposition.
bool minNormPsdFactor(const Ref<const MatX>& Q, double lowTolerance, double highTolerance, MinNormPsdWorkspace& ws);

/// x = Q^+ r with the factor of the last successful minNormPsdFactor (r and x of dim m; they may alias).
void minNormPsdApply(MinNormPsdWorkspace& ws, const Ref<const VecX>& r, Ref<VecX> x);

/// x = Q^+ r (minNormPsdFactor, then minNormPsdApply); false (x not set) where the factor fails, or
/// when x is not finite. When Q and the tolerances are those of the last solve that factorised in ws, to the
/// bit (a body at rest), that factor is reused: the same x, without the factorisation.
bool minNormPsdSolve(const Ref<const MatX>& Q, const Ref<const VecX>& r, double lowTolerance, double highTolerance,
                     MinNormPsdWorkspace& ws, Ref<VecX> x);

}  // namespace contact
}  // namespace rigidiff
