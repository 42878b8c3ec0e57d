// Projected conjugate gradients (MPRGP) for the boxed LCP (see rigidiff/contact/lcp_projected_cg.hpp).
#include "rigidiff/contact/lcp_projected_cg.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rigidiff {
namespace contact {

namespace {

constexpr double kUnbounded = std::numeric_limits<double>::infinity();
// rounds that set the friction bounds from the normal impulses; a pile's rounds settle in a handful
constexpr int kMaxBoundRounds = 40;
// products with A over all rounds, as a multiple of sqrt(rows) (conjugate gradients on a well-posed island
// converge in a multiple of the square root of its condition number), at least kMinProducts. Over the landings
// of bins of 30 to 100 boxes and of heaps of 125 spheres, and the random islands of the tests, every run that
// answered did so within 160 sqrt(rows) products. On a heap's impact steps the others circle far from an
// answer: the friction bounds of the rounds (the normal impulses of redundant contacts jump between solutions
// from round to round) or the active set of one round's program. With 1000 sqrt(rows), such a step spent
// 10000-27000 products per run, up to four runs, before Gauss-Seidel answered it.
constexpr double kProductsPerSqrtRow = 300.0;
constexpr int kMinProducts = 600;
// the rounds' programs are solved to this fraction of the velocity tolerance, so that the bounds' update
// and the recurrence's drift leave the answer valid
constexpr double kInnerTolerance = 0.25;
// the gradient is recomputed from x (not the recurrence) at least this often
constexpr int kRefreshEvery = 50;

// The program in the Jacobi-scaled impulses y = x / s, s_i = 1 / sqrt(A_ii) (1 where A_ii vanishes): out =
// S A S y, through the factors (A = J K^T) when given. The scaled Delassus matrix has a unit diagonal, so
// rows of light and heavy bodies, normals and friction converge together.
class ScaledDelassus {
 public:
  ScaledDelassus(const BoxedLcp& lcp, BoxedLcpWorkspace& ws, const DelassusFactors* f) : lcp_(lcp), ws_(ws), f_(f) {
    VecX& s = ws_.cgScale;
    s.resize(lcp_.n);
    for (int i = 0; i < lcp_.n; ++i) {
      double d = 0.0;
      if (f_)
        for (int e = f_->start[i]; e < f_->start[i + 1]; ++e) d += f_->J[e] * f_->K[e];
      else
        d = lcp_.A(i, i);
      s[i] = d > 0.0 && std::isfinite(d) ? 1.0 / std::sqrt(d) : 1.0;
    }
    ws_.cgB = s.cwiseProduct(lcp_.b);
  }
  const VecX& scale() const { return ws_.cgScale; }
  const VecX& b() const { return ws_.cgB; }
  void operator()(const VecX& y, VecX& out) const {
    const VecX& s = ws_.cgScale;
    if (!f_) {
      out.noalias() = lcp_.A * s.cwiseProduct(y);
      out.array() *= s.array();
      return;
    }
    ws_.velocity2.setZero(f_->dim);
    for (int i = 0; i < lcp_.n; ++i) {
      const double x = s[i] * y[i];
      if (x != 0.0)
        for (int e = f_->start[i]; e < f_->start[i + 1]; ++e) ws_.velocity2[f_->index[e]] += f_->K[e] * x;
    }
    for (int i = 0; i < lcp_.n; ++i) {
      double v = 0.0;
      for (int e = f_->start[i]; e < f_->start[i + 1]; ++e) v += f_->J[e] * ws_.velocity2[f_->index[e]];
      out[i] = s[i] * v;
    }
  }
  // an upper bound of S A S's largest eigenvalue: its largest absolute row sum, bounded through the factors
  // by max_i s_i |J_i| . sum_j s_j |K_j| (Gershgorin)
  double normBound() const {
    const VecX& s = ws_.cgScale;
    double bound = 0.0;
    if (!f_) {
      for (int i = 0; i < lcp_.n; ++i) bound = std::max(bound, s[i] * lcp_.A.col(i).cwiseAbs().dot(s));
      return bound;
    }
    ws_.velocity2.setZero(f_->dim);
    for (int i = 0; i < lcp_.n; ++i)
      for (int e = f_->start[i]; e < f_->start[i + 1]; ++e) ws_.velocity2[f_->index[e]] += s[i] * std::abs(f_->K[e]);
    for (int i = 0; i < lcp_.n; ++i) {
      double v = 0.0;
      for (int e = f_->start[i]; e < f_->start[i + 1]; ++e) v += std::abs(f_->J[e]) * ws_.velocity2[f_->index[e]];
      bound = std::max(bound, s[i] * v);
    }
    return bound;
  }

