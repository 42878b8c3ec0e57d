// Principal pivoting for the boxed LCP (see rigidiff/contact/lcp_pivoting.hpp).
#include "rigidiff/contact/lcp_pivoting.hpp"

#include "rigidiff/contact/lcp_classification.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rigidiff {
namespace contact {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// pivoting state of a row
enum RowState : int { kUnprocessed = 0, kClamped = 1, kAtLower = 2, kAtUpper = 3 };

// Cholesky factor of (A + shift I) on the rows of `list`, into the lower triangle of L's top-left block
bool factorise(const BoxedLcp& lcp, double shift, const std::vector<int>& list, MatX& L) {
  const int m = static_cast<int>(list.size());
  for (int c = 0; c < m; ++c) {
    for (int r = c; r < m; ++r) {
      double s = lcp.A(list[r], list[c]) + (r == c ? shift : 0.0);
      for (int k = 0; k < c; ++k) s -= L(r, k) * L(c, k);
      if (r == c) {
        if (!(s > 0.0)) return false;
        L(c, c) = std::sqrt(s);
      } else {
        L(r, c) = s / L(c, c);
      }
    }
  }
  return true;
}

// the blocking event of a drive: row `row` reaches `target` state after a step `step`
struct Event {
  double step = kInf;
  int row = -1;
  int target = kUnprocessed;
  void offer(double s, int r, int t) {
    if (s < step) {
      step = std::max(0.0, s);
      row = r;
      target = t;
    }
  }
};

// the largest step along (dx, dw) that keeps every processed row complementary, and the row that blocks it
Event blockingEvent(const BoxedLcpWorkspace& ws, int i, double dir, double tinyX, double tinyW) {
  Event e;
  // the driven row: its velocity reaches zero, or its impulse reaches a bound
  if (ws.w[i] * ws.dw[i] < 0.0 && std::abs(ws.dw[i]) > tinyW) e.offer(-ws.w[i] / ws.dw[i], i, kClamped);
  const double bound = dir > 0.0 ? ws.hi[i] : ws.lo[i];
  if (std::isfinite(bound)) e.offer((bound - ws.x[i]) / dir, i, dir > 0.0 ? kAtUpper : kAtLower);
  // clamped rows reaching a bound
  for (int j : ws.list) {
    if (ws.dx[j] > tinyX && std::isfinite(ws.hi[j])) e.offer((ws.hi[j] - ws.x[j]) / ws.dx[j], j, kAtUpper);
    if (ws.dx[j] < -tinyX && std::isfinite(ws.lo[j])) e.offer((ws.lo[j] - ws.x[j]) / ws.dx[j], j, kAtLower);
  }
  // bounded rows whose velocity reaches zero (rows with a pinched interval never move)
  for (int j = 0; j < ws.n; ++j) {
    if (j == i || ws.hi[j] <= ws.lo[j]) continue;
    if (ws.state[j] == kAtLower && ws.dw[j] < -tinyW) e.offer(-ws.w[j] / ws.dw[j], j, kClamped);
    if (ws.state[j] == kAtUpper && ws.dw[j] > tinyW) e.offer(-ws.w[j] / ws.dw[j], j, kClamped);
  }
  return e;
}

// drives row i from x_i = 0 until it is complementary; false if unbounded or out of pivots
bool driveRow(const BoxedLcp& lcp, double shift, int i, BoxedLcpWorkspace& ws) {
  const double wi = ws.w[i];
  if (ws.hi[i] <= ws.lo[i] || (wi >= 0.0 && ws.lo[i] == 0.0)) {
    ws.state[i] = kAtLower;
    return true;
  }
  if (wi <= 0.0 && ws.hi[i] == 0.0) {
    ws.state[i] = kAtUpper;
    return true;
  }
  if (wi == 0.0) {
    ws.state[i] = kClamped;
    ws.list.push_back(i);
    return true;
  }
  const double dir = wi > 0.0 ? -1.0 : 1.0;
  const double scale = std::max(lcp.A.diagonal().cwiseAbs().maxCoeff(), std::numeric_limits<double>::min());
  const double tinyX = 1e-13, tinyW = 1e-13 * scale;
  const int budget = 4 * lcp.n + 20;
  for (int pivot = 0; pivot < budget; ++pivot) {
    // direction keeping w = 0 on the clamped rows: dx_C = -(A_CC + shift I)^-1 A_Ci dir
    const int m = static_cast<int>(ws.list.size());
    if (!factorise(lcp, shift, ws.list, ws.L)) return false;
    for (int k = 0; k < m; ++k) ws.tmp[k] = -lcp.A(ws.list[k], i) * dir;
    auto y = ws.tmp.head(m);
    ws.L.topLeftCorner(m, m).triangularView<Eigen::Lower>().solveInPlace(y);
    ws.L.topLeftCorner(m, m).triangularView<Eigen::Lower>().transpose().solveInPlace(y);
    ws.dx.setZero();
    ws.dx[i] = dir;
    for (int k = 0; k < m; ++k) ws.dx[ws.list[k]] = ws.tmp[k];
    ws.dw.noalias() = lcp.A.col(i) * dir;
    for (int k = 0; k < m; ++k) ws.dw.noalias() += lcp.A.col(ws.list[k]) * ws.tmp[k];
    ws.dw += shift * ws.dx;

    const Event e = blockingEvent(ws, i, dir, tinyX, tinyW);
    if (!std::isfinite(e.step)) return false;
    ws.x += e.step * ws.dx;
    ws.w += e.step * ws.dw;
    for (int j : ws.list) ws.w[j] = 0.0;

    const int j = e.row;
    if (e.target == kClamped) {
      ws.w[j] = 0.0;
      ws.state[j] = kClamped;
      ws.list.push_back(j);
      if (j == i) return true;
      continue;
    }
    ws.x[j] = e.target == kAtUpper ? ws.hi[j] : ws.lo[j];
    const int previous = ws.state[j];
    ws.state[j] = e.target;
    if (j == i) return true;
    if (previous == kClamped) ws.list.erase(std::find(ws.list.begin(), ws.list.end(), j));
  }
  return false;
}

}  // namespace

