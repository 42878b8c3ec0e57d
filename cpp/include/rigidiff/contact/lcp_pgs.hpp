// Projected Gauss-Seidel for the boxed LCP of boxed_lcp.hpp: the robust, slow fallback.
#pragma once

#include "rigidiff/contact/boxed_lcp.hpp"

namespace rigidiff {
namespace contact {

/// Sweeps x_i <- clamp(x_i - w_i / (A_ii + eps), l_i, u_i) in row order, friction bounds taken from the
/// current normal impulse, with eps = options.pgsRegularisation * max A_ii; starts from ws.x. With
/// dropFriction the friction rows (findex >= 0) are held at zero. Writes ws.x and ws.w (unregularised A).
/// Returns true if the sweeps converged (the caller validates). A lazy A that is not dense yet is read
/// from its factors only (its diagonal, and w at the end). stopWhenValid: every few sweeps w is formed and
/// the sweeps stop as soon as (x, w) passes isValidBoxedLcp (true is then returned).
bool solveBoxedLcpPgs(const BoxedLcp& lcp, BoxedLcpWorkspace& ws, const BoxedLcpOptions& options,
                      bool dropFriction = false, bool stopWhenValid = false);

}  // namespace contact
}  // namespace rigidiff
