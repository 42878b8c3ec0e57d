// Time stepping with contact, joint limits and joint Coulomb friction: the step of step.hpp whose
// velocity update is corrected by constraint impulses from a boxed LCP (contact/boxed_lcp.hpp) per
// island (the rows that share moving kinematic trees).
#pragma once

#include <utility>
#include <vector>

#include "rigidiff/collision/collision_model.hpp"
#include "rigidiff/contact/boxed_lcp.hpp"
#include "rigidiff/contact/lcp_derivatives.hpp"
#include "rigidiff/multibody/data.hpp"

namespace rigidiff {

/// How two shapes' coefficients combine into one contact's.
enum class Combine : int { GeometricMean = 0, Min = 1, Max = 2, Mean = 3 };

/// Settings of the constraint solve (documented in docs/contact.md).
struct ContactOptions {
  int frictionDirections = 2;           ///< 2 (a 4-sided pyramid) or 4 (an 8-sided one)
  Combine frictionCombine = Combine::GeometricMean;
  Combine restitutionCombine = Combine::Max;
  double restitutionThreshold = 0.1;    ///< m/s: slower approaches do not bounce
  double erp = 0.0;                     ///< fraction of a penetration removed per step (0: off)
  double penetrationAllowance = 1e-4;   ///< m of penetration left uncorrected by erp
  double maxCorrectionVelocity = 1.0;   ///< m/s cap of the erp correction
  bool jointLimits = false;             ///< joint position limits as unilateral constraints
  bool jointFriction = false;           ///< joint Coulomb friction (Model::friction) as boxed constraints
  bool bounceCorrection = true;         ///< position derivatives of bounces from their time of impact
  bool warmStart = true;                ///< guess each island's classes from the previous step's
  /// speculative contacts: each geometry is queried with a margin of dt times a bound on the speed of
  /// its points under the free velocity, so that a body approaching another stops at its surface
  /// (the row allows the gap to close, no more) instead of inside it, and bounces where it reaches it
  bool speculative = true;
  /// a contact row with a gap d > touchingDistance() lets it close and go restDepth further (target
  /// -(d + restDepth) / dt); a closer one holds (target 0, as a closed contact). A body that reaches a
  /// surface thus rests restDepth inside it, and one placed at zero gap rests there: both in the interior
  /// of their contact mode, not at the switch between the two targets, where the step jumps
  double restDepth = 5e-5;
  double touchingDistance() const { return 0.02 * restDepth; }
  contact::BoxedLcpOptions lcp;
};

/// What a row of the constraint problem stands for.
enum class RowKind : int { ContactNormal = 0, ContactFriction = 1, LowerLimit = 2, UpperLimit = 3, JointFriction = 4 };

struct ConstraintRow {
  RowKind kind = RowKind::ContactNormal;
  int index = 0;      ///< contact index (contact rows) or velocity index (joint rows)
  int direction = 0;  ///< friction rows: which of the contact's friction directions
};

/// Which term sets a row's velocity target (w = J v' - target), for the derivatives.
enum class TargetKind : int {
  None = 0,         ///< target 0
  Gap = 1,          ///< -(gap + restDepth) / dt (contacts), -gap / dt (limits): a gap closes within the step
  Restitution = 2,  ///< -e (J v): a bounce
  Correction = 3,   ///< erp (depth - allowance) / dt: penetration correction
  Capped = 4,       ///< the correction at its maximum velocity (a constant)
};

/// Buffers of the constrained step's derivatives (contact_step_derivatives.hpp).
struct ConstraintDerivativeBuffers {
  /// the clamped rows (nc), each row's slot among them, and the rows at a bound that follow them (P)
  contact::ClampingMap clamping;
  MatX K;                    ///< (nv x nc) (M + E)^-1 J^T P: velocity change per clamped impulse
  MatX Jc;                   ///< (nc x nv) clamped rows of J
  MatX Qc;                   ///< (nc x nc) Jc K
  Eigen::CompleteOrthogonalDecomposition<MatX> cod;  ///< of Qc, unless islandCods
  bool islandCods = false;   ///< the islands' LCP decompositions describe Qc (the solved classes)
  MatX Gq, Gv;               ///< (nc x nv) d target_C - (dJ_C) v' with respect to q and v
  MatX H;                    ///< scratch: right-hand sides of the clamping system (nc rows)
  MatX Fq;                   ///< (nv x nv) d(J^T x)/dq at fixed impulses x
  Mat6X nuNext, nuPrev;      ///< (6 x njoints) spatial velocities of the joints under v' and v
  Mat6X motionNext, motionPrev;  ///< (6 x nv) a contact's motion terms under v' and v (contactMotionTerms)
  Mat3X dpoint, dnormal, dtangent;  ///< (3 x nv), (3 x nv), (3 x 4 nv): fixed rows, so columns are fixed-size
  Mat6X dw, dW;                     ///< (6 x nv) each
  VecX ddistance, rowq;      ///< (nv) zero off `cols`
  std::vector<char> onB;     ///< (nv) dof moves body B of the current contact
  std::vector<int> cols;     ///< dofs that move A or B of the current contact
  std::vector<int> bcols;    ///< scratch: the dofs that move B
  std::vector<char> active;  ///< (nv) dof moves a body of some active contact
  std::vector<int> activeList;
  std::vector<int> gcols;    ///< columns of Gq that are not zero
  MatX P;                    ///< (nv x nv) constrained response (M + E)^-1 - K Q^+ J_C (M + E)^-1
  MatX U, V;                 ///< (nc x r) thin factors of Q^+ = U V^T (r: rank of Q), block-diagonal by island
  MatX KU, VtH;              ///< scratch: K U (nv x r) and V^T H (r x columns of H)
  MatX islandU, islandV;     ///< scratch: one island's factors
  VecX islandZ, Vtz;         ///< scratch: one island's part of a vector and its product with U^T
  std::vector<int> islandSlots, islandDofs;  ///< scratch: one island's clamped slots and its dofs
  std::vector<int> localSlot;                ///< scratch (nc): a slot's index within its island
  std::vector<int> treeMark;                 ///< scratch (njoints): a tree's first column in islandDofs, or -1
  MatX islandJ, islandK, islandQ;            ///< scratch: one island's block of J_C, K and Q
  Eigen::CompleteOrthogonalDecomposition<MatX> islandCod;  ///< of islandQ
  MatX KZ;                   ///< (nv x (2 nv + |gcols|)) K Q^+ [J_C (M + E)^-1, G_q on gcols, G_v - J_C]
  MatX R, PR;                ///< (nv x 2 nv) [d(J^T x)/dq - dt dr/dq, -dt dr/dv] and P times it
  // bouncing rows (restitution targets): their gaps, approach speeds and derivatives
  std::vector<int> bounceRows;
  std::vector<double> bounceGap;
  MatX bounceGapDq, bounceSpeedDq;  ///< (at least nc) x nv: rows 0 .. bounceRows.size() - 1 used
  VecX impactTime;                  ///< (nv) time of impact (<= 0) of the bounce moving each dof, else 0
};

/// Buffers of the constrained step's reverse mode (contact_step_vjp.hpp); sized by nv and the clamped
/// rows, so a run of steps allocates only when they grow.
struct ContactVjpBuffers {
  VecX lambda;  ///< (nv) cotangent of the step velocity v_step
  VecX z, mu;   ///< (nc) K^T lambda and (Q^+)^T K^T lambda
  VecX y, w;    ///< (nv) lambda - J_C^T mu and (M + E)^-1 y: the constrained response's P^T lambda
  // bounce correction: per bouncing island its time of impact and derivatives (nv each)
  std::vector<int> dofIsland;       ///< (nv) bouncing island moving each dof (index below), or -1
  std::vector<int> islands;         ///< rowIsland of each bouncing island
  std::vector<double> tc, N, D;     ///< per bouncing island: t_c = -N / D
  VecX jumpWeight;                  ///< per bouncing island: sum over its dofs of (v' - v)_k gq'_k
};

/// Every buffer of the contact step (sized for the rows of the last step).
struct ContactStepData {
  explicit ContactStepData(const CollisionModel& cmodel) : cdata(cmodel) {}

