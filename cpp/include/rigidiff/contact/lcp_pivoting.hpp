// Principal pivoting (Dantzig's method for box bounds) for the boxed LCP of boxed_lcp.hpp.
//
// With fixed bounds l <= 0 <= u, rows are added one at a time: row i starts at x_i = 0 and is driven
// towards w_i = 0 while the rows already in the clamped set keep w = 0 and every other processed row keeps
// its complementarity; each blocking event (a clamped x reaching a bound, a bounded row's w reaching zero,
// x_i reaching its own bound) is a pivot. With A + eps I positive definite every drive ends after finitely
// many pivots. Friction bounds depend on the normal impulses, so an outer loop solves with the bounds fixed
// at mu times the previous normal impulses (starting from the frictionless answer) until they stop moving;
// after each pass the clamping system of the pass's classification is solved (friction bounds coupled to the
// normal impulses exactly) and accepted if valid, which usually ends the loop after one or two passes.
#pragma once

#include "rigidiff/contact/boxed_lcp.hpp"

namespace rigidiff {
namespace contact {

/// Solves the problem with the effective bounds fixed at ws.lo, ws.hi (dim n, lo <= 0 <= hi) on
/// A + shift I; writes ws.x and ws.w. Returns false if a drive is unbounded or exceeds its pivot budget.
bool pivotFixedBounds(const BoxedLcp& lcp, double shift, BoxedLcpWorkspace& ws);

/// Pivoting with the outer friction-bound loop; ws.x, ws.w hold the answer (w from the unshifted A).
/// Returns false on a pivoting failure or if the friction bounds did not settle; the caller validates.
bool solveBoxedLcpPivoting(const BoxedLcp& lcp, BoxedLcpWorkspace& ws, const BoxedLcpOptions& options);

}  // namespace contact
}  // namespace rigidiff
