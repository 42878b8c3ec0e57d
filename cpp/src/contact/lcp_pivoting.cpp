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
// problems of kSparseFactorRows rows or more refresh w = A x + b once per kRefreshRows driven rows
// instead of after each (an O(n^2) product)
constexpr int kRefreshRows = 16;
// friction rounds of pivoting on problems of kSparseFactorRows rows or more
constexpr int kLargeIslandRounds = 6;

// pivoting state of a row
enum RowState : int { kUnprocessed = 0, kClamped = 1, kAtLower = 2, kAtUpper = 3 };

// The Cholesky factor L of (A + shift I) on the rows of ws.list (the clamped rows, in order) is kept in
// the lower triangle of ws.L's top-left block and updated as the list changes: a row joining the list
// adds a row to L (m^2), a row leaving it deletes a row and a column and updates the trailing block by
// the deleted column (m^2), where refactorising at every pivot would cost m^3.

// Cholesky factor of (A + shift I) on the rows of `list`, from scratch
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

// row j joins the end of the list; false if the factor loses positive definiteness. A clamped set of
// redundant rows is positive definite by the shift alone: when the updated factor's last pivot fails,
// the round-off of the updates may be the cause, and a fresh factorisation decides.
bool appendClamped(const BoxedLcp& lcp, double shift, int j, BoxedLcpWorkspace& ws) {
  const int m = static_cast<int>(ws.list.size());
  auto l = ws.L.row(m).head(m).transpose();
  for (int k = 0; k < m; ++k) l[k] = lcp.A(ws.list[k], j);
  ws.L.topLeftCorner(m, m).triangularView<Eigen::Lower>().solveInPlace(l);  // L l = A_Cj
  const double d = lcp.A(j, j) + shift - l.squaredNorm();
  ws.list.push_back(j);
  if (d > 0.0) {
    ws.L(m, m) = std::sqrt(d);
    return true;
  }
  return factorise(lcp, shift, ws.list, ws.L);
}

// the row at position p of the list leaves it
void removeClamped(int p, BoxedLcpWorkspace& ws) {
  const int m = static_cast<int>(ws.list.size()), t = m - p - 1;
  MatX& L = ws.L;
  for (int i = 0; i < t; ++i) ws.tmp[i] = L(p + 1 + i, p);  // the deleted column below the diagonal
  // rows below p move up one; columns right of p move left one
  for (int c = 0; c < p; ++c)
    for (int i = p; i < m - 1; ++i) L(i, c) = L(i + 1, c);
  for (int c = p; c < m - 1; ++c)
    for (int i = c; i < m - 1; ++i) L(i, c) = L(i + 1, c + 1);
  // L22' L22'^T = L22 L22^T + x x^T (rank-one update, rotations down the diagonal)
  for (int k = 0; k < t; ++k) {
    const int kk = p + k;
    const double lkk = L(kk, kk), xk = ws.tmp[k];
    const double r = std::hypot(lkk, xk), c = r / lkk, s = xk / lkk;
    L(kk, kk) = r;
    for (int i = k + 1; i < t; ++i) {
      double& lik = L(p + i, kk);
      lik = (lik + s * ws.tmp[i]) / c;
      ws.tmp[i] = c * ws.tmp[i] - s * lik;
    }
  }
  ws.list.erase(ws.list.begin() + p);
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
    return appendClamped(lcp, shift, i, ws);
  }
  const double dir = wi > 0.0 ? -1.0 : 1.0;
  const double scale = std::max(lcp.A.diagonal().cwiseAbs().maxCoeff(), std::numeric_limits<double>::min());
  const double tinyX = 1e-13, tinyW = 1e-13 * scale;
  const int budget = 4 * lcp.n + 20;
  for (int pivot = 0; pivot < budget; ++pivot) {
    // direction keeping w = 0 on the clamped rows: dx_C = -(A_CC + shift I)^-1 A_Ci dir
    const int m = static_cast<int>(ws.list.size());
    for (int k = 0; k < m; ++k) ws.tmp[k] = -lcp.A(ws.list[k], i) * dir;
    auto y = ws.tmp.head(m);
    ws.L.topLeftCorner(m, m).triangularView<Eigen::Lower>().solveInPlace(y);
    ws.L.topLeftCorner(m, m).triangularView<Eigen::Lower>().transpose().solveInPlace(y);
    ws.dx.setZero();
    ws.dx[i] = dir;
    for (int k = 0; k < m; ++k) ws.dx[ws.list[k]] = ws.tmp[k];
    if (lcp.factors && lcp.n >= kSparseFactorRows) {
      // dw = J K^T dx over the rows' entries, where A's columns cost n each
      const DelassusFactors& f = *lcp.factors;
      ws.velocity.setZero(f.dim);
      auto addColumn = [&](int c, double s) {
        for (int e = f.start[c]; e < f.start[c + 1]; ++e) ws.velocity[f.index[e]] += f.K[e] * s;
      };
      addColumn(i, dir);
      for (int k = 0; k < m; ++k) addColumn(ws.list[k], ws.tmp[k]);
      for (int r = 0; r < lcp.n; ++r) {
        double s = 0.0;
        for (int e = f.start[r]; e < f.start[r + 1]; ++e) s += f.J[e] * ws.velocity[f.index[e]];
        ws.dw[r] = s;
      }
    } else {
      ws.dw.noalias() = lcp.A.col(i) * dir;
      for (int k = 0; k < m; ++k) ws.dw.noalias() += lcp.A.col(ws.list[k]) * ws.tmp[k];
    }
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
      if (!appendClamped(lcp, shift, j, ws)) return false;
      if (j == i) return true;
      continue;
    }
    ws.x[j] = e.target == kAtUpper ? ws.hi[j] : ws.lo[j];
    const int previous = ws.state[j];
    ws.state[j] = e.target;
    if (j == i) return true;
    if (previous == kClamped)
      removeClamped(static_cast<int>(std::find(ws.list.begin(), ws.list.end(), j) - ws.list.begin()), ws);
  }
  return false;
}

}  // namespace

