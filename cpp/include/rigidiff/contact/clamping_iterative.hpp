// The clamping system of a large island solved by Krylov iterations on the Delassus factors, without
// forming it: Q x_C = r with Q = A_CC + A_CU E (lcp_classification.hpp), A = J K^T read row by row.
//
// Started from zero, conjugate gradients on a symmetric Q (no sliding rows: Q = A_CC, positive
// semi-definite) and CGLS on an unsymmetric one keep their iterates in the range of Q^T, so for a consistent
// system they converge to the same minimum-norm solution the dense decompositions give, in iterations
// costing the factors' entries instead of m^3 (a pile of a thousand bodies has thousands of clamped rows).
#pragma once

#include "rigidiff/contact/boxed_lcp.hpp"

namespace rigidiff {
namespace contact {

/// Solves the clamping system that ws describes (clamped, bounded, coupling, factor, r: every bounded row a
/// friction row coupled to a clamped normal) into ws.dx (m), from lcp.factors. `symmetric`: no coupled
/// bounded rows. False if the iterations do not reach a relative residual of about 1e-10 (the caller then
/// solves densely).
bool solveClampingSystemIteratively(const BoxedLcp& lcp, BoxedLcpWorkspace& ws, bool symmetric);

}  // namespace contact
}  // namespace rigidiff
