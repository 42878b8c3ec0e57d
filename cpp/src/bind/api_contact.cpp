// Binding of the contact solver core (declared in rigidiff/bind/api.hpp).
#include <cmath>
#include <vector>

#include "rigidiff/algorithm/configuration.hpp"
#include "rigidiff/bind/api.hpp"
#include "rigidiff/bind/checks.hpp"
#include "rigidiff/contact/boxed_lcp.hpp"
#include "rigidiff/contact/lcp_derivatives.hpp"
#include "rigidiff/macros.hpp"

namespace rigidiff {
namespace bind {

namespace {

// sizes, symmetry, finiteness, bounds and friction indices of a boxed LCP
void checkBoxedLcp(int n, const double* A, const double* b, const double* lo, const double* hi, const int* findex) {
  RD_CHECK_ARG(n >= 0, "n must be >= 0, got " << n);
  const long nn = static_cast<long>(n) * n;
  checkFinite(A, nn, "A");
  checkFinite(b, n, "b");
  Eigen::Map<const MatX> Am(A, n, n);
  const double scale = n ? Am.cwiseAbs().maxCoeff() : 0.0;
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j)
      RD_CHECK_ARG(std::abs(Am(i, j) - Am(j, i)) <= 1e-9 * (1.0 + scale),
                   "A must be symmetric: A[" << i << ", " << j << "] = " << Am(i, j) << " but A[" << j << ", " << i
                                             << "] = " << Am(j, i));
  for (int i = 0; i < n; ++i) {
    RD_CHECK_ARG(!std::isnan(lo[i]) && lo[i] <= 0.0, "lo[" << i << "] must be <= 0 (x = 0 feasible), got " << lo[i]);
    RD_CHECK_ARG(!std::isnan(hi[i]) && hi[i] >= 0.0, "hi[" << i << "] must be >= 0 (x = 0 feasible), got " << hi[i]);
  }
  if (!findex) return;
  for (int i = 0; i < n; ++i) {
    const int j = findex[i];
    if (j < 0) {
      RD_CHECK_ARG(j == -1, "findex[" << i << "] must be -1 or a row index, got " << j);
      continue;
    }
    RD_CHECK_ARG(j < n && j != i, "findex[" << i << "] = " << j << " is not another row in [0, " << n << ")");
    RD_CHECK_ARG(findex[j] == -1, "findex[" << i << "] = " << j << " must point at a normal row (findex[" << j
                                            << "] = -1), got findex[" << j << "] = " << findex[j]);
    RD_CHECK_ARG(lo[j] == 0.0, "findex[" << i << "] = " << j << " must point at a normal row with lo = 0, got lo["
                                          << j << "] = " << lo[j]);
    RD_CHECK_ARG(std::isfinite(lo[i]) && std::isfinite(hi[i]),
                 "friction row " << i << " needs finite lo and hi (friction coefficients), got lo = " << lo[i]
                                 << ", hi = " << hi[i]);
  }
}

}  // namespace

void solveBoxedLcp(int n, const double* A, const double* b, const double* lo, const double* hi, const int* findex,
                   const int* warm, double tolerance, double* x, double* w, int* classes, int* status, double* dx_db,
                   const double* g, double* grad_b, double* grad_A) {
  checkBoxedLcp(n, A, b, lo, hi, findex);
  RD_CHECK_ARG(std::isfinite(tolerance) && tolerance > 0.0, "tolerance must be > 0, got " << tolerance);
  std::vector<contact::LcpClass> guess;
  if (warm) {
    for (int i = 0; i < n; ++i)
      RD_CHECK_ARG(warm[i] >= 0 && warm[i] <= 3, "warm_start[" << i << "] must be a class 0..3, got " << warm[i]);
    for (int i = 0; i < n; ++i) guess.push_back(static_cast<contact::LcpClass>(warm[i]));
  }
  if (g) checkFinite(g, n, "g");

  contact::BoxedLcp lcp(n, A, b, lo, hi, findex);
  contact::BoxedLcpWorkspace ws(n);
  contact::BoxedLcpOptions options;
  options.tolerance = tolerance;
  const contact::BoxedLcpResult result = contact::solveBoxedLcp(lcp, ws, options, warm ? guess.data() : nullptr);

  Eigen::Map<VecX>(x, n) = ws.x;
  Eigen::Map<VecX>(w, n) = ws.w;
  for (int i = 0; i < n; ++i) classes[i] = static_cast<int>(ws.classes[i]);
  status[0] = static_cast<int>(result.solver);
  status[1] = result.frictionDropped;
  status[2] = result.success;
  status[3] = result.standardised;

  if (dx_db) {
    MatX J(n, n);
    contact::boxedLcpJacobianB(lcp, ws, J);
    copyOut(J, dx_db, "dx_db");
  }
  if (g) {
    VecX lambda(n), mu(n), p(n);
    contact::boxedLcpVjp(lcp, ws, Eigen::Map<const VecX>(g, n), Eigen::Map<VecX>(grad_b, n), lambda, mu, p);
    copyOut(-lambda * ws.x.transpose() + mu * p.transpose(), grad_A, "grad_A");
  }
}

}  // namespace bind
}  // namespace rigidiff
