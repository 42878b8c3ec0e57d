// Projected conjugate gradients for the boxed LCP of boxed_lcp.hpp (large islands: piles, bins, stacks).
//
// With its bounds held fixed, the boxed LCP on a symmetric positive semi-definite A is the bound-constrained
// quadratic program min 1/2 x^T A x + b^T x, lo <= x <= hi, whose gradient is the velocity w = A x + b.
// It is solved by MPRGP (modified proportioning with reduced gradient projections, Dostal): conjugate
// gradients on the rows strictly inside their bounds, expansion steps that move rows onto their bounds by a
// projected gradient step, and proportioning steps that release rows at a bound whose velocity pulls them
// off it. Friction bounds follow their normal impulses by rounds (staggered projections): each round fixes
// the bounds from the current normal impulses and solves the program, until the coupled problem is valid.
// The program is solved in Jacobi-scaled impulses y = x sqrt(A_ii) (a unit diagonal: light and heavy
// bodies, normals and friction rows converge together). Where Gauss-Seidel needs about the condition
// number of A in sweeps (a tall column of bodies: thousands), the conjugate directions need about its
// square root. Products are budgeted (300 sqrt(rows), at least 600: twice what the runs that answered on
// landing bins and heaps needed); out of them, the best iterate of the round is kept.
#pragma once

#include "rigidiff/contact/boxed_lcp.hpp"

namespace rigidiff {
namespace contact {

/// Solves the boxed LCP from ws.x (moved into the bounds first) by projected conjugate gradients, reading A
/// through lcp.factors when the problem has them (a lazy A is never formed). Writes ws.x and ws.w = A x + b.
/// True when (x, w) passes isValidBoxedLcp with the friction bounds of the answer's normal impulses; false
/// if the rounds or the products' budget run out first (the answer is then the last iterate, or the round's
/// best, finite). maxProducts > 0 replaces the budget of products with A (projectedCgBudget); the products
/// spent are added to *productsUsed when given. Uses ws.lo, ws.hi, ws.dx, ws.dw, ws.xprev, ws.tmp and the
/// cg* buffers as scratch.
bool solveBoxedLcpProjectedCg(const BoxedLcp& lcp, BoxedLcpWorkspace& ws, const BoxedLcpOptions& options,
                              int maxProducts = 0, int* productsUsed = nullptr);

/// The products with A that solveBoxedLcpProjectedCg may spend on a problem of `rows` rows by default.
int projectedCgBudget(int rows);

}  // namespace contact
}  // namespace rigidiff