bool pivotFixedBounds(const BoxedLcp& lcp, double shift, BoxedLcpWorkspace& ws) {
  ws.x.setZero();
  ws.w = lcp.b;
  ws.list.clear();
  std::fill(ws.state.begin(), ws.state.end(), static_cast<int>(kUnprocessed));
  const int every = lcp.n >= kSparseFactorRows ? kRefreshRows : 1;
  for (int i = 0; i < lcp.n; ++i) {
    if (!driveRow(lcp, shift, i, ws)) return false;
    if ((i + 1) % every != 0 && i + 1 != lcp.n) continue;
    // refresh w against drift (through the factors where a dense product would cost n^2)
    if (lcp.factors && lcp.n >= kSparseFactorRows) {
      const DelassusFactors& f = *lcp.factors;
      ws.velocity.setZero(f.dim);
      for (int r = 0; r < lcp.n; ++r)
        if (ws.x[r] != 0.0)
          for (int e = f.start[r]; e < f.start[r + 1]; ++e) ws.velocity[f.index[e]] += f.K[e] * ws.x[r];
      for (int r = 0; r < lcp.n; ++r) {
        double s = lcp.b[r] + shift * ws.x[r];
        for (int e = f.start[r]; e < f.start[r + 1]; ++e) s += f.J[e] * ws.velocity[f.index[e]];
        ws.w[r] = s;
      }
    } else {
      ws.w.noalias() = lcp.A * ws.x;
      ws.w += lcp.b + shift * ws.x;
    }
  }
  return ws.x.allFinite();
}

bool solveBoxedLcpPivoting(const BoxedLcp& lcp, BoxedLcpWorkspace& ws, const BoxedLcpOptions& options) {
  const int n = lcp.n;
  if (ws.L.rows() < n) ws.L.resize(n, n);  // grows only, when pivoting first needs it
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
  double leastChange = kInf;
  int leastAt = 0;
  // a large island's round costs about n |C|^2: a few rounds, then the later stages
  const int rounds = n >= kSparseFactorRows ? std::min(options.frictionIterations, kLargeIslandRounds)
                                            : options.frictionIterations;
  for (int outer = 0; outer <= rounds && !settled; ++outer) {
    if (!pivotFixedBounds(lcp, shift, ws)) return false;
    if (!friction) break;
    // how far the friction bounds of this iterate's normal impulses are from those it was solved with
    double change = 0.0;
    for (int i = 0; i < n; ++i) {
      const int j = lcp.normalOf(i);
      if (j < 0) continue;
      const double s = std::max(0.0, ws.x[j]);
      change = std::max(change, std::abs(lcp.lo[i] * s - ws.lo[i]) + std::abs(lcp.hi[i] * s - ws.hi[i]));
    }
    // the classification of this iterate may already be right: its clamping system couples the friction
    // bounds to the normal impulses exactly. On large islands (whose clamping systems cost m^3) only
    // the first round and the rounds that come closer than any before are tried.
    if (lcp.n < kSparseFactorRows || outer == 0 || change < leastChange) {
      ws.xprev = ws.x;
      classifyBoxedLcp(lcp, ws, options);
      if (solveClampingSystem(lcp, ws.classes.data(), ws, options) && isValidBoxedLcp(lcp, ws.x, ws.w, options))
        return true;
      ws.x = ws.xprev;
    }
    // friction bounds from the new normal impulses
    for (int i = 0; i < n; ++i) {
      const int j = lcp.normalOf(i);
      if (j < 0) continue;
      const double s = std::max(0.0, ws.x[j]);
      ws.lo[i] = lcp.lo[i] * s;
      ws.hi[i] = lcp.hi[i] * s;
    }
    settled = change <= 0.1 * options.tolerance * (1.0 + ws.x.cwiseAbs().maxCoeff());
    // a loop that has not found a smaller change in 8 rounds circles (redundant contacts share their
    // load differently in each round): the later stages answer. On a large island, where a round costs
    // about n |C|^2 and Gauss-Seidel answers in the time of a few rounds, 2 rounds decide.
    if (change < leastChange) {
      leastChange = change;
      leastAt = outer;
    } else if (outer - leastAt >= (n >= kSparseFactorRows ? 2 : 8)) {
      break;
    }
  }
  boxedLcpVelocity(lcp, ws.x, ws.w);
  return settled || !friction;
}

}  // namespace contact
}  // namespace rigidiff
