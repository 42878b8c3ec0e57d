// The contact solver core: a boxed linear complementarity problem with friction, independent of bodies.
//
// Problem (all rows i = 0..n-1):
//   w = A x + b,   A (n x n) symmetric positive semi-definite (the Delassus matrix J M^-1 J^T),
//   b (n) the constraint velocity before the impulse, w (n) the velocity after it, x (n) the impulses,
//   effective bounds  l_i <= x_i <= u_i  with  (l_i, u_i) = (lo_i, hi_i)               if findex[i] < 0,
//                                              (l_i, u_i) = (lo_i, hi_i) * x[findex[i]] otherwise (friction),
//   and complementarity:  x_i = l_i => w_i >= 0,  x_i = u_i => w_i <= 0,  l_i < x_i < u_i => w_i = 0.
// A normal contact row has lo = 0, hi = +inf (w >= 0: the contact separates or rests); a friction row has
// lo = -mu, hi = +mu and findex pointing at its normal row. Every row must have lo <= 0 <= hi (x = 0 is
// feasible), and a row named by findex must itself have findex = -1 and lo = 0.
//
// The pipeline (solveBoxedLcp): optional warm start from a guessed classification -> principal pivoting
// (lcp_pivoting.hpp) -> projected Gauss-Seidel with a small diagonal regularisation (lcp_pgs.hpp) -> the
// closest answer with friction within kApproximateFactor times the tolerance -> the normal-only problem by
// projected Gauss-Seidel with the friction rows dropped -> zeros and a failure flag.
// An island too large to pivot cheaply (BoxedLcpOptions::sweepsFirstWork) is solved first on its factors by
// projected conjugate gradients (lcp_projected_cg.hpp; from the previous impulses, then from zero when that
// answer does not standardise) alternating with short Gauss-Seidel runs; after them it tries the full
// Gauss-Seidel before pivoting. Its warm start and standardisation never decompose a large clamping system
// densely. Large clamping systems are solved by Krylov iterations (clamping_iterative.hpp).
// Every candidate is checked by isValidBoxedLcp; an accepted one is classified and standardised
// (lcp_classification.hpp) so redundant contacts get the unique least-squares minimum-norm answer.
#pragma once

#include <vector>

#include "rigidiff/contact/min_norm_psd.hpp"
#include "rigidiff/fwd.hpp"

