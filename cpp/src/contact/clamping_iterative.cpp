// Krylov solves of large clamping systems on the Delassus factors (see rigidiff/contact/clamping_iterative.hpp).
#include "rigidiff/contact/clamping_iterative.hpp"

#include <algorithm>
#include <cmath>

namespace rigidiff {
namespace contact {

namespace {

// the iterations stop at this residual relative to |r|, and accept up to kAcceptResidual (recomputed at the
// end: the recurrence's residual drifts from the true one)
constexpr double kTargetResidual = 1e-12;
constexpr double kAcceptResidual = 1e-10;
// a system that needs more iterations is left to the dense decomposition: on the bins of boxes the
// iterations that do not converge in this many (CGLS on an ill-conditioned sliding system) cost seconds
constexpr int kMaxIterations = 400;

// (m) clamped values -> the problem's rows (n): clamped rows, and the bounded rows following their normal
void spreadToRows(const BoxedLcpWorkspace& ws, const Ref<const VecX>& xc, bool withBounded, VecX& full) {
  const int m = static_cast<int>(ws.clamped.size());
  for (int a = 0; a < m; ++a) full[ws.clamped[a]] = xc[a];
  if (!withBounded) return;
  for (std::size_t u = 0; u < ws.bounded.size(); ++u)
    full[ws.bounded[u]] = ws.factor[static_cast<int>(u)] * xc[ws.coupling[u]];
}

// vel = K^T full over the rows of C (and U)
void rowsToVelocity(const DelassusFactors& f, const BoxedLcpWorkspace& ws, const VecX& full, bool withBounded,
                    VecX& vel) {
  vel.setZero(f.dim);
  auto add = [&](int row) {
    const double x = full[row];
    if (x != 0.0)
      for (int e = f.start[row]; e < f.start[row + 1]; ++e) vel[f.index[e]] += f.K[e] * x;
  };
  for (const int row : ws.clamped) add(row);
  if (withBounded)
    for (const int row : ws.bounded) add(row);
}

double rowDot(const DelassusFactors& f, int row, const VecX& vel) {
  double s = 0.0;
  for (int e = f.start[row]; e < f.start[row + 1]; ++e) s += f.J[e] * vel[f.index[e]];
  return s;
}

// out = Q v = [A (v on C, E v on U)]_C
void applyQ(const DelassusFactors& f, BoxedLcpWorkspace& ws, const VecX& v, VecX& out) {
  spreadToRows(ws, v, true, ws.itFull);
  rowsToVelocity(f, ws, ws.itFull, true, ws.itVel);
  for (std::size_t a = 0; a < ws.clamped.size(); ++a) out[static_cast<int>(a)] = rowDot(f, ws.clamped[a], ws.itVel);
}

// out = Q^T y = [A y]_C + E^T [A y]_U (y on C; A symmetric)
void applyQt(const DelassusFactors& f, BoxedLcpWorkspace& ws, const VecX& y, VecX& out) {
  spreadToRows(ws, y, false, ws.itFull);
  rowsToVelocity(f, ws, ws.itFull, false, ws.itVel);
  for (std::size_t a = 0; a < ws.clamped.size(); ++a) out[static_cast<int>(a)] = rowDot(f, ws.clamped[a], ws.itVel);
  for (std::size_t u = 0; u < ws.bounded.size(); ++u)
    out[ws.coupling[u]] += ws.factor[static_cast<int>(u)] * rowDot(f, ws.bounded[u], ws.itVel);
}

// conjugate gradients on Q = A_CC (positive semi-definite) from zero
bool conjugateGradients(const DelassusFactors& f, BoxedLcpWorkspace& ws, int m, double target, int limit) {
  auto x = ws.dx.head(m);
  x.setZero();
  ws.itRes = ws.r.head(m);
  ws.itDir = ws.itRes;
  double rr = ws.itRes.squaredNorm();
  for (int it = 0; it < limit && rr > target * target; ++it) {
    applyQ(f, ws, ws.itDir, ws.itProd);
    const double curvature = ws.itDir.dot(ws.itProd);
    if (!(curvature > 0.0)) return false;
    const double alpha = rr / curvature;
    x += alpha * ws.itDir;
    ws.itRes -= alpha * ws.itProd;
    const double next = ws.itRes.squaredNorm();
    ws.itDir = ws.itRes + (next / rr) * ws.itDir;
    rr = next;
  }
  return true;
}

// CGLS (conjugate gradients on Q^T Q x = Q^T r) from zero: the minimum-norm least-squares solution
bool leastSquaresGradients(const DelassusFactors& f, BoxedLcpWorkspace& ws, int m, double target, int limit) {
  auto x = ws.dx.head(m);
  x.setZero();
  ws.itRes = ws.r.head(m);
  applyQt(f, ws, ws.itRes, ws.itNormal);
  ws.itDir = ws.itNormal;
  double gamma = ws.itNormal.squaredNorm();
  // stops at a small residual (a consistent system) or a small normal residual Q^T res (the least-squares
  // solution of an inconsistent one, which is what the dense decomposition would give too)
  const double normalTarget = target * target * gamma;
  for (int it = 0; it < limit && ws.itRes.squaredNorm() > target * target && gamma > normalTarget; ++it) {
    applyQ(f, ws, ws.itDir, ws.itProd);
    const double pp = ws.itProd.squaredNorm();
    if (!(pp > 0.0)) return false;
    const double alpha = gamma / pp;
    x += alpha * ws.itDir;
    ws.itRes -= alpha * ws.itProd;
    applyQt(f, ws, ws.itRes, ws.itNormal);
    const double next = ws.itNormal.squaredNorm();
    ws.itDir = ws.itNormal + (next / gamma) * ws.itDir;
    gamma = next;
  }
  return true;
}

}  // namespace

bool solveClampingSystemIteratively(const BoxedLcp& lcp, BoxedLcpWorkspace& ws, bool symmetric) {
  const DelassusFactors& f = *lcp.factors;
  const int m = static_cast<int>(ws.clamped.size());
  ws.itFull.setZero(lcp.n);
  ws.itRes.resize(m);
  ws.itDir.resize(m);
  ws.itProd.resize(m);
  ws.itNormal.resize(m);
  const double norm = ws.r.head(m).norm();
  if (norm == 0.0) {
    ws.dx.head(m).setZero();
    return true;
  }
  const bool ran = symmetric ? conjugateGradients(f, ws, m, kTargetResidual * norm, kMaxIterations)
                             : leastSquaresGradients(f, ws, m, kTargetResidual * norm, kMaxIterations);
  if (!ran || !ws.dx.head(m).allFinite()) return false;
  applyQ(f, ws, ws.dx.head(m), ws.itProd);  // the true residual
  ws.itRes = ws.r.head(m) - ws.itProd;
  if (ws.itRes.norm() <= kAcceptResidual * norm) return true;
  if (symmetric) return false;
  // an inconsistent system: its least-squares solution, if the normal residual vanishes
  applyQt(f, ws, ws.itRes, ws.itNormal);
  const double normal = ws.itNormal.norm();
  applyQt(f, ws, ws.r.head(m), ws.itNormal);
  return normal <= kAcceptResidual * ws.itNormal.norm();
}

}  // namespace contact
}  // namespace rigidiff