bool pivotFixedBounds(const BoxedLcp& lcp, double shift, BoxedLcpWorkspace& ws) {
  ws.x.setZero();
  ws.w = lcp.b;
  ws.list.clear();
  std::fill(ws.state.begin(), ws.state.end(), static_cast<int>(kUnprocessed));
  for (int i = 0; i < lcp.n; ++i) {
    if (!driveRow(lcp, shift, i, ws)) return false;
    // refresh w against drift
    ws.w.noalias() = lcp.A * ws.x;
    ws.w += lcp.b + shift * ws.x;
  }
  return ws.x.allFinite();
}

bool solveBoxedLcpPivoting(const BoxedLcp& lcp, BoxedLcpWorkspace& ws, const BoxedLcpOptions& options) {
  const int n = lcp.n;
  const double scale = std::max(lcp.A.diagonal().cwiseAbs().maxCoeff(), std::numeric_limits<double>::min());
  const double shift = options.pivotRegularisation * scale;
  bool friction = false;
  // first pass: friction bounds pinched at zero (the frictionless answer)
  for (int i = 0; i < n; ++i) {
    const bool f = lcp.normalOf(i) >= 0;
    friction = friction || f;
    ws.lo[i] = f ? 0.0 : lcp.lo[i];
    ws.hi[i] = f ? 0.0 : lcp.hi[i];
  }
  bool settled = false;
  for (int outer = 0; outer <= options.frictionIterations && !settled; ++outer) {
    if (!pivotFixedBounds(lcp, shift, ws)) return false;
    if (!friction) break;
    // the classification of this iterate may already be right: its clamping system couples the friction
    // bounds to the normal impulses exactly
    ws.xprev = ws.x;
    classifyBoxedLcp(lcp, ws, options);
    if (solveClampingSystem(lcp, ws.classes.data(), ws, options) && isValidBoxedLcp(lcp, ws.x, ws.w, options))
      return true;
    ws.x = ws.xprev;
    // friction bounds from the new normal impulses
    double change = 0.0;
    for (int i = 0; i < n; ++i) {
      const int j = lcp.normalOf(i);
      if (j < 0) continue;
      const double s = std::max(0.0, ws.x[j]);
      change = std::max(change, std::abs(lcp.lo[i] * s - ws.lo[i]) + std::abs(lcp.hi[i] * s - ws.hi[i]));
      ws.lo[i] = lcp.lo[i] * s;
      ws.hi[i] = lcp.hi[i] * s;
    }
    settled = change <= 0.1 * options.tolerance * (1.0 + ws.x.cwiseAbs().maxCoeff());
  }
  boxedLcpVelocity(lcp, ws.x, ws.w);
  return settled || !friction;
}

}  // namespace contact
}  // namespace rigidiff
