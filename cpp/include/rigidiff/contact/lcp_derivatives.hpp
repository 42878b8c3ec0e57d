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

/// dx/db (n x n) of the solution held in ws (after a successful solveBoxedLcp on lcp).
void boxedLcpJacobianB(const BoxedLcp& lcp, const BoxedLcpWorkspace& ws, Ref<MatX> dx_db);

/// Reverse mode of the solution held in ws: given g = dL/dx (dim n), writes dL/db = -lambda (dim n) into
/// grad_b, and the factors of dL/dA = -lambda x^T + mu p^T: lambda, mu, p (each dim n).
void boxedLcpVjp(const BoxedLcp& lcp, const BoxedLcpWorkspace& ws, const Ref<const VecX>& g, Ref<VecX> grad_b,
                 Ref<VecX> lambda, Ref<VecX> mu, Ref<VecX> p);

}  // namespace contact
}  // namespace rigidiff