namespace rigidiff {
namespace contact {

/// Class of an LCP row after a solve (lcp_classification.hpp gives the thresholds).
enum class LcpClass : int {
  Separating = 0,  ///< x at a zero bound (normal not pushing, or friction of a separating contact): x = 0
  Clamping = 1,    ///< w = 0 and x free inside its bounds (a pushing normal, a sticking friction row)
  UpperBound = 2,  ///< x at its non-zero upper bound (sliding friction at +mu x_normal, or a fixed hi)
  LowerBound = 3,  ///< x at its non-zero lower bound (sliding friction at -mu x_normal, or a fixed lo)
};

/// Which stage of the pipeline produced the accepted solution.
enum class LcpSolver : int {
  None = 0,                  ///< every stage failed: x = 0 is returned
  WarmStart = 1,             ///< the guessed classification solved the problem
  Pivoting = 2,              ///< principal pivoting with friction bounds from an outer fixed-point loop
  ProjectedConjugateGradients = 3,  ///< projected conjugate gradients (MPRGP) with friction bounds by rounds
  ProjectedGaussSeidel = 4,  ///< projected Gauss-Seidel on the regularised problem
  /// no stage met the tolerance: the closest answer with friction of pivoting and Gauss-Seidel, within
  /// kApproximateFactor times the tolerance (not standardised)
  ApproximateFriction = 5,
  FrictionlessPgs = 6,  ///< projected Gauss-Seidel on the normal rows only (friction dropped)
};

/// A Delassus matrix given also as A = J K^T (K = M~^-1 J^T for contact rows), each row of J and K
/// stored on the few coordinates of a velocity space that it touches (sparse rows, as views on caller
/// memory). Projected Gauss-Seidel then sweeps a row in the time of its entries instead of n.
struct DelassusFactors {
  int dim = 0;                  ///< size of the velocity space
  const int* start = nullptr;   ///< (n + 1) row i's entries are start[i] .. start[i + 1] - 1
  const int* index = nullptr;   ///< coordinate of each entry
  const double* J = nullptr;    ///< entries of J's rows
  const double* K = nullptr;    ///< entries of K's rows (the same coordinates)
  /// Optional: the coordinates in `blocks` consecutive ranges (a body's dofs) [blockStart[b],
  /// blockStart[b + 1]), each row's entries being whole blocks, one after the other. A lazy A's
  /// clamping system is then summed block by block with dense products.
  int blocks = 0;
  const int* blockStart = nullptr;
};

/// DelassusFactors that own their entries. A caller that keeps its factors in the workspace
/// (BoxedLcpWorkspace::factorStorage, pointing BoxedLcp::factors at its view()) lets a solve through a
/// DelassusRoot skip forming the clamping system Q: the workspace forms it from them when the derivatives
/// first ask for it (BoxedLcpWorkspace::clampingCod).
struct DelassusFactorStorage {
  int dim = 0, blocks = 0;
  std::vector<int> start, index, blockStart;
  std::vector<double> J, K;
  DelassusFactors view() const;
};

/// A Delassus matrix given also as A = G G^T (G = J L for contact rows, L L^T = M~^-1), each row of G
/// stored on the coordinates it touches (sparse rows, as views on caller memory). When the clamping
/// rows outnumber the coordinates, the minimum-norm clamping solve works with the dim x dim matrix
/// G_C^T G_C, which has the nonzero spectrum of A_CC, instead of A_CC itself:
///   A_CC^+ = G_C (G_C^T G_C)^+ (G_C^T G_C)^+ G_C^T.
struct DelassusRoot {
  int dim = 0;                  ///< number of coordinates
  const int* start = nullptr;   ///< (n + 1) row i's entries are start[i] .. start[i + 1] - 1
  const int* index = nullptr;   ///< coordinate of each entry
  const double* G = nullptr;    ///< entries of G's rows
};

/// A boxed LCP as views on caller memory (nothing is copied). A is column-major (it is symmetric, so
/// row-major storage reads the same). findex may be null (no friction rows); factors may be null.
struct BoxedLcp {
  BoxedLcp(int n, const double* A, const double* b, const double* lo, const double* hi, const int* findex)
      : n(n), A(A, n, n), b(b, n), lo(lo, n), hi(hi, n), findex(findex) {}

  /// Row that scales the bounds of row i, or -1.
  int normalOf(int i) const { return findex ? findex[i] : -1; }