  CollisionData cdata;               ///< the contacts at q
  std::vector<ConstraintRow> rows;   ///< (m)
  std::vector<Vec3> tangents;        ///< (ncontacts x frictionDirections) unit friction directions
  std::vector<double> friction;      ///< (ncontacts) combined friction coefficients
  std::vector<double> restitution;   ///< (ncontacts) combined restitution
  // A row acts on the dofs of the (one or two) kinematic trees it touches (forRowTrees): the step keeps
  // its Jacobian and impulse response there only, in segments, so that its cost grows with the rows and
  // the trees they touch, not with m x nv. The dense matrices below are written from the segments by
  // denseConstraintRows(), which the derivatives call; the Delassus matrix by denseDelassus().
  std::vector<int> segStart;         ///< (m + 1) start of row r's segments in Jseg and MinvJtSeg
  VecX Jseg;                         ///< rows of J on their trees' dofs, row by row
  VecX MinvJtSeg;                    ///< columns of (M + dt D + dt^2 K)^-1 J^T on the same dofs
  std::vector<Mat6, Eigen::aligned_allocator<Mat6>> jointInverse;  ///< per tree of one joint: its block of M~^-1
  std::vector<char> jointInverseMade;  ///< jointInverse[t] is this step's
  std::vector<MatX> islandA;         ///< per island slot: its Delassus block (islandRows order); for a
                                     ///< large island only a buffer until a stage needs A's columns
  /// per island slot: what its dense block was summed from (the sizes and rows of each tree, then the rows'
  /// entries of J and M~^-1 J^T), so that a step whose island has the same bits (bodies at rest) keeps it
  std::vector<std::vector<int>> islandKeptLayout;
  std::vector<std::vector<double>> islandKeptEntries;
  std::vector<std::size_t> islandBegin;  ///< per island slot: its first index in islandRows
  bool denseRows = false;            ///< J, Jt, MinvJt and the off-tree zeros of data.Minv are written
  bool minvTrees = false;            ///< data.Minv holds this step's trees' blocks of M~^-1 (minverseTrees)
  /// A contact row's side on a link of a multi-joint tree: the row's Jacobian there is a^T J_link (a = sign
  /// (d, p x d), the world-origin wrench of the row's direction d at the contact point p), so its impulse response
  /// is (M~^-1 J_link^T) a, and the tree solves 6 columns per link instead of one per row
  struct LinkSide {
    int row, tree, joint;
    Vec6 a;
  };
  std::vector<LinkSide> linkSides;   ///< scratch: in row order
  std::vector<std::pair<int, int>> treeSegments;  ///< scratch: (tree, segment offset) of other rows on such trees
  std::vector<int> solveTrees, treeLinks;  ///< scratch: the multi-joint trees with rows; one tree's links
  MatX treeRhs, treeScratch;         ///< scratch: a multi-joint tree's right-hand sides (abaSolveTreeColumns)
  MatX J;                            ///< (m x nv) constraint rows: J v is the constrained velocity
  MatX Jt;                           ///< (nv x m) J^T
  MatX MinvJt;                       ///< (nv x m) (M + dt D + dt^2 K)^-1 J^T
  VecX b, lo, hi;                    ///< (m) LCP data: w = A x + b
  std::vector<int> findex;           ///< (m) normal row of each friction row, or -1
  VecX vfree;                        ///< (nv) velocity of the step without constraints
  VecX x;                            ///< (m) impulses of the last step
  std::vector<contact::LcpClass> classes;  ///< (m) their classes
  contact::BoxedLcpResult result;    ///< outcome of the last step's solves (the latest stage any island needed)
  // islands: rows grouped by connected kinematic trees, one LCP each
  std::vector<int> treeOf;           ///< (njoints) root joint of each joint's tree (0 for the world)
  std::vector<int> islandOf;         ///< (njoints) union-find parent over tree roots (scratch)
  std::vector<int> rowIsland;        ///< (m) island of each row
  std::vector<int> islandRows;       ///< rows sorted by island
  std::vector<int> rowTrees;         ///< (2m) the trees (root joints) row r touches: 2r and 2r + 1
  std::vector<int> islandTrees;      ///< scratch: an island's trees (root joints), in the order its rows meet them
  std::vector<int> treeSlot;         ///< (njoints) scratch: a tree's index in islandTrees, or -1
  std::vector<int> treeDof;          ///< scratch: first island-local dof of each of islandTrees
  std::vector<double> rootG;         ///< scratch: their entries in G = J L (DelassusRoot)
  std::vector<double> treeChol;      ///< scratch: per island tree, L with L L^T its block of M~^-1 (row-major)
  std::vector<int> cholStart;        ///< scratch: each island tree's first entry in treeChol
  std::vector<int> treeStart, treeFill, treeRows;  ///< scratch: an island's rows per tree (CSR by islandTrees)
  std::vector<int> localRow;         ///< (m) scratch: a row's index within its island
  std::vector<int> treeSegs;         ///< scratch: the segment (in Jseg) of each of a tree's rows for that tree
  std::vector<std::pair<long, int>> prevOrder;  ///< (key, row) of the previous step's rows, sorted
  std::vector<contact::BoxedLcpWorkspace> lcps;  ///< one workspace per island slot, reused
  VecX bi, loi, hii;                 ///< scratch: an island's LCP vectors
  std::vector<int> findexi;          ///< scratch
  Mat6X nuFree;                      ///< (6 x njoints) scratch: joint velocities under v_free (speculative reach)
  std::vector<long> warmKeys;        ///< rows of this step (geometry pair, contact ordinal, row)
  std::vector<long> prevKeys;        ///< rows of the previous step, whose classes are warmClasses
  std::vector<double> target;        ///< (m) velocity target of each row: w = J v' - target
  std::vector<TargetKind> targetKind;  ///< (m) the term that set each target
  std::vector<contact::LcpClass> warmClasses;
  /// the impulses of the previous step's rows (as warmClasses), kept only along a chain of this world's own
  /// steps: the warm start of a clamping system with many solutions takes the one nearest them
  std::vector<double> warmImpulses;
  std::vector<double> guessX;  ///< scratch: this step's rows' previous impulses (0 for new rows)
  std::vector<contact::LcpClass> guess;  ///< scratch: this step's warm-start guess
  bool warmStart = true;             ///< use the previous step's classes as a guess
  ConstraintDerivativeBuffers deriv;  ///< of contactStepDerivatives
  ContactVjpBuffers vjp;              ///< of contactStepVJP
  /// If sized to the step's rows: the classes contactStepDerivatives differentiates with instead of
  /// the solved ones (an alternative contact mode; the step and its impulses are unchanged)
  std::vector<contact::LcpClass> classOverride;

