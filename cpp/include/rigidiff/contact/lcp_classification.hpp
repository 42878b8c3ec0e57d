// Classification of a boxed-LCP solution and its standardisation (the least-squares minimum-norm solution
// of the clamping system), the forward half of the LCP gradient (DiffDART's clamping-set method).
//
// Thresholds: tx = options.tolerance * (1 + max|x|). Rows are classified normals first, then friction:
//   - a row whose column of A has squared norm below (1e-12 max A_ii)^2 is Separating (it moves nothing);
//   - friction row whose normal is not Clamping, or whose bound interval (u - l) is below tx: Separating;
//   - friction row with |x| <= tx and l < 0 < u: Clamping (static friction at zero force: tie-break);
//   - x >= u - tx: UpperBound if u is non-zero (beyond tx), else Separating; x <= l + tx: likewise
//     LowerBound or Separating (so a normal with x ~ 0, w ~ 0 is Separating: tie-break);
//   - otherwise (strictly inside): Clamping.
// Standardisation, with C the Clamping rows, U the bound rows (x_U = E x_C + c_U: E holds the friction
// coefficient at the column of the row's normal, c_U a fixed non-zero bound) and S the rest (x_S = 0):
//   Q x_C = r,   Q = A_CC + A_CU E,   r = -(b_C + A_CU c_U),
// solved by a complete orthogonal decomposition for the minimum-norm least-squares x_C, so redundant
// contacts (duplicate or dependent columns of J) get one unique, symmetric answer.
#pragma once

#include "rigidiff/contact/boxed_lcp.hpp"

namespace rigidiff {
namespace contact {

/// Classifies ws.x (ws.w unused) into ws.classes. frictionDropped: friction rows become Separating.
void classifyBoxedLcp(const BoxedLcp& lcp, BoxedLcpWorkspace& ws, const BoxedLcpOptions& options,
                      bool frictionDropped = false);

/// Builds the clamping system of the classification `classes` (dim n; friction rows of a non-clamping
/// normal are treated as Separating), solves it for the minimum-norm x_C and writes the reconstructed x
/// into ws.x and w = A x + b into ws.w. Leaves ws.Q (and ws.clampingCod()), ws.clamped, ... describing the system.
/// Returns false if the result is not finite (ws.x, ws.w untouched then).
/// noCostlyDense (a large island's attempts during its solve: warm start, standardisation): a system of at
/// least a quarter of options.iterativeClampingSize clamped rows is solved through a DelassusRoot or by
/// conjugate gradients on the factors, and false is returned where neither applies or converges (sliding
/// rows, a fixed bound), instead of a dense decomposition of Q that costs seconds on a pile; the
/// derivatives decompose Q themselves if they are asked for.
bool solveClampingSystem(const BoxedLcp& lcp, const LcpClass* classes, BoxedLcpWorkspace& ws,
                         const BoxedLcpOptions& options, bool noCostlyDense = false);

}  // namespace contact
}  // namespace rigidiff