  int n;
  /// A's entries (column-major). For a lazy A, the solve points it at *lazyA once it has formed it.
  mutable Eigen::Map<const MatX> A;
  Eigen::Map<const VecX> b, lo, hi;
  const int* findex;
  const DelassusFactors* factors = nullptr;  ///< A = J K^T by sparse rows, when the caller has it
  const DelassusRoot* root = nullptr;        ///< A = G G^T by sparse rows, when the caller has it
  /// When set (with factors), A is not formed by the caller: ensureDenseDelassus sizes this matrix n x n,
  /// fills it from the factors and points A at it when a stage needs A's columns (pivoting, dense
  /// Gauss-Seidel). A warm-started solve, and a large island's sweeps, read only the factors, so an island
  /// of a hundred thousand rows (hundreds of particles in one spot) never allocates its m x m block.
  MatX* lazyA = nullptr;
};

/// Problems of at least this many rows use their DelassusFactors (when given) for the velocity changes
/// of pivoting and the sweeps of Gauss-Seidel; smaller ones use A (dense columns cost little there).
constexpr int kSparseFactorRows = 128;

/// Tolerances and limits of the pipeline; the defaults suit contact problems in SI units.
struct BoxedLcpOptions {
  /// Validity tolerance: impulses are compared to tolerance * (1 + max|x|), velocities to
  /// tolerance * (1 + max|b|) (isValidBoxedLcp). Classification uses the same impulse threshold.
  double tolerance = 1e-6;
  /// Diagonal shift of the pivoting solver, relative to max(1e-300, max A_ii): keeps the clamping
  /// blocks of a semi-definite A factorisable (the shift is removed again by the standardisation).
  double pivotRegularisation = 1e-11;
  /// Diagonal shift of the projected Gauss-Seidel fallbacks, relative to max A_ii.
  double pgsRegularisation = 1e-8;
  int pgsIterations = 5000;
  /// Projected Gauss-Seidel stops when the largest change of x in a sweep is below this (relative).
  double pgsTolerance = 1e-13;
  /// Outer iterations of the pivoting solver that update friction bounds from the normal impulses.
  int frictionIterations = 40;
  /// Relative singular-value threshold of the clamping-system decomposition (rank decision).
  double rankThreshold = 1e-10;
  /// A lazy problem whose principal pivoting would cost more than about this many multiply-adds (its rows
  /// times the square of the clamped rows it can hold, min(rows, dofs)) is solved cold by projected
  /// conjugate gradients and Gauss-Seidel on its factors first: their products cost the factors' entries,
  /// where pivoting a pile of hundreds of bodies takes seconds and the dense A gigabytes. Pivoting stays the
  /// fallback. (Pivoting a landing bin of 30 boxes, about 1000 rows and 180 dofs, work 3e7, took seconds
  /// where the gradients take milliseconds.)
  double sweepsFirstWork = 2e7;
  /// Clamping systems with at least this many unknowns in their dense factorisation (the clamped rows, or a
  /// DelassusRoot's dofs for a symmetric system solved through it) are solved by Krylov iterations on the
  /// factors when the problem has them (clamping_iterative.hpp).
  int iterativeClampingSize = 1024;
};

/// Outcome of solveBoxedLcp.
struct BoxedLcpResult {
  LcpSolver solver = LcpSolver::None;
  bool success = false;          ///< false: every stage failed and x = w - b = 0
  bool frictionDropped = false;  ///< the friction rows were dropped (x = 0 on them, classified Separating)
  bool standardised = false;     ///< x is the minimum-norm solution of the clamping system
};

/// Every buffer of the solver, sized once by resize(n): repeated solves of the same size reuse them. (The
/// one exception: the decomposition of Q reallocates when the number of clamping rows changes.)
/// After solveBoxedLcp: x, w (dim n) the solution and post-impulse velocity, classes (dim n), and the
/// clamping system of the standardisation (clamped, bounded, coupling, offset, Q, clampingCod()) that
/// lcp_derivatives.hpp differentiates.
struct BoxedLcpWorkspace {
  explicit BoxedLcpWorkspace(int n = 0) { resize(n); }
  /// Sizes every buffer for problems of n rows (a no-op when already n).
  void resize(int n);

  int n = -1;
  VecX x, w;                     ///< solution (dim n)
  std::vector<LcpClass> classes;  ///< classification of the solution (dim n)

