// Minimum-norm solution of a positive semi-definite system by pivoted Cholesky (contact/min_norm_psd.hpp).
#include "rigidiff/contact/min_norm_psd.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include <Eigen/Cholesky>

namespace rigidiff {
namespace contact {

void MinNormPsdWorkspace::resize(int n) {
  if (L.rows() >= n) return;  // grows only: islands of different sizes share it
  L.setZero(n, n);
  S.setZero(n, n);
  d.setZero(n);
  s.setZero(n);
  t.setZero(n);
  perm.assign(n, 0);
}

bool minNormPsdFactor(const Ref<const MatX>& Q, double lowTolerance, double highTolerance, MinNormPsdWorkspace& ws) {
  const int m = static_cast<int>(Q.rows());
  ws.kept = false;  // the factor is about to change
  ws.resize(m);  // sized by the systems it factorises, not by the problems' rows (an m x m buffer each)
  ws.m = m;
  ws.rank = 0;
  if (m == 0) return true;
  double dmax = 0.0;
  for (int i = 0; i < m; ++i) {
    ws.perm[i] = i;
    ws.d[i] = Q(i, i);
    dmax = std::max(dmax, ws.d[i]);
  }
  if (!(dmax > 0.0) || !std::isfinite(dmax)) return false;
  // left-looking: column k of L needs only the k columns before it, so a rank-k system costs m k^2
  int k = 0;
  for (; k < m; ++k) {
    int p = k;
    for (int i = k + 1; i < m; ++i)
      if (ws.d[ws.perm[i]] > ws.d[ws.perm[p]]) p = i;
    const double pivot = ws.d[ws.perm[p]];
    if (pivot <= lowTolerance * dmax) break;
    if (pivot <= highTolerance * dmax || !std::isfinite(pivot)) return false;
    std::swap(ws.perm[k], ws.perm[p]);
    if (p != k) ws.L.row(k).head(k).swap(ws.L.row(p).head(k));
    const double lkk = std::sqrt(pivot);
    ws.L(k, k) = lkk;
    const int pk = ws.perm[k], below = m - k - 1;
    auto products = ws.t.head(below);
    if (k == 0 || below == 0)
      products.setZero();  // an empty product: what the kernel would give, without its set-up (small systems)
    else
      products.noalias() = ws.L.block(k + 1, 0, below, k) * ws.L.row(k).head(k).transpose();
    for (int i = k + 1; i < m; ++i) {
      const double v = (Q(ws.perm[i], pk) - products[i - k - 1]) / lkk;
      ws.L(i, k) = v;
      ws.d[ws.perm[i]] -= v * v;
    }
  }
  ws.rank = k;
  const int n = m - k;  // rows beyond the rank
  if (n == 0) return true;
  auto L1 = ws.L.topLeftCorner(k, k).triangularView<Eigen::Lower>();
  auto X = ws.L.block(k, 0, n, k);
  L1.solveInPlace<Eigen::OnTheRight>(X);  // X = L2 L1^-1
  auto S = ws.S.topLeftCorner(k, k);
  S.setIdentity();
  S.selfadjointView<Eigen::Lower>().rankUpdate(X.transpose());
  Eigen::LLT<Eigen::Ref<MatX>> llt(S);  // in place; I + X^T X is well conditioned
  return llt.info() == Eigen::Success;
}

void minNormPsdApply(MinNormPsdWorkspace& ws, const Ref<const VecX>& r, Ref<VecX> x) {
  const int m = ws.m, k = ws.rank, n = m - k;
  if (m == 0) return;
  for (int i = 0; i < m; ++i) ws.s[i] = r[ws.perm[i]];
  auto L1 = ws.L.topLeftCorner(k, k).triangularView<Eigen::Lower>();
  auto u = ws.t.head(k);
  u = ws.s.head(k);
  if (n == 0) {  // full rank: Q^-1 r
    L1.solveInPlace(u);
    L1.transpose().solveInPlace(u);
  } else {
    auto X = ws.L.block(k, 0, n, k);
    auto S = ws.S.topLeftCorner(k, k).triangularView<Eigen::Lower>();
    u.noalias() += X.transpose() * ws.s.segment(k, n);
    S.solveInPlace(u);  // (I + X^T X)^-1 u
    S.transpose().solveInPlace(u);
    L1.solveInPlace(u);
    L1.transpose().solveInPlace(u);
    S.solveInPlace(u);
    S.transpose().solveInPlace(u);
    ws.s.segment(k, n).noalias() = X * u;  // the rows beyond the rank: X u
  }
  for (int i = 0; i < k; ++i) x[ws.perm[i]] = u[i];
  for (int i = k; i < m; ++i) x[ws.perm[i]] = ws.s[i];
}

namespace {

// Q's entries bit for bit those of `kept` (+0 and -0 differ, so that a reused factor is the factor Q would get)
bool sameBits(const Ref<const MatX>& Q, const MatX& kept) {
  if (Q.rows() != kept.rows() || Q.cols() != kept.cols()) return false;
  for (Eigen::Index c = 0; c < Q.cols(); ++c)
    if (std::memcmp(Q.col(c).data(), kept.col(c).data(), sizeof(double) * static_cast<std::size_t>(Q.rows())) != 0)
      return false;
  return true;
}

}  // namespace

bool minNormPsdSolve(const Ref<const MatX>& Q, const Ref<const VecX>& r, double lowTolerance, double highTolerance,
                     MinNormPsdWorkspace& ws, Ref<VecX> x) {
  const bool reuse = ws.kept && ws.keptLow == lowTolerance && ws.keptHigh == highTolerance && sameBits(Q, ws.keptQ);
  if (!reuse) {
    if (!minNormPsdFactor(Q, lowTolerance, highTolerance, ws)) return false;
    ws.keptQ = Q;
    ws.keptLow = lowTolerance;
    ws.keptHigh = highTolerance;
    ws.kept = true;
  }
  minNormPsdApply(ws, r, x);
  return x.head(ws.m).allFinite();
}

}  // namespace contact
}  // namespace rigidiff
