// The boxed-LCP pipeline: warm start, pivoting, projected Gauss-Seidel, the closest answer with friction,
// frictionless fallback, validity.
#include "rigidiff/contact/boxed_lcp.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "rigidiff/contact/lcp_classification.hpp"
#include "rigidiff/contact/lcp_pgs.hpp"
#include "rigidiff/contact/lcp_pivoting.hpp"
#include "rigidiff/contact/lcp_projected_cg.hpp"
#include "rigidiff/contact/pseudo_inverse.hpp"

namespace rigidiff {
namespace contact {

void BoxedLcpWorkspace::resize(int size) {
  if (size == n) return;
  n = size;
  x.setZero(n);
  w.setZero(n);
  classes.assign(n, LcpClass::Separating);
  clamped.reserve(n);
  bounded.reserve(n);
  coupling.reserve(n);
  slot.assign(n, -1);
  factor.setZero(n);
  r.setZero(n);
  systemValid = false;
  codValid_ = false;
  qDeferredRows_ = -1;
  lo.setZero(n);
  hi.setZero(n);
  dx.setZero(n);
  dw.setZero(n);
  xprev.setZero(n);
  tmp.setZero(n);
  state.assign(n, 0);
  list.reserve(n);
}

void BoxedLcpWorkspace::reserveClampingSystem(int m) {
  if (Q.rows() < m) Q.resize(m, m);  // grows only: only top-left blocks are read, after being written
}

void BoxedLcpWorkspace::decomposeClampingSystem(double rankThreshold) {
  const int m = static_cast<int>(clamped.size());
  rankThreshold_ = rankThreshold;
  cod_.setThreshold(rankThreshold);
  computeCod(cod_, Q.topLeftCorner(m, m));
  codValid_ = true;
}

DelassusFactors DelassusFactorStorage::view() const {
  DelassusFactors f;
  f.dim = dim;
  f.start = start.data();
  f.index = index.data();
  f.J = J.data();
  f.K = K.data();
  f.blocks = blocks;
  f.blockStart = blocks > 0 ? blockStart.data() : nullptr;
  return f;
}

const MatX& BoxedLcpWorkspace::clampingSystem() const {
  if (qDeferredRows_ >= 0) {  // formed once, as the solve would have formed it (the same sums in the same order)
    const DelassusFactors f = factorStorage.view();
    BoxedLcp lcp(qDeferredRows_, nullptr, nullptr, nullptr, nullptr, nullptr);
    lcp.factors = &f;
    // Q and the scratch of the sums are caches of the solved system: forming them changes no answer
    lazyClampingSystem(lcp, const_cast<BoxedLcpWorkspace&>(*this));
    qDeferredRows_ = -1;
  }
  return Q;
}

const Eigen::CompleteOrthogonalDecomposition<MatX>& BoxedLcpWorkspace::clampingCod() const {
  if (!codValid_) {
    const int m = static_cast<int>(clamped.size());
    cod_.setThreshold(rankThreshold_);
    computeCod(cod_, clampingSystem().topLeftCorner(m, m));
    codValid_ = true;
  }
  return cod_;
}

void boxedLcpVelocity(const BoxedLcp& lcp, const Ref<const VecX>& x, Ref<VecX> w) {
  w.noalias() = lcp.A * x;
  w += lcp.b;
}

namespace {

// the bounds of row i at the impulses x: a friction row's scale with its normal impulse
inline void rowBounds(const BoxedLcp& lcp, const Ref<const VecX>& x, int i, double& l, double& u) {
  l = lcp.lo[i];
  u = lcp.hi[i];
  const int j = lcp.normalOf(i);
  if (j >= 0) {
    const double s = std::max(0.0, x[j]);
    l *= s;
    u *= s;
  }
}

}  // namespace

bool isValidBoxedLcp(const BoxedLcp& lcp, const Ref<const VecX>& x, const Ref<const VecX>& w,
                     const BoxedLcpOptions& options) {
  const int n = lcp.n;
  if (n == 0) return true;
  if (!x.allFinite() || !w.allFinite()) return false;
  const double tx = options.tolerance * (1.0 + x.cwiseAbs().maxCoeff());
  const double tw = options.tolerance * (1.0 + lcp.b.cwiseAbs().maxCoeff());
  for (int i = 0; i < n; ++i) {
    double l, u;
    rowBounds(lcp, x, i, l, u);
    if (x[i] < l - tx || x[i] > u + tx) return false;  // out of bounds
    if (u - l <= tx) continue;                          // a pinched interval accepts any velocity
    const bool atLo = x[i] <= l + tx, atHi = x[i] >= u - tx;
    if (atLo && w[i] < -tw) return false;
    if (atHi && w[i] > tw) return false;
    if (!atLo && !atHi && std::abs(w[i]) > tw) return false;
  }
  return true;
}

double boxedLcpViolation(const BoxedLcp& lcp, const Ref<const VecX>& x, const Ref<const VecX>& w,
                         const BoxedLcpOptions& options) {
  const int n = lcp.n;
  if (n == 0) return 0.0;
  if (!x.allFinite() || !w.allFinite()) return std::numeric_limits<double>::infinity();
  const double tx = options.tolerance * (1.0 + x.cwiseAbs().maxCoeff());
  const double tw = options.tolerance * (1.0 + lcp.b.cwiseAbs().maxCoeff());
  double worst = 0.0;
  for (int i = 0; i < n; ++i) {
    double l, u;
    rowBounds(lcp, x, i, l, u);
    worst = std::max(worst, std::max(l - x[i], x[i] - u) / tx);
    if (u - l <= tx) continue;  // as isValidBoxedLcp: a pinched interval accepts any velocity
    const bool atLo = x[i] <= l + tx, atHi = x[i] >= u - tx;
    const double pull = atLo == atHi ? std::abs(w[i]) : atLo ? -w[i] : w[i];  // at both bounds: either way
    worst = std::max(worst, pull / tw);
  }
  return worst;
}

namespace {

// sweepFirst alternates projected conjugate gradients and this many Gauss-Seidel sweeps, at most
// kGradientAttempts times, before pivoting (sweeps that stall short of the tolerance rarely recover alone)
constexpr int kSweepsBetweenGradients = 200;
constexpr int kGradientAttempts = 4;
// the attempts after the first get this share of the products' budget: those that answered a heap's impact
// step after Gauss-Seidel's sweeps took at most 75 sqrt(rows) products
constexpr double kRetryBudget = 0.3;
// The run from zero after an answer from the previous impulses gets at most this share of the products'
// budget (fromZeroStandardises): it answers the landing steps of bins of 30 to 100 in under 1200 products
// (about 30 sqrt(rows)).
constexpr double kFromZeroBudget = 0.3;

// validity of the frictionless answer: friction rows held at zero are skipped
bool validWithoutFriction(const BoxedLcp& lcp, BoxedLcpWorkspace& ws, const BoxedLcpOptions& options) {
  BoxedLcp normalOnly(lcp.n, lcp.A.data(), lcp.b.data(), ws.lo.data(), ws.hi.data(), nullptr);
  return isValidBoxedLcp(normalOnly, ws.x, ws.w, options);
}

// does the classification in ws.classes give the clamping system that ws holds, solved with the classes
// `solved` (clamped rows, then rows at a bound with the same bound, the rest separating)?
bool sameSystem(const BoxedLcp& lcp, const BoxedLcpWorkspace& ws, const LcpClass* solved) {
  for (int i = 0; i < lcp.n; ++i) {
    LcpClass expected = LcpClass::Separating;
    if (ws.slot[i] >= 0)
      expected = LcpClass::Clamping;
    else if (std::find(ws.bounded.begin(), ws.bounded.end(), i) != ws.bounded.end())
      expected = solved[i];
    if (ws.classes[i] != expected) return false;
  }
  return true;
}

// classifies and standardises the accepted solution in ws; keeps the solver's answer if the standardised one
// does not pass the validity check (or, with noCostlyDense, needs a large dense decomposition: see
// solveClampingSystem)
bool standardise(const BoxedLcp& lcp, BoxedLcpWorkspace& ws, const BoxedLcpOptions& options, bool frictionDropped,
                 const LcpClass* solvedWith = nullptr, bool noCostlyDense = false) {
  classifyBoxedLcp(lcp, ws, options, frictionDropped);
  if (solvedWith && sameSystem(lcp, ws, solvedWith)) {  // x is already that system's minimum-norm solution
    ws.systemValid = true;
    return true;
  }
  ws.xprev = ws.x;
  ws.tmp = ws.w;
  if (solveClampingSystem(lcp, ws.classes.data(), ws, options, noCostlyDense) &&
      (frictionDropped ? validWithoutFriction(lcp, ws, options) : isValidBoxedLcp(lcp, ws.x, ws.w, options))) {
    ws.systemValid = true;
    return true;
  }
  ws.x = ws.xprev;
  ws.w = ws.tmp;
  ws.systemValid = false;
  return false;
}

// After solveClampingSystem(lcp, classes, ws): the solution of that clamping system nearest the impulses x0,
// x0 + d with d the least-squares solution of Q d = r - Q x0 (x0 on the clamped rows, the friction rows
// bound to them following), into ws.x and ws.w. Where the clamped rows outnumber the bodies' dofs (a robot
// collapsed on the ground) the minimum-norm solution may push some normal the wrong way while the previous
// step's impulses, moved within the solutions, stay valid. False if the solve fails.
bool solveNearImpulses(const BoxedLcp& lcp, const LcpClass* classes, const double* x0, BoxedLcpWorkspace& ws,
                       const BoxedLcpOptions& options, bool noCostlyDense) {
  VecX start = VecX::Zero(lcp.n);
  for (const int i : ws.clamped) start[i] = x0[i];
  for (std::size_t u = 0; u < ws.bounded.size(); ++u)
    if (ws.coupling[u] >= 0) start[ws.bounded[u]] = ws.factor[static_cast<int>(u)] * start[ws.clamped[ws.coupling[u]]];
  VecX shiftedB(lcp.n);
  delassusVelocity(lcp, ws, start, shiftedB);  // b + A x0: the system for d
  BoxedLcp shifted(lcp.n, lcp.A.data(), shiftedB.data(), lcp.lo.data(), lcp.hi.data(), lcp.findex);
  shifted.factors = lcp.factors;
  shifted.root = lcp.root;
  shifted.lazyA = lcp.lazyA;
  if (!solveClampingSystem(shifted, classes, ws, options, noCostlyDense)) return false;
  ws.x += start;  // ws.w = A d + b + A x0 already
  return ws.x.allFinite();
}

// An iterative answer (valid to the tolerance) whose minimum-norm standardisation failed (redundant contacts
// of a pile, where the minimum-norm impulses break a bound): replaced by the exact solution of its
// classification nearest to it, when that is valid, so that the answer and the next step's warm start
// (which starts from these impulses) solve the classes exactly. Not the minimum-norm solution:
// ws.systemValid stays false.
void polishIterativeAnswer(const BoxedLcp& lcp, BoxedLcpWorkspace& ws, const BoxedLcpOptions& options) {
  const VecX answer = ws.x, velocity = ws.w;
  if (solveNearImpulses(lcp, ws.classes.data(), answer.data(), ws, options, true) &&
      isValidBoxedLcp(lcp, ws.x, ws.w, options)) {
    classifyBoxedLcp(lcp, ws, options, false);
  } else {
    ws.x = answer;
    ws.w = velocity;
  }
  ws.systemValid = false;
}

int clampedRows(const LcpClass* classes, int n) {
  return static_cast<int>(std::count(classes, classes + n, LcpClass::Clamping));
}

// After an answer from the previous impulses that does not standardise: one more run of the gradients, from
// zero, with at most the products the first one spent (and three tenths of the budget), kept when it
// standardises on fewer clamped rows. From zero the gradients meet the bounds early and, on a bin of boxes,
// end on few clamped rows per face whose minimum-norm solution stays valid at the next step, so the warm
// steps that follow solve one small system. From the previous impulses they keep the load spread over every
// redundant contact (a bin of 50 at rest: 1524 clamped rows against 222), whose minimum-norm solution breaks
// a bound: each later step then solved twice, and a bin of 100 settled 4x slower. A heap of spheres clamps
// nearly every row either way; there the answer from the previous impulses stays, and the cap keeps the extra
// run as cheap as the first (its creeping steps answer in a few products). False: the first answer is
// restored.
bool fromZeroStandardises(const BoxedLcp& lcp, BoxedLcpWorkspace& ws, const BoxedLcpOptions& options,
                          int products) {
  const VecX answer = ws.x, velocity = ws.w;
  const std::vector<LcpClass> classes = ws.classes;
  ws.x.setZero();
  if (solveBoxedLcpProjectedCg(lcp, ws, options, products) && standardise(lcp, ws, options, false, nullptr, true) &&
      clampedRows(ws.classes.data(), lcp.n) < clampedRows(classes.data(), lcp.n))
    return true;
  ws.x = answer;
  ws.w = velocity;
  ws.classes = classes;
  return false;
}

// Projected conjugate gradients on the factors from the previous impulses when there are any, alternating
// with short Gauss-Seidel runs from their iterate, until the answer is valid (then standardised without a
// large dense decomposition, or run again from zero, or polished). Rounds that stop Gauss-Seidel at a
// classification and solve it exactly (PGS with subspace minimisation) were tried: on a landing pile the
// sweeps' classes leave the system inconsistent, so every such solve was wasted.
bool sweepFirst(const BoxedLcp& lcp, BoxedLcpWorkspace& ws, const BoxedLcpOptions& options, const double* warmX,
                BoxedLcpResult& result) {
  if (warmX)
    ws.x = Eigen::Map<const VecX>(warmX, lcp.n);
  else
    ws.x.setZero();
  // conjugate gradients whose active set circles near the answer (a degenerate pile) are moved off it by a
  // few Gauss-Seidel sweeps, then resumed
  BoxedLcpOptions sweeps = options;
  sweeps.pgsIterations = std::min(options.pgsIterations, kSweepsBetweenGradients);
  bool solved = false;
  int products = 0;
  for (int attempt = 0; attempt < kGradientAttempts && !solved; ++attempt) {
    const int cap = attempt == 0 ? 0 : std::max(1, static_cast<int>(kRetryBudget * projectedCgBudget(lcp.n)));
    if (solveBoxedLcpProjectedCg(lcp, ws, options, cap, &products)) {
      result.solver = LcpSolver::ProjectedConjugateGradients;
      solved = true;
      break;
    }
    if (!ws.x.allFinite()) ws.x.setZero();
    if (solveBoxedLcpPgs(lcp, ws, sweeps, false, true) && ws.x.allFinite()) {
      result.solver = LcpSolver::ProjectedGaussSeidel;
      solved = true;
    }
  }
  if (!solved) return false;
  result.success = true;
  result.standardised = standardise(lcp, ws, options, false, nullptr, true);
  const int fromZero = std::min(products, static_cast<int>(kFromZeroBudget * projectedCgBudget(lcp.n)));
  if (!result.standardised && warmX && fromZero > 0 && fromZeroStandardises(lcp, ws, options, fromZero)) {
    result.solver = LcpSolver::ProjectedConjugateGradients;
    result.standardised = true;
  }
  if (!result.standardised) polishIterativeAnswer(lcp, ws, options);
  return true;
}

// principal pivoting costs about rows x clamped rows^2 (the clamped rows at most the dofs); a lazy island past
// options.sweepsFirstWork is swept first
bool preferSweeps(const BoxedLcp& lcp, const BoxedLcpOptions& options) {
  if (!lcp.lazyA || !lcp.factors) return false;
  const double held = std::min(lcp.n, lcp.factors->dim);
  return static_cast<double>(lcp.n) * held * held > options.sweepsFirstWork;
}

}  // namespace

BoxedLcpResult solveBoxedLcp(const BoxedLcp& lcp, BoxedLcpWorkspace& ws, const BoxedLcpOptions& options,
                             const LcpClass* warmClasses, const double* warmX) {
  ws.resize(lcp.n);
  ws.systemValid = false;
  ws.denseReady = ws.columnsReady = false;
  ws.rootFactored = false;  // the root's entries are this problem's from here on
  BoxedLcpResult result;
  if (lcp.n == 0) {
    result.solver = LcpSolver::Pivoting;
    result.success = result.standardised = true;
    ws.systemValid = true;
    ws.clamped.clear();
    ws.bounded.clear();
    return result;
  }

  // warm start: one clamping-system solve with the guessed classes, then its solution nearest the previous
  // impulses if the minimum-norm one is not valid
  const bool sweepsFirst = preferSweeps(lcp, options);
  if (warmClasses && solveClampingSystem(lcp, warmClasses, ws, options, sweepsFirst)) {
    if (isValidBoxedLcp(lcp, ws.x, ws.w, options)) {
      result.solver = LcpSolver::WarmStart;
      result.success = true;
      result.standardised = standardise(lcp, ws, options, false, warmClasses, sweepsFirst);
      return result;
    }
    if (warmX && solveNearImpulses(lcp, warmClasses, warmX, ws, options, sweepsFirst) &&
        isValidBoxedLcp(lcp, ws.x, ws.w, options)) {
      result.solver = LcpSolver::WarmStart;
      result.success = true;
      classifyBoxedLcp(lcp, ws, options, false);
      ws.systemValid = false;  // not the minimum-norm solution, as a pivoting answer that is not standardised
      return result;
    }
  }

  // a large lazy island whose pivoting would cost more than iterations: conjugate gradients and Gauss-Seidel
  // on the factors first, from the previous impulses when there are any, until the answer is valid
  if (sweepsFirst && sweepFirst(lcp, ws, options, warmX, result)) return result;

  // the later stages read A's columns
  ensureDenseDelassus(lcp, ws);

  // principal pivoting with the friction-bound loop, then projected Gauss-Seidel from zero (all its sweeps,
  // also after the shorter runs of sweepFirst). A candidate that fails the check may still have the right
  // classification: its clamping-system solve (which couples the friction bounds to the normal impulses
  // exactly) is tried before moving on. On an island swept first the order is reversed: pivoting costs it
  // the most, and on the impact steps of heaps that defeat the gradients it failed wherever the sweeps answered
  // (the same trajectories either way, the landing of 125 spheres 8-25 % faster).
  VecX closest;  // the candidate with friction that comes closest to the tolerance
  double closestViolation = std::numeric_limits<double>::infinity();
  const LcpSolver first = sweepsFirst ? LcpSolver::ProjectedGaussSeidel : LcpSolver::Pivoting;
  const LcpSolver second = sweepsFirst ? LcpSolver::Pivoting : LcpSolver::ProjectedGaussSeidel;
  for (const LcpSolver solver : {first, second}) {
    if (solver == LcpSolver::Pivoting) {
      solveBoxedLcpPivoting(lcp, ws, options);
    } else {
      ws.x.setZero();
      solveBoxedLcpPgs(lcp, ws, options);
    }
    if (!ws.x.allFinite()) continue;
    boxedLcpVelocity(lcp, ws.x, ws.w);
    const bool valid = isValidBoxedLcp(lcp, ws.x, ws.w, options);
    const bool standardised = standardise(lcp, ws, options, false);
    if (valid || standardised) {
      result.solver = solver;
      result.success = true;
      result.standardised = standardised;
      return result;
    }
    const double violation = boxedLcpViolation(lcp, ws.x, ws.w, options);
    if (violation < closestViolation) {
      closestViolation = violation;
      closest = ws.x;
    }
  }

  // the closest answer with friction, when it is near the tolerance: its impulses are off by a small multiple
  // of what a valid answer may be, where dropping friction changes the motion entirely
  if (closestViolation <= kApproximateFactor) {
    ws.x = closest;
    boxedLcpVelocity(lcp, ws.x, ws.w);
    classifyBoxedLcp(lcp, ws, options, false);
    ws.systemValid = false;
    result.solver = LcpSolver::ApproximateFriction;
    result.success = true;
    return result;
  }

  // drop the friction rows: the normal-only problem (bounds of friction rows pinched at zero)
  for (int i = 0; i < lcp.n; ++i) {
    const bool friction = lcp.normalOf(i) >= 0;
    ws.lo[i] = friction ? 0.0 : lcp.lo[i];
    ws.hi[i] = friction ? 0.0 : lcp.hi[i];
  }
  ws.x.setZero();
  solveBoxedLcpPgs(lcp, ws, options, true);
  if (validWithoutFriction(lcp, ws, options)) {
    result.solver = LcpSolver::FrictionlessPgs;
    result.success = true;
    result.frictionDropped = true;
    result.standardised = standardise(lcp, ws, options, true);
    return result;
  }

  // everything failed: zero impulses
  ws.x.setZero();
  ws.w = lcp.b;
  std::fill(ws.classes.begin(), ws.classes.end(), LcpClass::Separating);
  result.frictionDropped = lcp.findex != nullptr;
  return result;
}

}  // namespace contact
}  // namespace rigidiff