  // clamping system Q x_C = r of the last standardisation (m = clamped.size(), k = bounded.size())
  std::vector<int> clamped;   ///< rows of class Clamping, ascending (m)
  std::vector<int> bounded;   ///< rows at a non-zero bound, ascending (k)
  std::vector<int> slot;      ///< row -> index in clamped, or -1 (dim n)
  std::vector<int> coupling;  ///< bounded row -> index in clamped of its normal row, or -1 if a fixed bound (k)
  VecX factor;                ///< bounded row: x = factor * x[normal] (friction) or x = factor (fixed) (k)
  /// A_CC + A_CU E (m x m, top-left block of an n x n buffer). After a solve through a DelassusRoot with
  /// the factors in factorStorage it is formed only when clampingCod() is first called (clampingSystem()).
  mutable MatX Q;
  VecX r;                     ///< -(b_C + A_CU c_U) (m)
  bool systemValid = false;   ///< the members above describe the current x
  /// The complete orthogonal decomposition of Q (m x m) with the rank threshold of the last solve. A
  /// symmetric Q whose rank is clear-cut is solved by pivoted Cholesky (min_norm_psd.hpp) instead, and
  /// its decomposition is computed here when first asked for (by the derivatives).
  const Eigen::CompleteOrthogonalDecomposition<MatX>& clampingCod() const;
  /// Q, formed now if the solve deferred it.
  const MatX& clampingSystem() const;
  /// n >= 0: the solve deferred Q (m x m of a problem of n rows), which clampingSystem() forms from
  /// factorStorage; n < 0: Q is formed.
  void deferClampingSystem(int n) {
    qDeferredRows_ = n < 0 ? -1 : n;
    if (n >= 0) codValid_ = false;
  }
  /// The caller's DelassusFactors, kept here (see DelassusFactorStorage).
  DelassusFactorStorage factorStorage;
  /// Q's buffer holds at least m x m (it grows with the clamping systems, not with the problems' rows).
  void reserveClampingSystem(int m);
  /// Decomposes Q (m x m) now: solves use it and clampingCod() returns it.
  void decomposeClampingSystem(double rankThreshold);
  /// Q was rebuilt: its decomposition (with this threshold) is computed again when asked for.
  void clampingSystemChanged(double rankThreshold) {
    codValid_ = false;
    rankThreshold_ = rankThreshold;
  }
  MinNormPsdWorkspace psd;    ///< buffers of the pivoted-Cholesky solve
  // a lazy A (BoxedLcp::lazyA): whether the buffer holds A, and the factors' J by coordinates (CSC)
  bool denseReady = false;
  bool columnsReady = false;
  std::vector<int> colStart, colRow;  ///< rows touching each coordinate (dim + 1, nnz)
  std::vector<double> colJ;           ///< their entries of J
  VecX rowAcc;                        ///< one row of A (n), zero outside `touched`
  std::vector<int> touched;           ///< its nonzero pattern
  std::vector<char> isTouched;        ///< (n)
  VecX velocity2;                     ///< scratch K^T x (dim)
  std::vector<int> blockFill, blockItem, blockEntry;  ///< scratch: per block, the rows of C and U in it
  std::vector<double> gatherJ, gatherK, blockProduct;  ///< scratch: their entries, and J_b K_b^T
  MatX rootGram;              ///< G_C^T G_C over the coordinates of a DelassusRoot (dim x dim)
  MinNormPsdWorkspace rootPsd;  ///< buffers of its pivoted-Cholesky solve
  VecX rootY;                 ///< G_C^T r, then the coordinates' solution (dim)
  /// rootPsd holds the factor of these clamped rows' Gram matrix, from this solveBoxedLcp call (a warm
  /// start's solution nearest the previous impulses solves the same system again with another r)
  bool rootFactored = false;
  std::vector<int> rootClamped;
  /// What the factor in rootPsd was made from, kept across calls: the coordinates' count, the rank
  /// thresholds, the clamped rows and their entries of G (count, coordinates, values per row). A later solve
  /// whose clamped rows carry the same bits (bodies at rest: their configuration no longer changes) has the
  /// same Gram matrix to the bit and reuses the factor. rootKeptDim < 0: nothing kept.
  int rootKeptDim = -1;
  double rootKeptLow = 0.0, rootKeptHigh = 0.0;
  std::vector<int> rootKeptRows, rootKeptCount, rootKeptIndex;
  std::vector<double> rootKeptG;

  // scratch of the solvers
  VecX diag;               ///< projected Gauss-Seidel on a lazy A: A_ii from the factors (dim n)
  /// the iterative clamping solve (clamping_iterative.hpp): rows of the problem, velocities, and the
  /// Krylov vectors of its clamped rows
  VecX itFull, itVel, itRes, itDir, itProd, itNormal;
  VecX cgDir, cgProd, cgFree;  ///< projected conjugate gradients: direction, A times it, free gradient (dim n)
  VecX cgScale, cgB;            ///< projected conjugate gradients: Jacobi scale 1/sqrt(A_ii), scaled b (dim n)
  VecX lo, hi;             ///< effective bounds (dim n)
  VecX dx, dw, xprev, tmp;  ///< pivoting direction, velocity change, previous iterate, scratch (dim n)
  VecX velocity;           ///< projected Gauss-Seidel with factors: K^T x (dim factors->dim)
  MatX L;                  ///< pivoting's Cholesky factor storage (n x n, sized when pivoting first runs)
  std::vector<int> state;  ///< pivoting state per row (dim n)
  std::vector<int> list;   ///< pivoting clamped rows (dim n)

