// Derivatives of the standardised boxed-LCP solution (boxed_lcp.hpp, lcp_classification.hpp) with the
// classification held fixed. With x_C = Q^+ r, x_U = E x_C + c_U, x_S = 0 (Q = A_CC + A_CU E,
// r = -(b_C + A_CU c_U)):
//   dx_C/db_C = -Q^+,  dx_U/db_C = -E Q^+,  every other entry of dx/db is zero;
// and for a cotangent g = dL/dx, with g_e = g_C + E^T g_U, lambda = Q^+T g_e (zero outside C),
//   dL/db = -lambda,   dL/dA = -lambda x^T + mu p^T,
// where the second term is the pseudo-inverse correction of a singular Q (mu = Q^+T x_C on C,
// p = (I - Q^+ Q) g_e on C and E (I - Q^+ Q) g_e on U; both zero if Q is invertible). dL/dA treats the
// entries of A as independent (not symmetrised), so callers chain it through A = J M^-1 J^T directly.
#pragma once

#include "rigidiff/contact/boxed_lcp.hpp"

namespace rigidiff {
namespace contact {

/// The map P from the clamped rows' impulses x_C to every row's impulse with the classification held fixed:
/// a clamped row is its own entry, a row at a bound that scales with a clamped row's impulse (a sliding
/// friction row, x_r = bound_r x_n, findex) follows it, every other row stays put. The clamping-set
/// derivatives below, and the constrained step's (world/constraint_derivative_terms.hpp, with K = M~^-1 J^T P),
/// all go through it.
struct ClampingMap {
  std::vector<int> clamped;      ///< the clamped rows, by slot
  std::vector<int> slot;         ///< (n) a row's slot in `clamped`, or -1
  std::vector<int> follows;      ///< (n) the slot whose impulse a bound row follows, or -1
  std::vector<double> factor;    ///< (n) a following row's bound (its impulse is factor x_follows)
  std::vector<int> coupledRows;  ///< the following rows, in the order their terms are summed

  /// From the classes of n rows and their findex, lo and hi (boxed_lcp.hpp's conventions); the
  /// following rows in ascending order.
  void assign(int n, const LcpClass* classes, const int* findex, const double* lo, const double* hi);
  /// From the classification a solve left in ws (rows 0..n-1 of its problem).
  void assign(int n, const BoxedLcpWorkspace& ws);

  int size() const { return static_cast<int>(clamped.size()); }

  /// out(a) = value(clamped[a]) for every slot a, then out(follows[r]) += factor[r] value(r) for every
  /// following row r: the columns of A P when value(r) is column r of A, the entries of P^T g when it is g_r.
  template <typename Value, typename Out>
  void gather(const Value& value, const Out& out) const {
    for (int a = 0; a < size(); ++a) out(a) = value(clamped[a]);
    for (int r : coupledRows) out(follows[r]) += factor[r] * value(r);
  }

  /// out = P y (dim n, zero off the clamped and following rows) for y of dim size().
  void scatter(const Ref<const VecX>& y, Ref<VecX> out) const;
};

/// dx/db (n x n) of the solution held in ws (after a successful solveBoxedLcp on lcp).
void boxedLcpJacobianB(const BoxedLcp& lcp, const BoxedLcpWorkspace& ws, Ref<MatX> dx_db);

/// Reverse mode of the solution held in ws: given g = dL/dx (dim n), writes dL/db = -lambda (dim n) into
/// grad_b, and the factors of dL/dA = -lambda x^T + mu p^T: lambda, mu, p (each dim n).
void boxedLcpVjp(const BoxedLcp& lcp, const BoxedLcpWorkspace& ws, const Ref<const VecX>& g, Ref<VecX> grad_b,
                 Ref<VecX> lambda, Ref<VecX> mu, Ref<VecX> p);

}  // namespace contact
}  // namespace rigidiff
