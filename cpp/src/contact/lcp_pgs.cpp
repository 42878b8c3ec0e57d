// Projected Gauss-Seidel for the boxed LCP (see rigidiff/contact/lcp_pgs.hpp).
#include "rigidiff/contact/lcp_pgs.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rigidiff {
namespace contact {

bool solveBoxedLcpPgs(const BoxedLcp& lcp, BoxedLcpWorkspace& ws, const BoxedLcpOptions& options,
                      bool dropFriction) {
  const int n = lcp.n;
  if (n == 0) return true;
  const double scale = std::max(lcp.A.diagonal().cwiseAbs().maxCoeff(), std::numeric_limits<double>::min());
  const double shift = options.pgsRegularisation * scale;
  // with factors, w_i = b_i + J_i u with u = K^T x kept up to date: a row costs its entries, not n
  const DelassusFactors* f = n >= kSparseFactorRows ? lcp.factors : nullptr;
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
  bool converged = false;
  for (int sweep = 0; sweep < options.pgsIterations && !converged; ++sweep) {
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
      const double d = lcp.A(i, i) + shift;
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
  boxedLcpVelocity(lcp, ws.x, ws.w);
  return converged;
}

}  // namespace contact
}  // namespace rigidiff
