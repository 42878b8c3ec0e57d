// A's entries from its factors A = J K^T (boxed_lcp.hpp: BoxedLcp::lazyA): a warm-started solve of a
// large island reads only the rows of its clamped and bounded rows, each in the time of the rows that
// share a coordinate with it, instead of forming the n x n matrix.
#include <algorithm>
#include <cmath>
#include <limits>
#include <new>

#include "rigidiff/contact/boxed_lcp.hpp"

namespace rigidiff {
namespace contact {

namespace {

bool readsFactors(const BoxedLcp& lcp, const BoxedLcpWorkspace& ws) { return lcp.lazyA && !ws.denseReady; }

// J by coordinates: the rows touching each coordinate and their entries (rows ascending)
void buildDelassusColumns(const BoxedLcp& lcp, BoxedLcpWorkspace& ws) {
  if (ws.columnsReady) return;
  const DelassusFactors& f = *lcp.factors;
  const int n = lcp.n, nnz = f.start[n];
  ws.colStart.assign(f.dim + 1, 0);
  for (int e = 0; e < nnz; ++e) ++ws.colStart[f.index[e] + 1];
  for (int d = 0; d < f.dim; ++d) ws.colStart[d + 1] += ws.colStart[d];
  ws.colRow.resize(nnz);
  ws.colJ.resize(nnz);
  ws.touched.assign(ws.colStart.begin(), ws.colStart.end() - 1);  // fill positions, as scratch
  for (int i = 0; i < n; ++i)
    for (int e = f.start[i]; e < f.start[i + 1]; ++e) {
      const int p = ws.touched[f.index[e]]++;
      ws.colRow[p] = i;
      ws.colJ[p] = f.J[e];
    }
  ws.touched.clear();
  if (ws.rowAcc.size() < n) {
    ws.rowAcc.setZero(n);
    ws.isTouched.assign(n, 0);
  }
  ws.columnsReady = true;
}

}  // namespace

double delassusDiagonal(const BoxedLcp& lcp, int i) {
  if (!lcp.lazyA) return lcp.A(i, i);
  const DelassusFactors& f = *lcp.factors;
  double a = 0.0;
  for (int e = f.start[i]; e < f.start[i + 1]; ++e) a += f.J[e] * f.K[e];
  return a;
}

double delassusDiagonalScale(const BoxedLcp& lcp) {
  double d = 0.0;
  for (int i = 0; i < lcp.n; ++i) d = std::max(d, std::abs(delassusDiagonal(lcp, i)));
  return std::max(d, std::numeric_limits<double>::min());
}

void lazyClampingSystem(const BoxedLcp& lcp, BoxedLcpWorkspace& ws) {
  const DelassusFactors& f = *lcp.factors;
  const int m = static_cast<int>(ws.clamped.size()), k = static_cast<int>(ws.bounded.size());
  ws.reserveClampingSystem(m);
  auto Q = ws.Q.topLeftCorner(m, m);
  Q.setZero();
  if (!f.blockStart) {  // by rows of A
    for (int c = 0; c < m; ++c) {
      delassusRow(lcp, ws, ws.clamped[c]);
      for (const int t : ws.touched)
        if (ws.slot[t] >= 0) Q(ws.slot[t], c) = ws.rowAcc[t];
      clearDelassusRow(ws);
    }
    for (int u = 0; u < k; ++u) {  // A_CU by the bounded row (A is symmetric)
      const int c = ws.coupling[u];
      delassusRow(lcp, ws, ws.bounded[u]);
      for (const int t : ws.touched) {
        const int a = ws.slot[t];
        if (a < 0) continue;
        const double v = ws.rowAcc[t] * ws.factor[u];
        if (c >= 0)
          Q(a, c) += v;
        else
          ws.r[a] -= v;
      }
      clearDelassusRow(ws);
    }
    return;
  }
  // the rows of C and U in each block (item: a >= 0 clamped slot, -1 - u bounded), with their entries
  const int nb = f.blocks;
  auto forRuns = [&](int row, auto&& g) {
    for (int e = f.start[row]; e < f.start[row + 1];) {
      const int b = static_cast<int>(std::upper_bound(f.blockStart, f.blockStart + nb + 1, f.index[e]) - f.blockStart) - 1;
      g(b, e);
      e += f.blockStart[b + 1] - f.blockStart[b];
    }
  };
  ws.blockFill.assign(nb + 1, 0);
  auto count = [&](int b, int) { ++ws.blockFill[b + 1]; };
  for (int a = 0; a < m; ++a) forRuns(ws.clamped[a], count);
  for (int u = 0; u < k; ++u) forRuns(ws.bounded[u], count);
  for (int b = 0; b < nb; ++b) ws.blockFill[b + 1] += ws.blockFill[b];
  const int items = ws.blockFill[nb];
  ws.blockItem.resize(items);
  ws.blockEntry.resize(items);
  for (int a = 0; a < m + k; ++a)
    forRuns(a < m ? ws.clamped[a] : ws.bounded[a - m], [&](int b, int e) {
      const int p = ws.blockFill[b]++;
      ws.blockItem[p] = a < m ? a : -1 - (a - m);
      ws.blockEntry[p] = e;
    });
  // blockFill[b] is now the end of block b's items
  for (int b = 0, begin = 0; b < nb; begin = ws.blockFill[b], ++b) {
    const int nr = ws.blockFill[b] - begin, n = f.blockStart[b + 1] - f.blockStart[b];
    if (nr == 0) continue;
    ws.gatherJ.resize(std::max<std::size_t>(ws.gatherJ.size(), static_cast<std::size_t>(n) * nr));
    ws.gatherK.resize(std::max<std::size_t>(ws.gatherK.size(), static_cast<std::size_t>(n) * nr));
    ws.blockProduct.resize(std::max<std::size_t>(ws.blockProduct.size(), static_cast<std::size_t>(nr) * nr));
    Eigen::Map<MatX> Jb(ws.gatherJ.data(), n, nr), Kb(ws.gatherK.data(), n, nr), B(ws.blockProduct.data(), nr, nr);
    for (int i = 0; i < nr; ++i) {
      Jb.col(i) = Eigen::Map<const VecX>(f.J + ws.blockEntry[begin + i], n);
      Kb.col(i) = Eigen::Map<const VecX>(f.K + ws.blockEntry[begin + i], n);
    }
    B.noalias() = Jb.transpose() * Kb;  // B(i, j) = j_i . k_j on this block
    for (int i = 0; i < nr; ++i) {
      const int a = ws.blockItem[begin + i];
      for (int j = 0; j <= i; ++j) {
        const int c = ws.blockItem[begin + j];
        const double v = B(i, j);  // the lower triangle for both (i, j) and (j, i): A stays symmetric
        if (a >= 0 && c >= 0) {
          Q(a, c) += v;
          if (a != c) Q(c, a) += v;
          continue;
        }
        if (a < 0 && c < 0) continue;  // two bounded rows do not meet in Q
        const int row = a >= 0 ? a : c, u = a >= 0 ? -1 - c : -1 - a;
        const int cp = ws.coupling[u];
        if (cp >= 0)
          Q(row, cp) += v * ws.factor[u];
        else
          ws.r[row] -= v * ws.factor[u];
      }
    }
  }
}

void delassusRow(const BoxedLcp& lcp, BoxedLcpWorkspace& ws, int i) {
  buildDelassusColumns(lcp, ws);
  const DelassusFactors& f = *lcp.factors;
  for (int e = f.start[i]; e < f.start[i + 1]; ++e) {
    const int d = f.index[e];
    const double k = f.K[e];
    for (int p = ws.colStart[d]; p < ws.colStart[d + 1]; ++p) {
      const int c = ws.colRow[p];
      if (!ws.isTouched[c]) {
        ws.isTouched[c] = 1;
        ws.touched.push_back(c);
      }
      ws.rowAcc[c] += ws.colJ[p] * k;  // A_ci = j_c . k_i
    }
  }
}

void clearDelassusRow(BoxedLcpWorkspace& ws) {
  for (const int c : ws.touched) {
    ws.rowAcc[c] = 0.0;
    ws.isTouched[c] = 0;
  }
  ws.touched.clear();
}

double delassusColumnSquaredNorm(const BoxedLcp& lcp, BoxedLcpWorkspace& ws, int i) {
  if (!readsFactors(lcp, ws)) return lcp.A.col(i).squaredNorm();
  delassusRow(lcp, ws, i);
  double s = 0.0;
  for (const int c : ws.touched) s += ws.rowAcc[c] * ws.rowAcc[c];
  clearDelassusRow(ws);
  return s;
}

void ensureDenseDelassus(const BoxedLcp& lcp, BoxedLcpWorkspace& ws) {
  if (!readsFactors(lcp, ws)) return;
  const int n = lcp.n;
  MatX& A = *lcp.lazyA;
  A.setZero(n, n);
  new (&lcp.A) Eigen::Map<const MatX>(A.data(), n, n);  // the problem reads the formed block from now on
  for (int i = 0; i < n; ++i) {
    delassusRow(lcp, ws, i);
    for (const int c : ws.touched) A(c, i) = ws.rowAcc[c];
    clearDelassusRow(ws);
  }
  for (int i = 0; i < n; ++i)  // exactly symmetric, as the pivoting's factor assumes
    for (int c = i + 1; c < n; ++c) A(i, c) = A(c, i);
  ws.denseReady = true;
}

void delassusVelocity(const BoxedLcp& lcp, BoxedLcpWorkspace& ws, const Ref<const VecX>& x, Ref<VecX> w) {
  if (!readsFactors(lcp, ws)) {
    boxedLcpVelocity(lcp, x, w);
    return;
  }
  const DelassusFactors& f = *lcp.factors;
  ws.velocity2.setZero(f.dim);  // K^T x over the rows that push
  for (int i = 0; i < lcp.n; ++i)
    if (x[i] != 0.0)
      for (int e = f.start[i]; e < f.start[i + 1]; ++e) ws.velocity2[f.index[e]] += f.K[e] * x[i];
  for (int i = 0; i < lcp.n; ++i) {
    double wi = lcp.b[i];
    for (int e = f.start[i]; e < f.start[i + 1]; ++e) wi += f.J[e] * ws.velocity2[f.index[e]];
    w[i] = wi;
  }
}

}  // namespace contact
}  // namespace rigidiff
