// Classification and standardisation of a boxed-LCP solution (see rigidiff/contact/lcp_classification.hpp).
#include "rigidiff/contact/lcp_classification.hpp"

#include "rigidiff/contact/clamping_iterative.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace rigidiff {
namespace contact {

namespace {

// a friction impulse further than this fraction of its interval from a bound is inside it (round-off of
// the clamping-system solve is far below; the gap that tx tolerates is far above for a light body)
constexpr double kStrictlyInside = 1e-6;

// class of an impulse x against the bounds [l, u] (impulse threshold tx)
LcpClass boundClass(double x, double l, double u, double tx) {
  if (x >= u - tx) return std::abs(u) > tx ? LcpClass::UpperBound : LcpClass::Separating;
  if (x <= l + tx) return std::abs(l) > tx ? LcpClass::LowerBound : LcpClass::Separating;
  return LcpClass::Clamping;
}

// does the row move any velocity? (column of A not negligible)
bool hasEffect(const BoxedLcp& lcp, BoxedLcpWorkspace& ws, int i, double scale) {
  if (std::abs(delassusDiagonal(lcp, i)) > 1e-12 * scale) return true;  // |A_ii| <= ||A e_i||
  return delassusColumnSquaredNorm(lcp, ws, i) > (1e-12 * scale) * (1e-12 * scale);
}

}  // namespace

void classifyBoxedLcp(const BoxedLcp& lcp, BoxedLcpWorkspace& ws, const BoxedLcpOptions& options,
                      bool frictionDropped) {
  const int n = lcp.n;
  if (n == 0) return;
  const double tx = options.tolerance * (1.0 + ws.x.cwiseAbs().maxCoeff());
  const double tw = options.tolerance * (1.0 + lcp.b.cwiseAbs().maxCoeff());
  const double scale = delassusDiagonalScale(lcp);
  // normal (and other unscaled) rows first: friction rows depend on their normal's class
  for (int i = 0; i < n; ++i) {
    if (lcp.normalOf(i) >= 0) continue;
    const LcpClass c = boundClass(ws.x[i], lcp.lo[i], lcp.hi[i], tx);  // the cheap test first
    ws.classes[i] = c != LcpClass::Separating && hasEffect(lcp, ws, i, scale) ? c : LcpClass::Separating;
  }
  for (int i = 0; i < n; ++i) {
    const int j = lcp.normalOf(i);
    if (j < 0) continue;
    LcpClass c = LcpClass::Separating;
    const double l = lcp.lo[i] * ws.x[j], u = lcp.hi[i] * ws.x[j];
    if (!frictionDropped && ws.classes[j] == LcpClass::Clamping && u - l > tx && hasEffect(lcp, ws, i, scale)) {
      const bool zeroInside = l < -tx && u > tx;
      c = (zeroInside && std::abs(ws.x[i]) <= tx) ? LcpClass::Clamping : boundClass(ws.x[i], l, u, tx);
      // a friction impulse within tx of its bound but clearly inside it, on a row that does not slide
      // (w = 0), sticks: tx is absolute, a few percent of a light body's impulses, and calling such a
      // row "at the bound" would differentiate a sticking contact as a sliding one
      const bool atBound = c == LcpClass::UpperBound || c == LcpClass::LowerBound;
      if (atBound && std::abs(ws.w[i]) <= tw) {
        const double inside = c == LcpClass::UpperBound ? u - ws.x[i] : ws.x[i] - l;
        if (inside > kStrictlyInside * (u - l)) c = LcpClass::Clamping;
      }
    }
    ws.classes[i] = c;
  }
}

namespace {

// N(i0.., j0..) += g h^T (lengths ng, nh). Runs of whole free bodies (multiples of 6) go by fixed 6 x 6 tiles,
// without the general kernel's set-up: each entry still adds the one product g_i h_j, so the bits are the same.
template <typename Block>
void addOuterProduct(Block& N, int i0, int j0, const double* g, int ng, const double* h, int nh) {
  if (ng % 6 != 0 || nh % 6 != 0) {
    N.block(i0, j0, ng, nh).noalias() += Eigen::Map<const VecX>(g, ng) * Eigen::Map<const VecX>(h, nh).transpose();
    return;
  }
  for (int a = 0; a < ng; a += 6)
    for (int b = 0; b < nh; b += 6)
      N.template block<6, 6>(i0 + a, j0 + b).noalias() +=
          Eigen::Map<const Vec6>(g + a) * Eigen::Map<const Vec6>(h + b).transpose();
}

// Records the clamped rows of ws and their entries of G (and dim, low, high) as those the factor in ws.rootPsd
// was made from.
void keepRootEntries(const DelassusRoot& root, BoxedLcpWorkspace& ws, double low, double high) {
  ws.rootKeptDim = root.dim;
  ws.rootKeptLow = low;
  ws.rootKeptHigh = high;
  ws.rootKeptRows = ws.clamped;
  ws.rootKeptCount.clear();
  ws.rootKeptIndex.clear();
  ws.rootKeptG.clear();
  for (const int row : ws.clamped) {
    const int e0 = root.start[row], e1 = root.start[row + 1];
    ws.rootKeptCount.push_back(e1 - e0);
    ws.rootKeptIndex.insert(ws.rootKeptIndex.end(), root.index + e0, root.index + e1);
    ws.rootKeptG.insert(ws.rootKeptG.end(), root.G + e0, root.G + e1);
  }
}

// Are they the same now, to the bit? Then N = G_C^T G_C would come out the same bits.
bool sameRootEntries(const DelassusRoot& root, const BoxedLcpWorkspace& ws, double low, double high) {
  if (ws.rootKeptDim != root.dim || ws.rootKeptLow != low || ws.rootKeptHigh != high ||
      ws.rootKeptRows != ws.clamped)
    return false;
  std::size_t at = 0;
  for (std::size_t a = 0; a < ws.clamped.size(); ++a) {
    const int row = ws.clamped[a], e0 = root.start[row], count = root.start[row + 1] - e0;
    // the values bit for bit (+0 and -0 differ), as the kept factor is reused only for the same N to the bit
    if (count != ws.rootKeptCount[a] ||
        !std::equal(root.index + e0, root.index + e0 + count, ws.rootKeptIndex.data() + at) ||
        std::memcmp(root.G + e0, ws.rootKeptG.data() + at, sizeof(double) * static_cast<std::size_t>(count)) != 0)
      return false;
    at += count;
  }
  return true;
}

// x_C = A_CC^+ r = G_C N^+ N^+ G_C^T r with N = G_C^T G_C (DelassusRoot), into ws.dx: the pivoted Cholesky
// of N costs dim k^2 instead of m k^2 (k the rank, m the clamped rows). False where N's rank is not
// clear-cut; the caller then solves with A_CC.
bool solveThroughRoot(const BoxedLcp& lcp, BoxedLcpWorkspace& ws, double low, double high) {
  const DelassusRoot& root = *lcp.root;
  const int n = root.dim, m = static_cast<int>(ws.clamped.size());
  if (ws.rootGram.rows() < n) {  // grows only: islands of different sizes share the buffers
    ws.rootGram.resize(n, n);
    ws.rootPsd.resize(n);
    ws.rootY.resize(n);
  }
  auto N = ws.rootGram.topLeftCorner(n, n);
  auto y = ws.rootY.head(n);
  y.setZero();
  for (int a = 0; a < m; ++a) {
    const int row = ws.clamped[a];
    for (int e = root.start[row]; e < root.start[row + 1]; ++e) y[root.index[e]] += root.G[e] * ws.r[a];
  }
  // the factor of this call, or of an earlier one from the same bits (a body at rest), is still in rootPsd
  const bool factored = (ws.rootFactored && ws.rootClamped == ws.clamped) ||
                        (ws.rootKeptDim >= 0 && sameRootEntries(root, ws, low, high));
  if (factored) {
    ws.rootFactored = true;
    ws.rootClamped = ws.clamped;
  } else {
    N.setZero();
    ws.rootKeptDim = -1;  // rootPsd is about to change
  }
  for (int a = 0; a < m && !factored; ++a) {
    const int row = ws.clamped[a], e0 = root.start[row], e1 = root.start[row + 1];
    // g g^T by runs of consecutive coordinates (a row's entries on one tree are consecutive): each block is
    // an outer product, and every entry of N still sums its rows' products in the order of the rows
    for (int p = e0; p < e1;) {
      int pe = p + 1;
      while (pe < e1 && root.index[pe] == root.index[pe - 1] + 1) ++pe;
      for (int c = e0; c < e1;) {
        int ce = c + 1;
        while (ce < e1 && root.index[ce] == root.index[ce - 1] + 1) ++ce;
        addOuterProduct(N, root.index[p], root.index[c], root.G + p, pe - p, root.G + c, ce - c);
        c = ce;
      }
      p = pe;
    }
  }
  if (!factored) {
    ws.rootFactored = minNormPsdFactor(N, low, high, ws.rootPsd);
    if (!ws.rootFactored) return false;
    ws.rootClamped = ws.clamped;
    keepRootEntries(root, ws, low, high);
  }
  minNormPsdApply(ws.rootPsd, y, y);
  minNormPsdApply(ws.rootPsd, y, y);
  for (int a = 0; a < m; ++a) {
    const int row = ws.clamped[a];
    double xa = 0.0;
    for (int e = root.start[row]; e < root.start[row + 1]; ++e) xa += root.G[e] * y[root.index[e]];
    ws.dx[a] = xa;
  }
  return ws.dx.head(m).allFinite();
}

}  // namespace

bool solveClampingSystem(const BoxedLcp& lcp, const LcpClass* classes, BoxedLcpWorkspace& ws,
                         const BoxedLcpOptions& options, bool noCostlyDense) {
  const int n = lcp.n;
  ws.resize(n);
  ws.clamped.clear();
  ws.bounded.clear();
  ws.coupling.clear();
  std::fill(ws.slot.begin(), ws.slot.end(), -1);
  // a friction row counts only if its normal row is clamping
  auto normalClamps = [&](int i) {
    const int j = lcp.normalOf(i);
    return j < 0 || classes[j] == LcpClass::Clamping;
  };
  for (int i = 0; i < n; ++i) {
    if (classes[i] != LcpClass::Clamping || !normalClamps(i)) continue;
    ws.slot[i] = static_cast<int>(ws.clamped.size());
    ws.clamped.push_back(i);
  }
  for (int i = 0; i < n; ++i) {
    const bool upper = classes[i] == LcpClass::UpperBound;
    if ((!upper && classes[i] != LcpClass::LowerBound) || !normalClamps(i)) continue;
    const int j = lcp.normalOf(i);
    const double bound = upper ? lcp.hi[i] : lcp.lo[i];
    if (!std::isfinite(bound)) return false;  // an infinite bound cannot be active
    ws.factor[static_cast<int>(ws.bounded.size())] = bound;
    ws.bounded.push_back(i);
    ws.coupling.push_back(j >= 0 ? ws.slot[j] : -1);
  }
  const int m = static_cast<int>(ws.clamped.size()), k = static_cast<int>(ws.bounded.size());

  // Q = A_CC + A_CU E, r = -(b_C + A_CU c_U)
  for (int a = 0; a < m; ++a) ws.r[a] = -lcp.b[ws.clamped[a]];
  // Without friction rows coupled to clamped normals Q = A_CC is symmetric positive semi-definite. With more
  // clamped rows than coordinates of a DelassusRoot, the solve works in the coordinates and does not read Q:
  // a lazy A whose factors the workspace keeps then leaves Q to be formed if the derivatives ask for it
  // (forming it dominated the step of a resting pile)
  const bool symmetric = std::all_of(ws.coupling.begin(), ws.coupling.end(), [](int c) { return c < 0; });
  const bool rootSolve = symmetric && lcp.root && m > lcp.root->dim;
  const bool keptFactors = lcp.factors && ws.factorStorage.J.data() == lcp.factors->J && !ws.factorStorage.J.empty();
  // a system whose dense factorisation would be large is solved by Krylov iterations on the factors (friction
  // rows only among the bounded ones: a fixed bound moves r, which the dense path handles)
  const bool fixedBound = std::any_of(ws.coupling.begin(), ws.coupling.end(), [](int c) { return c < 0; });
  const int denseSize = rootSolve ? lcp.root->dim : m;
  // noCostlyDense: Q itself is not decomposed densely past a quarter of the Krylov size (seconds on a pile);
  // conjugate gradients solve such a symmetric system, and the unsymmetric one of sliding rows is left
  // unsolved (CGLS seldom converges within its limit on a landing pile). The solve through a root stays.
  const bool qTooLarge = noCostlyDense && m >= options.iterativeClampingSize / 4;
  if (qTooLarge && !rootSolve && (!symmetric || fixedBound || !lcp.factors)) return false;
  const bool iterative = lcp.factors && !fixedBound &&
                         (denseSize >= options.iterativeClampingSize || (qTooLarge && !rootSolve));
  const bool deferQ = keptFactors && ((rootSolve && k == 0 && lcp.lazyA && !ws.denseReady) || iterative);
  ws.deferClampingSystem(deferQ ? n : -1);
  if (!deferQ) ws.reserveClampingSystem(m);
  if (!deferQ && lcp.lazyA && !ws.denseReady) {
    lazyClampingSystem(lcp, ws);
  } else if (!deferQ) {
    if (m > 0 && ws.clamped[m - 1] == m - 1) {  // the clamped rows are the leading rows (a resting island)
      ws.Q.topLeftCorner(m, m) = lcp.A.topLeftCorner(m, m);
    } else {
      for (int c = 0; c < m; ++c)  // column by column: both are column-major
        for (int a = 0; a < m; ++a) ws.Q(a, c) = lcp.A(ws.clamped[a], ws.clamped[c]);
    }
    for (int u = 0; u < k; ++u) {
      const int row = ws.bounded[u], c = ws.coupling[u];
      for (int a = 0; a < m; ++a) {
        const double v = lcp.A(ws.clamped[a], row) * ws.factor[u];
        if (c >= 0)
          ws.Q(a, c) += v;
        else
          ws.r[a] -= v;
      }
    }
  }
  // minimum-norm least squares x_C, then x_U = E x_C + c_U, x_S = 0. Without friction rows coupled to
  // clamped normals Q = A_CC is symmetric positive semi-definite: pivoted Cholesky gives the same x_C at
  // a fraction of the cost when its rank is clear-cut (pivots 100x away from the rank threshold on both
  // sides); otherwise, and for the unsymmetric Q of sliding rows, the complete orthogonal decomposition.
  ws.dw.setZero();
  ws.clampingSystemChanged(options.rankThreshold);
  if (m > 0) {
    const double low = 1e-2 * options.rankThreshold, high = 1e2 * options.rankThreshold;
    const bool solved = (iterative && solveClampingSystemIteratively(lcp, ws, symmetric)) ||
                        (rootSolve && solveThroughRoot(lcp, ws, low, high));
    if (!solved && qTooLarge) return false;
    if (!solved && deferQ) ws.clampingSystem();  // the solve needs Q after all
    if (!solved && (!symmetric || !minNormPsdSolve(ws.Q.topLeftCorner(m, m), ws.r.head(m), low, high, ws.psd,
                                                   ws.dx.head(m)))) {
      ws.decomposeClampingSystem(options.rankThreshold);
      ws.dx.head(m) = ws.clampingCod().solve(ws.r.head(m));
    }
    for (int a = 0; a < m; ++a) ws.dw[ws.clamped[a]] = ws.dx[a];
  }
  for (int u = 0; u < k; ++u) {
    const int c = ws.coupling[u];
    ws.dw[ws.bounded[u]] = c >= 0 ? ws.factor[u] * ws.dx[c] : ws.factor[u];
  }
  if (!ws.dw.allFinite()) return false;
  ws.x = ws.dw;
  delassusVelocity(lcp, ws, ws.x, ws.w);
  return ws.w.allFinite();
}

}  // namespace contact
}  // namespace rigidiff