 private:
  const BoxedLcp& lcp_;
  BoxedLcpWorkspace& ws_;
  const DelassusFactors* f_;
};

// MPRGP on the scaled program with the fixed bounds ws.lo, ws.hi (of y), from a feasible y = ws.x with
// g = ws.w = S (A S y + b). Stops when the projected gradient, unscaled (a velocity), is below `tol` (true)
// or the products run out: then at the best iterate (on a degenerate pile the active set can circle near
// the answer), true if its projected gradient is below `accept`.
class BoxQpSolver {
 public:
  BoxQpSolver(const BoxedLcp& lcp, BoxedLcpWorkspace& ws, const ScaledDelassus& product, double alphaBar)
      : lcp_(lcp), ws_(ws), x_(ws.x), g_(ws.w), lo_(ws.lo), hi_(ws.hi), product_(product), alphaBar_(alphaBar) {}

  bool solve(double tol, double accept, int& products) {
    const int n = lcp_.n;
    VecX& best = ws_.xprev;
    best = x_;
    bestGradient_ = kUnbounded;
    VecX &p = ws_.cgDir, &ap = ws_.cgProd, &phi = ws_.cgFree;
    p.resize(n);
    ap.resize(n);
    phi.resize(n);
    freeGradient(phi);
    p = phi;
    int sinceRefresh = 0;
    while (true) {
      const double worstNow = projectedGradientNorm();
      if (worstNow <= tol) {
        if (sinceRefresh == 0) return true;
        refresh(products);  // converged on the recurrence: confirm on the true gradient
        sinceRefresh = 0;
        freeGradient(phi);
        p = phi;
        continue;
      }
      if (products <= 0) return finishAtBest(accept, products);
      if (worstNow < bestGradient_) {  // the best iterate so far, in case the active set circles to the end
        bestGradient_ = worstNow;
        best = x_;
      }
      if (++sinceRefresh >= kRefreshEvery) {
        refresh(products);
        sinceRefresh = 0;
        freeGradient(phi);
        p = phi;
        continue;
      }
      double chopped = 0.0, reduced = 0.0;
      for (int i = 0; i < n; ++i) {
        const double b = choppedGradient(i);
        chopped += b * b;
        if (isFree(i)) reduced += phi[i] * reducedFree(i, phi[i]);
      }
      if (chopped <= reduced) {  // proportional: conjugate gradient step, or an expansion onto the bounds
        product_(p, ap);
        --products;
        const double pap = p.dot(ap);
        const double acg = pap > 0.0 ? g_.dot(p) / pap : kUnbounded;
        const double af = feasibleStep(p);
        if (acg <= af) {
          x_.noalias() -= acg * p;
          g_.noalias() -= acg * ap;
          freeGradient(phi);
          const double gamma = phi.dot(ap) / pap;
          p = phi - gamma * p;
        } else {
          if (!std::isfinite(af)) return false;  // unbounded below: not a contact problem
          x_.noalias() -= af * p;
          g_.noalias() -= af * ap;
          freeGradient(phi);
          for (int i = 0; i < n; ++i) x_[i] = std::min(hi_[i], std::max(lo_[i], x_[i] - alphaBar_ * phi[i]));
          refresh(products);
          sinceRefresh = 0;
          freeGradient(phi);
          p = phi;
        }
      } else {  // proportioning: release the rows whose velocity pulls them off their bound
        VecX& d = ws_.tmp;
        for (int i = 0; i < n; ++i) d[i] = choppedGradient(i);
        product_(d, ap);
        --products;
        const double dad = d.dot(ap);
        const double af = feasibleStep(d);
        const double step = std::min(dad > 0.0 ? chopped / dad : kUnbounded, af);
        if (!std::isfinite(step)) return false;
        x_.noalias() -= step * d;
        g_.noalias() -= step * ap;
        for (int i = 0; i < n; ++i) x_[i] = std::min(hi_[i], std::max(lo_[i], x_[i]));  // round-off at the bound
        freeGradient(phi);
        p = phi;
      }
    }
  }

