// Binding of the contact solver core (declared in rigidiff/bind/api.hpp).
#include <cmath>
#include <vector>

#include "rigidiff/algorithm/configuration.hpp"
#include "rigidiff/bind/api.hpp"
#include "rigidiff/bind/checks.hpp"
#include "rigidiff/contact/boxed_lcp.hpp"
#include "rigidiff/contact/lcp_derivatives.hpp"
#include "rigidiff/contact/lcp_projected_cg.hpp"
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
  // A arrives row-major (numpy's order): At(i, j) is the caller's A[j, i]
  Eigen::Map<const MatX> At(A, n, n);
  // relative to A's own largest entry: b may be far larger (a problem solved at unit scale divides both)
  const double scale = n ? At.cwiseAbs().maxCoeff() : 0.0;
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j)
      RD_CHECK_ARG(std::abs(At(i, j) - At(j, i)) <= 1e-9 * scale,
                   "A must be symmetric: A[" << i << ", " << j << "] = " << At(j, i) << " but A[" << j << ", " << i
                                             << "] = " << At(i, j));
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

namespace {

// J and K (n x dim, row-major) checked, A = J K^T checked as a boxed LCP, and each row kept on the whole blocks
// where its J or K is not zero
contact::DelassusFactorStorage checkedFactors(int n, int dim, const double* J, const double* K, int blocks,
                                              const int* blockStart, const double* b, const double* lo,
                                              const double* hi, const int* findex) {
  RD_CHECK_ARG(n >= 0 && dim >= 0 && blocks >= 0, "sizes must be >= 0");
  RD_CHECK_ARG(blockStart[0] == 0 && blockStart[blocks] == dim, "blocks must cover [0, " << dim << ")");
  for (int k = 0; k < blocks; ++k)
    RD_CHECK_ARG(blockStart[k + 1] > blockStart[k], "block " << k << " is empty");
  checkFinite(J, static_cast<long>(n) * dim, "J");
  checkFinite(K, static_cast<long>(n) * dim, "K");
  Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> Jm(J, n, dim), Km(K, n, dim);
  const MatX A = Jm * Km.transpose();
  checkBoxedLcp(n, A.data(), b, lo, hi, findex);
  contact::DelassusFactorStorage kept;
  kept.dim = dim;
  kept.blocks = blocks;
  kept.blockStart.assign(blockStart, blockStart + blocks + 1);
  kept.start.assign(1, 0);
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < blocks; ++k) {
      const int b0 = blockStart[k], len = blockStart[k + 1] - b0;
      if (Jm.row(i).segment(b0, len).isZero(0.0) && Km.row(i).segment(b0, len).isZero(0.0)) continue;
      for (int d = b0; d < b0 + len; ++d) {
        kept.index.push_back(d);
        kept.J.push_back(Jm(i, d));
        kept.K.push_back(Km(i, d));
      }
    }
    kept.start.push_back(static_cast<int>(kept.index.size()));
  }
  return kept;
}

}  // namespace

void solveBoxedLcpFromFactors(int n, int dim, const double* J, const double* K, int blocks, const int* blockStart,
                              const double* b, const double* lo, const double* hi, const int* findex,
                              const int* warm, int iterativeSize, double sweepsWork, double* x, double* w,
                              int* classes, int* status, double* dx_db) {
  RD_CHECK_ARG(iterativeSize >= 1 && sweepsWork >= 0.0, "iterative_size must be >= 1 and sweeps_work >= 0");
  contact::BoxedLcpOptions options;
  options.iterativeClampingSize = iterativeSize;
  options.sweepsFirstWork = sweepsWork;
  const contact::DelassusFactorStorage kept = checkedFactors(n, dim, J, K, blocks, blockStart, b, lo, hi, findex);
  const contact::DelassusFactors factors = kept.view();
  MatX buffer;
  contact::BoxedLcp lcp(n, nullptr, b, lo, hi, findex);
  lcp.factors = &factors;
  lcp.lazyA = &buffer;
  std::vector<contact::LcpClass> guess;
  if (warm)
    for (int i = 0; i < n; ++i) {
      RD_CHECK_ARG(warm[i] >= 0 && warm[i] <= 3, "warm_start[" << i << "] must be a class 0..3, got " << warm[i]);
      guess.push_back(static_cast<contact::LcpClass>(warm[i]));
    }
  contact::BoxedLcpWorkspace ws(n);
  const contact::BoxedLcpResult result = contact::solveBoxedLcp(lcp, ws, options, warm ? guess.data() : nullptr);
  Eigen::Map<VecX>(x, n) = ws.x;
  Eigen::Map<VecX>(w, n) = ws.w;
  for (int i = 0; i < n; ++i) classes[i] = static_cast<int>(ws.classes[i]);
  status[0] = static_cast<int>(result.solver);
  status[1] = ws.denseReady;
  status[2] = result.success;
  status[3] = result.standardised;
  MatX D(n, n);
  contact::boxedLcpJacobianB(lcp, ws, D);
  copyOut(D, dx_db, "dx_db");
}

int projectedCgFromFactors(int n, int dim, const double* J, const double* K, int blocks, const int* blockStart,
                           const double* b, const double* lo, const double* hi, const int* findex, double* x,
                           double* w, int* valid) {
  const contact::DelassusFactorStorage kept = checkedFactors(n, dim, J, K, blocks, blockStart, b, lo, hi, findex);
  const contact::DelassusFactors factors = kept.view();
  checkFinite(x, n, "x");
  MatX buffer;
  contact::BoxedLcp lcp(n, nullptr, b, lo, hi, findex);
  lcp.factors = &factors;
  lcp.lazyA = &buffer;
  contact::BoxedLcpWorkspace ws(n);
  ws.x = Eigen::Map<const VecX>(x, n);
  int products = 0;
  *valid = contact::solveBoxedLcpProjectedCg(lcp, ws, contact::BoxedLcpOptions(), 0, &products);
  Eigen::Map<VecX>(x, n) = ws.x;
  Eigen::Map<VecX>(w, n) = ws.w;
  return products;
}

}  // namespace bind
}  // namespace rigidiff
