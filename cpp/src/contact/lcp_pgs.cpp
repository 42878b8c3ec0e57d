// Projected Gauss-Seidel for the boxed LCP (see rigidiff/contact/lcp_pgs.hpp).
#include "rigidiff/contact/lcp_pgs.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rigidiff {
namespace contact {

namespace {

// sweeps between validity checks of a solve that stops when valid (a check costs about one sweep)
constexpr int kValidityCheckSweeps = 8;

}  // namespace

bool solveBoxedLcpPgs(const BoxedLcp& lcp, BoxedLcpWorkspace& ws, const BoxedLcpOptions& options,
                      bool dropFriction, bool stopWhenValid) {
  const int n = lcp.n;
  if (n == 0) return true;
  // a lazy A not formed yet is read through its factors alone: its diagonal here, w at the end
  const bool lazy = lcp.lazyA && !ws.denseReady;
  ws.diag.resize(n);
  for (int i = 0; i < n; ++i) ws.diag[i] = lazy ? delassusDiagonal(lcp, i) : lcp.A(i, i);
  const double scale = std::max(ws.diag.cwiseAbs().maxCoeff(), std::numeric_limits<double>::min());
  const double shift = options.pgsRegularisation * scale;
  // with factors, w_i = b_i + J_i u with u = K^T x kept up to date: a row costs its entries, not n
  const DelassusFactors* f = n >= kSparseFactorRows || lazy ? lcp.factors : nullptr;
  auto refreshVelocity = [&]() {
    ws.velocity.setZero(f->dim);
    for (int i = 0; i < n; ++i)
      for (int e = f->start[i]; e < f->start[i + 1]; ++e) ws.velocity[f->index[e]] += f->K[e] * ws.x[i];
  };
  if (f) refreshVelocity();
  auto rowVelocity = [&](int i) {
    if (!f) return lcp.A.col(i).dot(ws.x) + lcp.b[i];
    double w = lcp.b[i];
    for (int e = f->start[i]; e < f->start[i + 1]; ++e) w += f->J[e] * ws.velocity[f->index[e]];
    return w;
  };
  // (x, w) valid now? w from the velocity refreshed against drift
  auto validNow = [&]() {
    if (f) {
      refreshVelocity();
      for (int i = 0; i < n; ++i) ws.w[i] = rowVelocity(i);
    } else {
      boxedLcpVelocity(lcp, ws.x, ws.w);
    }
    return isValidBoxedLcp(lcp, ws.x, ws.w, options);
  };
  bool converged = false;
  for (int sweep = 0; sweep < options.pgsIterations && !converged; ++sweep) {
    if (stopWhenValid && sweep > 0 && sweep % kValidityCheckSweeps == 0 && validNow()) return true;
    if (f && sweep > 0 && sweep % 64 == 0) refreshVelocity();  // against the drift of the updates
    double change = 0.0;
    for (int i = 0; i < n; ++i) {
      const int j = lcp.normalOf(i);
      if (dropFriction && j >= 0) {
        if (f && ws.x[i] != 0.0)
          for (int e = f->start[i]; e < f->start[i + 1]; ++e) ws.velocity[f->index[e]] -= f->K[e] * ws.x[i];
        ws.x[i] = 0.0;
        continue;
      }
      double l = lcp.lo[i], u = lcp.hi[i];
      if (j >= 0) {
        const double s = std::max(0.0, ws.x[j]);
        l *= s;
        u *= s;
      }
      const double d = ws.diag[i] + shift;
      double xi = 0.0;
      if (d > 0.0) xi = ws.x[i] - rowVelocity(i) / d;
      xi = std::min(u, std::max(l, xi));
      if (!std::isfinite(xi)) return false;
      change = std::max(change, std::abs(xi - ws.x[i]));
      if (f && xi != ws.x[i])
        for (int e = f->start[i]; e < f->start[i + 1]; ++e) ws.velocity[f->index[e]] += f->K[e] * (xi - ws.x[i]);
      ws.x[i] = xi;
    }
    converged = change <= options.pgsTolerance * (1.0 + ws.x.cwiseAbs().maxCoeff());
  }
  if (stopWhenValid) return validNow();
  delassusVelocity(lcp, ws, ws.x, ws.w);
  return converged;
}

}  // namespace contact
}  // namespace rigidiff