 private:
  // out of products: the best iterate, accepted if its projected gradient is within `accept`
  bool finishAtBest(double accept, int& products) {
    if (bestGradient_ < kUnbounded) {
      x_ = ws_.xprev;
      refresh(products);
    }
    return projectedGradientNorm() <= accept;
  }
  bool pinched(int i) const { return hi_[i] <= lo_[i]; }
  bool isFree(int i) const { return x_[i] > lo_[i] && x_[i] < hi_[i]; }
  double choppedGradient(int i) const {
    if (pinched(i) || isFree(i)) return 0.0;
    return x_[i] <= lo_[i] ? std::min(g_[i], 0.0) : std::max(g_[i], 0.0);
  }
  // the free gradient shortened to the step that reaches the bound in one projected step
  double reducedFree(int i, double phi) const {
    return phi > 0.0 ? std::min((x_[i] - lo_[i]) / alphaBar_, phi) : std::max((x_[i] - hi_[i]) / alphaBar_, phi);
  }
  void freeGradient(VecX& phi) const {
    for (int i = 0; i < lcp_.n; ++i) phi[i] = isFree(i) ? g_[i] : 0.0;
  }
  double projectedGradientNorm() const {
    double worst = 0.0;
    const VecX& s = product_.scale();
    for (int i = 0; i < lcp_.n; ++i)
      worst = std::max(worst, std::abs(isFree(i) ? g_[i] : choppedGradient(i)) / s[i]);
    return worst;
  }
  // the largest a with lo <= x - a d <= hi
  double feasibleStep(const VecX& d) const {
    double a = kUnbounded;
    for (int i = 0; i < lcp_.n; ++i) {
      if (d[i] > 0.0) a = std::min(a, (x_[i] - lo_[i]) / d[i]);
      if (d[i] < 0.0) a = std::min(a, (x_[i] - hi_[i]) / d[i]);
    }
    return std::max(a, 0.0);
  }
  void refresh(int& products) {
    product_(x_, g_);
    g_ += product_.b();
    --products;
  }

  const BoxedLcp& lcp_;
  BoxedLcpWorkspace& ws_;
  VecX &x_, &g_;
  const VecX &lo_, &hi_;
  const ScaledDelassus& product_;
  double alphaBar_;
  double bestGradient_ = kUnbounded;
};

}  // namespace

int projectedCgBudget(int rows) {
  return std::max(kMinProducts, static_cast<int>(kProductsPerSqrtRow * std::sqrt(static_cast<double>(rows))));
}

bool solveBoxedLcpProjectedCg(const BoxedLcp& lcp, BoxedLcpWorkspace& ws, const BoxedLcpOptions& options,
                              int maxProducts, int* productsUsed) {
  const int n = lcp.n;
  if (n == 0) return true;
  const bool lazy = lcp.lazyA && !ws.denseReady;
  const DelassusFactors* f = lcp.factors && (lazy || n >= kSparseFactorRows) ? lcp.factors : nullptr;
  const ScaledDelassus product(lcp, ws, f);
  const VecX& scale = product.scale();
  const double norm = product.normBound();
  if (!(norm > 0.0) || !std::isfinite(norm)) return false;
  const double alphaBar = 1.9 / norm;  // Dostal's expansion step, within (0, 2 / |S A S|]
  const double tol = kInnerTolerance * options.tolerance * (1.0 + lcp.b.cwiseAbs().maxCoeff());
  const int budget = maxProducts > 0 ? maxProducts : projectedCgBudget(n);
  int products = budget;
  ws.tmp.resize(n);
  // ws.x, ws.w hold y and the scaled gradient while the rounds run; ws.dx, ws.dw the answer x, w = A x + b
  ws.x.array() /= scale.array();
  auto unscaled = [&]() {
    ws.dx = scale.cwiseProduct(ws.x);
    ws.dw = ws.w.cwiseQuotient(scale);
    return ws.dx.allFinite() && ws.dw.allFinite();
  };
  BoxQpSolver qp(lcp, ws, product, alphaBar);
  bool valid = false;
  for (int round = 0; round < kMaxBoundRounds; ++round) {
    for (int i = 0; i < n; ++i) {  // the bounds of this round (of x, then of y), and y moved into them
      double l = lcp.lo[i], u = lcp.hi[i];
      const int j = lcp.normalOf(i);
      if (j >= 0) {
        const double normal = std::max(0.0, scale[j] * ws.x[j]);
        l *= normal;
        u *= normal;
      }
      ws.lo[i] = l / scale[i];
      ws.hi[i] = u / scale[i];
      ws.x[i] = std::min(ws.hi[i], std::max(ws.lo[i], ws.x[i]));
    }
    product(ws.x, ws.w);
    ws.w += product.b();
    --products;
    if (!unscaled()) break;
    if (round > 0 && isValidBoxedLcp(lcp, ws.dx, ws.dw, options)) {
      valid = true;
      break;
    }
    const bool ok = qp.solve(tol, tol / kInnerTolerance, products);
    // the round's answer is checked as it is: moving it into the next round's bounds (friction rows a hair
    // past mu times their new normal, within the tolerance) can make another row's velocity miss it, and a
    // landing bin's run then went on for rounds, valid after each one, until its budget ran out
    if (!unscaled()) break;
    valid = isValidBoxedLcp(lcp, ws.dx, ws.dw, options);
    if (valid || !ok || products <= 0 || round + 1 == kMaxBoundRounds) break;  // or no further round
  }
  ws.x = ws.dx;
  ws.w = ws.dw;
  if (productsUsed) *productsUsed += budget - std::max(0, products);
  if (!ws.x.allFinite()) return false;
  return valid;
}

}  // namespace contact
}  // namespace rigidiff
