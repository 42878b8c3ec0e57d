// Derivatives of the standardised boxed-LCP solution (see rigidiff/contact/lcp_derivatives.hpp). Q^+ is
// applied through the factors of contact/pseudo_inverse.hpp, read off the decomposition the solve left:
// the same kernels the constrained step's derivatives use on each island's workspace.
#include "rigidiff/contact/lcp_derivatives.hpp"

#include "rigidiff/contact/pseudo_inverse.hpp"

namespace rigidiff {
namespace contact {

void ClampingMap::assign(int n, const LcpClass* classes, const int* findex, const double* lo, const double* hi) {
  clamped.clear();
  coupledRows.clear();
  slot.assign(n, -1);
  follows.assign(n, -1);
  factor.assign(n, 0.0);
  for (int r = 0; r < n; ++r)
    if (classes[r] == LcpClass::Clamping) {
      slot[r] = size();
      clamped.push_back(r);
    }
  for (int r = 0; r < n; ++r) {
    const bool upper = classes[r] == LcpClass::UpperBound;
    if (!upper && classes[r] != LcpClass::LowerBound) continue;
    const int j = findex[r];
    if (j < 0 || slot[j] < 0) continue;  // a fixed bound, or one scaled by a row that is not clamped
    follows[r] = slot[j];
    factor[r] = upper ? hi[r] : lo[r];
    coupledRows.push_back(r);
  }
}

void ClampingMap::assign(int n, const BoxedLcpWorkspace& ws) {
  clamped.assign(ws.clamped.begin(), ws.clamped.end());
  coupledRows.clear();
  slot.assign(n, -1);
  follows.assign(n, -1);
  factor.assign(n, 0.0);
  for (int a = 0; a < size(); ++a) slot[clamped[a]] = a;
  for (std::size_t u = 0; u < ws.bounded.size(); ++u) {
    if (ws.coupling[u] < 0) continue;  // a fixed bound
    const int r = ws.bounded[u];
    follows[r] = ws.coupling[u];
    factor[r] = ws.factor[static_cast<int>(u)];
    coupledRows.push_back(r);
  }
}

void ClampingMap::scatter(const Ref<const VecX>& y, Ref<VecX> out) const {
  out.setZero();
  for (int a = 0; a < size(); ++a) out[clamped[a]] = y[a];
  for (int r : coupledRows) out[r] = factor[r] * y[follows[r]];
}

void boxedLcpJacobianB(const BoxedLcp& lcp, const BoxedLcpWorkspace& ws, Ref<MatX> dx_db) {
  dx_db.setZero();
  const int m = static_cast<int>(ws.clamped.size());
  if (!ws.systemValid || m == 0) return;
  MatX U, V;
  pseudoInverseFactors(ws.clampingCod(), U, V);
  const MatX pinv = U * V.transpose();
  ClampingMap P;
  P.assign(lcp.n, ws);
  VecX column(lcp.n);
  for (int c = 0; c < m; ++c) {
    P.scatter(-pinv.col(c), column);
    dx_db.col(ws.clamped[c]) = column;
  }
}

void boxedLcpVjp(const BoxedLcp& lcp, const BoxedLcpWorkspace& ws, const Ref<const VecX>& g, Ref<VecX> grad_b,
                 Ref<VecX> lambda, Ref<VecX> mu, Ref<VecX> p) {
  grad_b.setZero();
  lambda.setZero();
  mu.setZero();
  p.setZero();
  const int m = static_cast<int>(ws.clamped.size());
  if (!ws.systemValid || m == 0) return;
  // g_e = P^T g = g_C + E^T g_U: the cotangent of x_C through both the clamped and the bounded rows
  ClampingMap P;
  P.assign(lcp.n, ws);
  VecX ge(m), xc(m);
  P.gather([&](int r) { return g[r]; }, [&](int a) -> double& { return ge[a]; });
  for (int a = 0; a < m; ++a) xc[a] = ws.x[ws.clamped[a]];
  const Eigen::CompleteOrthogonalDecomposition<MatX>& cod = ws.clampingCod();
  VecX lam(m), muC(m), scratch;
  pseudoInverseTransposeProduct(cod, ge, scratch, lam);
  // pseudo-inverse correction: (I - Q^+ Q) g_e and Q^+T x_C (both vanish when Q is invertible)
  const VecX nullPart = ge - cod.solve(ws.Q.topLeftCorner(m, m) * ge);
  pseudoInverseTransposeProduct(cod, xc, scratch, muC);
  for (int a = 0; a < m; ++a) {
    lambda[ws.clamped[a]] = lam[a];
    grad_b[ws.clamped[a]] = -lam[a];
    mu[ws.clamped[a]] = muC[a];
  }
  P.scatter(nullPart, p);
}

}  // namespace contact
}  // namespace rigidiff
