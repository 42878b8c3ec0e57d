// Derivatives of the standardised boxed-LCP solution (see rigidiff/contact/lcp_derivatives.hpp). Q^+ is
// applied through the factors of contact/pseudo_inverse.hpp, read off the decomposition the solve left:
// the same kernels the constrained step's derivatives use on each island's workspace.
#include "rigidiff/contact/lcp_derivatives.hpp"

#include "rigidiff/contact/pseudo_inverse.hpp"

namespace rigidiff {
namespace contact {

namespace {

// y -> E y on the bounded rows and y on the clamped rows, scattered into out (dim n, zero elsewhere)
void scatterClampedAndBounded(const BoxedLcpWorkspace& ws, const Ref<const VecX>& y, Ref<VecX> out) {
  out.setZero();
  for (std::size_t a = 0; a < ws.clamped.size(); ++a) out[ws.clamped[a]] = y[a];
  for (std::size_t u = 0; u < ws.bounded.size(); ++u)
    if (ws.coupling[u] >= 0) out[ws.bounded[u]] = ws.factor[u] * y[ws.coupling[u]];
}

}  // namespace

void boxedLcpJacobianB(const BoxedLcp& lcp, const BoxedLcpWorkspace& ws, Ref<MatX> dx_db) {
  dx_db.setZero();
  const int m = static_cast<int>(ws.clamped.size());
  if (!ws.systemValid || m == 0) return;
  MatX U, V;
  pseudoInverseFactors(ws.clampingCod(), U, V);
  const MatX pinv = U * V.transpose();
  VecX column(lcp.n);
  for (int c = 0; c < m; ++c) {
    scatterClampedAndBounded(ws, -pinv.col(c), column);
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
  // g_e = g_C + E^T g_U: the cotangent of x_C through both the clamped and the bounded rows
  VecX ge(m), xc(m);
  for (int a = 0; a < m; ++a) {
    ge[a] = g[ws.clamped[a]];
    xc[a] = ws.x[ws.clamped[a]];
  }
  for (std::size_t u = 0; u < ws.bounded.size(); ++u)
    if (ws.coupling[u] >= 0) ge[ws.coupling[u]] += ws.factor[u] * g[ws.bounded[u]];
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
  scatterClampedAndBounded(ws, nullPart, p);
}

}  // namespace contact
}  // namespace rigidiff