  int rowCount() const { return static_cast<int>(rows.size()); }
  /// End of the island whose rows start at islandRows[begin] (islandRows groups them island by island).
  std::size_t islandEnd(std::size_t begin) const {
    std::size_t end = begin;
    while (end < islandRows.size() && rowIsland[islandRows[end]] == rowIsland[islandRows[begin]]) ++end;
    return end;
  }
};

/// One step (step.hpp's integrator) with constraint impulses f at q:
///   (M + dt D + dt^2 K)(v' - v_free) = J^T f,  q' = integrate(q, dt v'),
/// f from the boxed LCP with w = J v' (+ speculative and restitution terms) as in docs/contact.md.
/// Contacts are detected at q with the collision model's margin. Updates cdata's contacts and the
/// warm-start cache in `cd`. Throws runtime_error if the new state is not finite.
void contactStep(const Model& model, Data& data, const CollisionModel& cmodel, ContactStepData& cd,
                 const ContactOptions& options, const double* q, const double* v, const double* tau, double dt,
                 const double* frame_wrenches, double* q_out, double* v_out);

/// Writes cd.J, cd.Jt, cd.MinvJt, the trees' blocks of data.Minv (from the step's factorisation, unless the step
/// formed them) and its zeros between trees from the last contactStep's segments (once per step: later calls
/// return at once). The derivatives of the step read them.
void denseConstraintRows(const Model& model, Data& data, ContactStepData& cd);

/// Writes A (m x m), the Delassus matrix J M~^-1 J^T of the last contactStep's rows, from its islands'
/// blocks (rows of two islands do not couple).
void denseDelassus(const Model& model, const ContactStepData& cd, Ref<MatX> A);

/// f(dof0, n) for the dof ranges [dof0, dof0 + n) of the (one or two) trees that row r touches, in the
/// order of its segments.
template <typename F>
void forRowTrees(const Model& model, const ContactStepData& cd, int r, F&& f) {
  const int ta = cd.rowTrees[2 * r], tb = cd.rowTrees[2 * r + 1];
  if (ta > 0) f(model.joints[ta].idx_v, model.subtree_nv[ta]);
  if (tb > 0 && tb != ta) f(model.joints[tb].idx_v, model.subtree_nv[tb]);
}

/// f(tree, dof0, n, offset) for the segments of row r: its values for the dofs [dof0, dof0 + n) of
/// `tree` start at `offset` in cd.Jseg and cd.MinvJtSeg.
template <typename F>
void forRowSegments(const Model& model, const ContactStepData& cd, int r, F&& f) {
  int offset = cd.segStart[r];
  const int ta = cd.rowTrees[2 * r], tb = cd.rowTrees[2 * r + 1];
  if (ta > 0) {
    f(ta, model.joints[ta].idx_v, model.subtree_nv[ta], offset);
    offset += model.subtree_nv[ta];
  }
  if (tb > 0 && tb != ta) f(tb, model.joints[tb].idx_v, model.subtree_nv[tb], offset);
}

/// Row r of J (segs = cd.Jseg), or column r of M~^-1 J^T (segs = cd.MinvJtSeg), dotted with x (dim nv).
inline double rowDot(const Model& model, const ContactStepData& cd, const VecX& segs, int r,
                     const Ref<const VecX>& x) {
  double s = 0.0;
  forRowSegments(model, cd, r, [&](int, int b, int n, int off) { s += segs.segment(off, n).dot(x.segment(b, n)); });
  return s;
}

/// y += s times row r of segs (cd.Jseg or cd.MinvJtSeg), y of dim nv.
inline void addRowTo(const Model& model, const ContactStepData& cd, const VecX& segs, int r, double s, Ref<VecX> y) {
  forRowSegments(model, cd, r, [&](int, int b, int n, int off) { y.segment(b, n) += s * segs.segment(off, n); });
}

/// The spatial velocity (world axes, at the world origin) of every joint's body under the joint
/// velocities u (dim model.nv) into nu (6 x model.njoints). Needs data.J (world-frame subspaces).
void jointVelocities(const Model& model, const Data& data, const Ref<const VecX>& u, Mat6X& nu);

/// The world-frame velocity Jacobian row d^T J_p (dim model.nv, added into `row` with `sign`) of the
/// point p (world) moving with joint j, along direction d. Needs data.J (world-frame subspaces).
void addPointRow(const Model& model, const Data& data, int j, const Vec3& p, const Vec3& d, double sign,
                 Ref<VecX> row);

}  // namespace rigidiff