 private:
  mutable Eigen::CompleteOrthogonalDecomposition<MatX> cod_;  ///< of Q, when codValid_
  mutable bool codValid_ = false;
  double rankThreshold_ = 1e-10;
  mutable int qDeferredRows_ = -1;  ///< >= 0: Q is not formed yet (the problem's row count)
};

/// A_ii; from the factors for a lazy A.
double delassusDiagonal(const BoxedLcp& lcp, int i);

/// Largest |A_ii| of the problem (at least the smallest positive double); reads the factors for a lazy A.
double delassusDiagonalScale(const BoxedLcp& lcp);

/// ||A e_i||^2; reads the factors (ws's buffers) for a lazy A.
double delassusColumnSquaredNorm(const BoxedLcp& lcp, BoxedLcpWorkspace& ws, int i);

/// Row i of a lazy A into ws.rowAcc on the pattern ws.touched (the caller clears it with
/// clearDelassusRow); A_ic = j_c . k_i for the rows c that share a coordinate with row i.
void delassusRow(const BoxedLcp& lcp, BoxedLcpWorkspace& ws, int i);
void clearDelassusRow(BoxedLcpWorkspace& ws);

/// The clamping system of a lazy A, Q = A_CC + A_CU E and r -= A_CU c_U (r holding -b_C), from the
/// factors' blocks (by rows of A without them); ws's clamped, bounded, slot, coupling and factor set.
void lazyClampingSystem(const BoxedLcp& lcp, BoxedLcpWorkspace& ws);

/// Fills a lazy A's buffer from its factors, once per solve (a no-op otherwise).
void ensureDenseDelassus(const BoxedLcp& lcp, BoxedLcpWorkspace& ws);

/// w = A x + b, from the factors for a lazy A that is not dense yet, else boxedLcpVelocity.
void delassusVelocity(const BoxedLcp& lcp, BoxedLcpWorkspace& ws, const Ref<const VecX>& x, Ref<VecX> w);

/// Post-impulse velocity w = A x + b (dim n) into w.
void boxedLcpVelocity(const BoxedLcp& lcp, const Ref<const VecX>& x, Ref<VecX> w);

/// Where no stage meets options.tolerance, the closest answer with friction is kept when its violation
/// (boxedLcpViolation) is at most this many times the tolerance, before friction is dropped: Gauss-Seidel
/// stalls 1.5-25 times above the tolerance on the impact steps of heaps of spheres, where dropping
/// friction flattens the heap.
constexpr double kApproximateFactor = 100.0;

/// The largest violation of bounds and complementarity of (x, w), in units of isValidBoxedLcp's
/// thresholds: at most 1 when (x, w) is valid, infinite when not finite.
double boxedLcpViolation(const BoxedLcp& lcp, const Ref<const VecX>& x, const Ref<const VecX>& w,
                         const BoxedLcpOptions& options);

/// Checks bounds and complementarity of (x, w = A x + b) with the tolerances of options.tolerance
/// (friction bounds scaled by the current normal impulses; a bound interval narrower than the impulse
/// tolerance accepts any w). Non-finite values are invalid.
bool isValidBoxedLcp(const BoxedLcp& lcp, const Ref<const VecX>& x, const Ref<const VecX>& w,
                     const BoxedLcpOptions& options);

/// Solves the boxed LCP; the answer is in ws.x, ws.w and ws.classes (resized to lcp.n).
/// warmClasses (dim n, or null): a guessed classification tried first with one clamping-system solve.
/// warmX (dim n, or null; with warmClasses): the previous impulses. When the guessed clamping system has
/// many solutions and its minimum-norm one is not valid, the solution nearest warmX is tried (valid, it is
/// the answer, not standardised).
/// Never throws on a hard problem and never returns NaN: the result reports which stage succeeded.
BoxedLcpResult solveBoxedLcp(const BoxedLcp& lcp, BoxedLcpWorkspace& ws, const BoxedLcpOptions& options = {},
                             const LcpClass* warmClasses = nullptr, const double* warmX = nullptr);

}  // namespace contact
}  // namespace rigidiff
