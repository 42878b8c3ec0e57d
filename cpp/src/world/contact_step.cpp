#include "rigidiff/world/contact_step.hpp"

#include <algorithm>
#include <cmath>

#include "rigidiff/algorithm/aba.hpp"
#include "rigidiff/algorithm/aba_tree_solve.hpp"
#include "rigidiff/algorithm/minverse.hpp"
#include "rigidiff/algorithm/point_jacobian.hpp"
#include "rigidiff/contact/point_jacobian.hpp"
#include "rigidiff/macros.hpp"
#include "rigidiff/world/friction_basis.hpp"
#include "rigidiff/world/step.hpp"
#include "island_delassus.hpp"

namespace rigidiff {

void jointVelocities(const Model& model, const Data& data, const Ref<const VecX>& u, Mat6X& nu) {
  nu.resize(6, model.njoints);
  nu.col(0).setZero();
  for (int j = 1; j < model.njoints; ++j) {
    const JointModel& jm = model.joints[j];
    nu.col(j) = nu.col(model.parents[j]) + data.J.middleCols(jm.idx_v, jm.nv) * u.segment(jm.idx_v, jm.nv);
  }
}

void addPointRow(const Model& model, const Data& data, int j, const Vec3& p, const Vec3& d, double sign,
                 Ref<VecX> row) {
  addChainPointRow(model, data, j, p, d, sign, 0, row.data());
}

namespace {

// the first entry of row r's segment for tree t (a tree the row touches) and that tree's first dof
double* rowSegment(const Model& model, ContactStepData& cd, int r, int t, int& dof0) {
  dof0 = model.joints[t].idx_v;
  const int first = cd.rowTrees[2 * r];
  return cd.Jseg.data() + cd.segStart[r] + (t == first ? 0 : model.subtree_nv[first]);
}

double combine(Combine how, double a, double b) {
  switch (how) {
    case Combine::GeometricMean: return std::sqrt(a * b);
    case Combine::Min: return std::min(a, b);
    case Combine::Max: return std::max(a, b);
    case Combine::Mean: return 0.5 * (a + b);
  }
  return std::sqrt(a * b);
}

long contactKey(int ga, int gb, int ordinal, int row, int ngeom) {
  return ((static_cast<long>(ga) * ngeom + gb) * 64 + std::min(ordinal, 63)) * 8 + row;
}

constexpr double kLongestReach = 1e12;  // m: rigidiff/_validate.py's MAX_COLLISION_LENGTH

// cdata.reach: dt times a bound on the speed of each geometry's points under v_free. A point p of a body
// with world-frame spatial velocity (v0, w) (v0: the velocity of the body point at the world origin)
// moves at v0 + w x p; the shape lies within |box_half| of its box centre c, so |v0 + w x c| + |w| |box_half|
// bounds it. Static geometries do not move.
void speculativeReach(const Model& model, const Data& data, const CollisionModel& cmodel, ContactStepData& cd,
                      double dt) {
  jointVelocities(model, data, cd.vfree, cd.nuFree);
  const Mat6X& nu = cd.nuFree;
  CollisionData& cdata = cd.cdata;
  for (std::size_t k = 0; k < cmodel.geometries.size(); ++k) {
    const Geometry& g = cmodel.geometries[k];
    if (g.joint == 0) {
      cdata.reach[k] = 0.0;
      continue;
    }
    const Vec3 v0 = nu.col(g.joint).head<3>(), w = nu.col(g.joint).tail<3>();
    const bool plane = g.shape.type == ShapeType::Plane;
    const Vec3 c = plane ? cdata.placements[k].p : cdata.placements[k].actPoint(g.box_center);
    const double spin = plane ? 0.0 : w.norm() * g.box_half.norm();
    // at most the longest collision length (no shape may be larger): speeds past 1e12 m per step are far
    // beyond any simulation's scale, and a margin past about 1e154 m overflowed the narrow phase's squared
    // distances, which then lost the contacts of a body driven by a torque of 1e200
    cdata.reach[k] = std::min(dt * ((v0 + w.cross(c)).norm() + spin), kLongestReach);
  }
}

// Speculative contacts whose gap the free motion does not close within the step are dropped: they would
// only add rows that separate (the reach is a bound over each shape, not the approach at one contact).
// A contact within touchingDistance() is kept, as a closed one.
void dropUnreachedGaps(const CollisionModel& cmodel, ContactStepData& cd, const ContactOptions& options, double dt) {
  auto& contacts = cd.cdata.contacts.contacts;
  const Mat6X& nu = cd.nuFree;
  std::size_t kept = 0;
  for (std::size_t k = 0; k < contacts.size(); ++k) {
    const Contact& c = contacts[k];
    bool keep = c.distance <= options.touchingDistance();
    if (!keep) {
      const Vec3 va = pointVelocity(cmodel.geometries[c.geom_a].body, nu, c.point);
      const Vec3 vb = pointVelocity(cmodel.geometries[c.geom_b].body, nu, c.point);
      keep = c.distance + dt * c.normal.dot(va - vb) < 0.0;  // closes under the free motion
    }
    if (keep) contacts[kept++] = c;
  }
  contacts.resize(kept);
}

// appends a row with its warm-start key
void pushRow(ContactStepData& cd, RowKind kind, int index, long key, int direction = 0) {
  cd.rows.push_back({kind, index, direction});
  cd.warmKeys.push_back(key);
}


// root joint of every joint's tree; then the islands: union of the trees each row touches
void treesAndIslands(const Model& model, const CollisionModel& cmodel, ContactStepData& cd, int m, int ncontact_rows) {
  cd.treeOf.assign(model.njoints, 0);
  for (int j = 1; j < model.njoints; ++j) cd.treeOf[j] = model.parents[j] == 0 ? j : cd.treeOf[model.parents[j]];
  cd.islandOf.resize(model.njoints);
  for (int j = 0; j < model.njoints; ++j) cd.islandOf[j] = j;
  auto find = [&](int t) {
    while (cd.islandOf[t] != t) t = cd.islandOf[t] = cd.islandOf[cd.islandOf[t]];
    return t;
  };
  // the trees each row touches (twice the same one for a row on one tree)
  cd.rowTrees.resize(2 * m);
  for (int r = 0; r < m; ++r) {
    const ConstraintRow& row = cd.rows[r];
    int ta, tb;
    if (r < ncontact_rows) {
      const Contact& c = cd.cdata.contacts.contacts[row.index];
      ta = cd.treeOf[cmodel.geometries[c.geom_a].joint];
      tb = cd.treeOf[cmodel.geometries[c.geom_b].joint];
    } else {
      ta = tb = cd.treeOf[model.dof_joint[row.index]];
    }
    if (ta == 0) ta = tb;  // one side welded to the world
    if (tb == 0) tb = ta;
    cd.rowTrees[2 * r] = ta;
    cd.rowTrees[2 * r + 1] = tb;
    const int ra = find(ta), rb = find(tb);
    if (ra != rb) cd.islandOf[std::max(ra, rb)] = std::min(ra, rb);
  }
  cd.rowIsland.resize(m);
  for (int r = 0; r < m; ++r) cd.rowIsland[r] = find(cd.rowTrees[2 * r]);
  cd.islandRows.resize(m);
  for (int r = 0; r < m; ++r) cd.islandRows[r] = r;
  std::stable_sort(cd.islandRows.begin(), cd.islandRows.end(),
                   [&](int a, int b) { return cd.rowIsland[a] < cd.rowIsland[b]; });
}

// The trees' blocks of M~^-1 in data.Minv from the step's articulated-body factorisation, once per step: the
// step forms them only when a large island factors them (treeFactors); the derivatives read them.
void minverseTrees(const Model& model, Data& data, ContactStepData& cd) {
  if (cd.minvTrees) return;
  computeMinverseTreeBlocksFromFactorization(model, data, cd.treeOf);
  cd.minvTrees = true;
}

// The right-hand sides of a multi-joint tree's solve: 6 per link its contact rows touch (into links), one per
// other row on it (a joint limit or joint friction).
int treeColumns(const ContactStepData& cd, int t, std::vector<int>& links) {
  links.clear();
  for (const auto& side : cd.linkSides)
    if (side.tree == t && std::find(links.begin(), links.end(), side.joint) == links.end()) links.push_back(side.joint);
  int generic = 0;
  for (const auto& [tree, off] : cd.treeSegments) generic += tree == t;
  return 6 * static_cast<int>(links.size()) + generic;
}

// The link solve of one multi-joint tree t (treeColumns' links in cd.treeLinks): the columns M~^-1 J_link^T of each
// link and M~^-1 j of each other row, then each contact row's response as the sum over its sides on t of
// (M~^-1 J_link^T) a.
void solveTreeResponses(const Model& model, const Data& data, ContactStepData& cd, int t, int k) {
  const int n = model.subtree_nv[t], b = model.joints[t].idx_v, L = static_cast<int>(cd.treeLinks.size());
  if (cd.treeRhs.rows() < n || cd.treeRhs.cols() < k)
    cd.treeRhs.resize(std::max<Eigen::Index>(n, cd.treeRhs.rows()), std::max<Eigen::Index>(k, cd.treeRhs.cols()));
  auto X = cd.treeRhs.topLeftCorner(n, k);
  X.setZero();
  for (int l = 0; l < L; ++l)  // J_link^T: the link's chain of world-frame subspaces
    forChainDofs(model, cd.treeLinks[l], [&](int c) { X.block<1, 6>(c - b, 6 * l) = data.J.col(c).transpose(); });
  int g = 6 * L;
  for (const auto& [tree, off] : cd.treeSegments)
    if (tree == t) X.col(g++) = cd.Jseg.segment(off, n);
  abaSolveTreeColumns(model, data, t, X, cd.treeScratch);
  g = 6 * L;
  for (const auto& [tree, off] : cd.treeSegments)
    if (tree == t) cd.MinvJtSeg.segment(off, n) = X.col(g++);
  for (std::size_t s0 = 0; s0 < cd.linkSides.size();) {
    const int r = cd.linkSides[s0].row;
    std::size_t s1 = s0;
    while (s1 < cd.linkSides.size() && cd.linkSides[s1].row == r) ++s1;
    bool first = true;
    for (std::size_t e = s0; e < s1; ++e) {
      const auto& side = cd.linkSides[e];
      if (side.tree != t) continue;
      const int l =
          static_cast<int>(std::find(cd.treeLinks.begin(), cd.treeLinks.end(), side.joint) - cd.treeLinks.begin());
      const int rowFirst = cd.rowTrees[2 * r];
      auto out = cd.MinvJtSeg.segment(cd.segStart[r] + (t == rowFirst ? 0 : model.subtree_nv[rowFirst]), n);
      if (first)
        out.noalias() = X.middleCols<6>(6 * l) * side.a;
      else
        out.noalias() += X.middleCols<6>(6 * l) * side.a;
      first = false;
    }
    s0 = s1;
  }
}

// The impulse responses M~^-1 J^T of the rows (cd.MinvJtSeg), M~ = M + dt D + dt^2 K. M~^-1 couples only the dofs
// of one kinematic tree, and a row touches the trees of its two bodies. On a tree of one joint (a free body) the
// block of M~^-1 is that joint's inverse inertia. A tree of several joints whose rows need fewer right-hand sides
// than half its dofs (a humanoid's two feet: 12 columns for 38 dofs) solves them through the articulated-body
// factorisation (solveTreeResponses); otherwise (a quadruped's four feet) the trees' blocks of M~^-1 are formed
// and multiplied, which is cheaper there.
void impulseResponses(const Model& model, Data& data, ContactStepData& cd, int m, int ncontact_rows) {
  cd.minvTrees = false;
  cd.treeSegments.clear();
  cd.solveTrees.clear();
  for (int r = 0; r < m; ++r)
    forRowSegments(model, cd, r, [&](int t, int, int n, int off) {
      if (n == model.joints[t].nv) return;
      cd.solveTrees.push_back(t);
      if (r >= ncontact_rows) cd.treeSegments.emplace_back(t, off);  // a joint's row: its own column
    });
  std::sort(cd.solveTrees.begin(), cd.solveTrees.end());
  cd.solveTrees.erase(std::unique(cd.solveTrees.begin(), cd.solveTrees.end()), cd.solveTrees.end());
  bool solve = !cd.solveTrees.empty();
  for (const int t : cd.solveTrees) solve = solve && 2 * treeColumns(cd, t, cd.treeLinks) < model.subtree_nv[t];
  if (!solve && !cd.solveTrees.empty()) minverseTrees(model, data, cd);
  const MatX& Minv = data.Minv;
  // a single-joint tree's block of M~^-1, symmetric from its upper triangle as minverseSweeps writes it into
  // M~^-1: made once per tree and step, not once per row
  cd.jointInverseMade.assign(model.njoints, 0);
  if (cd.jointInverse.size() < static_cast<std::size_t>(model.njoints)) cd.jointInverse.resize(model.njoints);
  for (int r = 0; r < m; ++r) {
    forRowSegments(model, cd, r, [&](int t, int b, int n, int off) {
      const bool free = n == model.joints[t].nv;
      if (!free && solve) return;
      if (free && !cd.jointInverseMade[t]) {
        Mat6& made = cd.jointInverse[t];
        made = data.Dinv[t];
        made.triangularView<Eigen::StrictlyLower>() = made.transpose();
        cd.jointInverseMade[t] = 1;
      }
      const Mat6& block = cd.jointInverse[t];
      if (n == 6) {  // a free body's: the fixed-size product, without the general kernel's set-up
        if (free)
          cd.MinvJtSeg.segment<6>(off).noalias() = block * cd.Jseg.segment<6>(off);
        else
          cd.MinvJtSeg.segment<6>(off).noalias() = Minv.block<6, 6>(b, b) * cd.Jseg.segment<6>(off);
        return;
      }
      // a row moves only the dofs of its bodies' chains (a foot's 12 of a humanoid's 38): the columns of
      // those dofs alone
      auto out = cd.MinvJtSeg.segment(off, n);
      out.setZero();
      for (int k = 0; k < n; ++k) {
        const double jk = cd.Jseg[off + k];
        if (jk == 0.0) continue;
        if (free)
          out.noalias() += block.block(0, k, n, 1) * jk;
        else
          out.noalias() += Minv.block(b, b + k, n, 1) * jk;
      }
    });
  }
  if (!solve) return;
  for (const int t : cd.solveTrees) solveTreeResponses(model, data, cd, t, treeColumns(cd, t, cd.treeLinks));
}

// Lower Cholesky factors L (row-major, n x n) of each island tree's block of M~^-1 = L L^T, into
// cd.treeChol at cd.cholStart[slot]; false if a block is not numerically positive definite.
bool treeFactors(const Model& model, const Data& data, ContactStepData& cd, int nt) {
  cd.cholStart.assign(nt + 1, 0);
  for (int s = 0; s < nt; ++s) {
    const int n = model.subtree_nv[cd.islandTrees[s]];
    cd.cholStart[s + 1] = cd.cholStart[s] + n * n;
  }
  cd.treeChol.assign(cd.cholStart[nt], 0.0);
  for (int s = 0; s < nt; ++s) {
    const int t = cd.islandTrees[s], n = model.subtree_nv[t], b = model.joints[t].idx_v;
    double* L = cd.treeChol.data() + cd.cholStart[s];
    for (int j = 0; j < n; ++j) {
      double d = data.Minv(b + j, b + j);
      for (int p = 0; p < j; ++p) d -= L[j * n + p] * L[j * n + p];
      if (!(d > 0.0)) return false;
      const double ljj = std::sqrt(d);
      L[j * n + j] = ljj;
      for (int i = j + 1; i < n; ++i) {
        double v = data.Minv(b + i, b + j);
        for (int p = 0; p < j; ++p) v -= L[i * n + p] * L[j * n + p];
        L[i * n + j] = v / ljj;
      }
    }
  }
  return true;
}

// one island: rows islandRows[begin:end]; its Delassus block (cd.islandA[slot]), then x and classes of its rows
void solveIsland(const Model& model, Data& data, ContactStepData& cd, const ContactOptions& options, std::size_t begin,
                 std::size_t end, int slot) {
  const int mi = static_cast<int>(end - begin);
  const int* rows = cd.islandRows.data() + begin;
  // the island's rows that touch each tree (island-local indices, ascending): a row's Jacobian and its
  // impulse response live on the dofs of its one or two trees, and A couples two rows only through a
  // tree they share, so A is summed tree by tree over the rows of that tree alone. The island's trees
  // are numbered in the order its rows meet them (cd.treeSlot, reset at the end): the work stays in
  // the island's size, whatever the number of bodies in the world.
  cd.islandTrees.clear();
  for (int k = 0; k < mi; ++k)
    for (int side = 0; side < 2; ++side) {
      const int t = cd.rowTrees[2 * rows[k] + side];
      if (t <= 0 || cd.treeSlot[t] >= 0) continue;
      cd.treeSlot[t] = static_cast<int>(cd.islandTrees.size());
      cd.islandTrees.push_back(t);
    }
  const int nt = static_cast<int>(cd.islandTrees.size());
  cd.treeStart.assign(nt + 1, 0);
  // a row counted (fill false) or listed (fill true) under each of its trees
  auto placeRow = [&](int k, bool fill) {
    const int ta = cd.rowTrees[2 * rows[k]], tb = cd.rowTrees[2 * rows[k] + 1];
    for (const int t : {ta, tb == ta ? 0 : tb}) {
      if (t <= 0) continue;
      if (fill)
        cd.treeRows[cd.treeFill[cd.treeSlot[t]]++] = k;
      else
        ++cd.treeStart[cd.treeSlot[t] + 1];
    }
  };
  for (int k = 0; k < mi; ++k) placeRow(k, false);
  for (int s = 0; s < nt; ++s) cd.treeStart[s + 1] += cd.treeStart[s];
  cd.treeRows.resize(cd.treeStart[nt]);
  cd.treeFill.assign(cd.treeStart.begin(), cd.treeStart.end() - 1);
  for (int k = 0; k < mi; ++k) placeRow(k, true);
  // the island's rows as sparse rows of J and K = M~^-1 J^T over the island's own dofs (its trees' dofs,
  // tree after tree): projected Gauss-Seidel sweeps them in the time of their entries. An island with
  // more rows than dofs also gets the rows of G = J L (L L^T = M~^-1, one factor per tree): its
  // clamping solve then works in the dofs rather than the rows.
  const bool sparse = mi >= contact::kSparseFactorRows;  // small islands do not read the factors
  cd.treeDof.assign(nt + 1, 0);
  for (int s = 0; s < nt; ++s) cd.treeDof[s + 1] = cd.treeDof[s] + model.subtree_nv[cd.islandTrees[s]];
  bool rooted = mi > cd.treeDof[nt];
  if (rooted) {
    minverseTrees(model, data, cd);
    rooted = treeFactors(model, data, cd, nt);
  }
  // the factors live in the island's LCP workspace, so that the clamping system a root solve leaves unformed
  // can still be formed from them for the derivatives (after the other islands' solves)
  if (static_cast<int>(cd.lcps.size()) <= slot) cd.lcps.resize(slot + 1);
  contact::BoxedLcpWorkspace& ws = cd.lcps[slot];
  contact::DelassusFactorStorage& kept = ws.factorStorage;
  if (sparse || rooted) {  // (a small island's solve reads none of it)
    kept.start.assign(mi + 1, 0);
    kept.index.clear();
    kept.J.clear();
    kept.K.clear();
    kept.dim = cd.treeDof[nt];
    kept.blocks = nt;
    kept.blockStart.assign(cd.treeDof.begin(), cd.treeDof.begin() + nt + 1);
  }
  cd.rootG.clear();
  for (int k = 0; (sparse || rooted) && k < mi; ++k) {
    forRowSegments(model, cd, rows[k], [&](int t, int, int n, int off) {
      const int ts = cd.treeSlot[t];
      for (int d = 0; d < n; ++d) kept.index.push_back(cd.treeDof[ts] + d);
      if (sparse) {
        kept.J.insert(kept.J.end(), cd.Jseg.data() + off, cd.Jseg.data() + off + n);
        kept.K.insert(kept.K.end(), cd.MinvJtSeg.data() + off, cd.MinvJtSeg.data() + off + n);
      }
      if (rooted) {  // g = L^T j on this tree
        const double* L = cd.treeChol.data() + cd.cholStart[ts];
        const std::size_t at = cd.rootG.size();
        cd.rootG.resize(at + n);
        if (n == 6)
          island::lowerTransposeTimes6(L, cd.Jseg.data() + off, cd.rootG.data() + at);
        else
          island::lowerTransposeTimes(L, n, cd.Jseg.data() + off, cd.rootG.data() + at);
      }
    });
    kept.start[k + 1] = static_cast<int>(kept.index.size());
  }
  if (static_cast<int>(cd.islandA.size()) <= slot) cd.islandA.resize(slot + 1);
  MatX& Ai = cd.islandA[slot];
  if (sparse)
    island::forgetIslandBlock(cd, slot);  // the LCP forms the block only if a stage needs it
  else
    island::islandBlock(model, cd, rows, mi, nt, slot, Ai);
  for (const int t : cd.islandTrees) cd.treeSlot[t] = -1;
  cd.bi.resize(mi);
  cd.loi.resize(mi);
  cd.hii.resize(mi);
  cd.findexi.assign(mi, -1);
  for (int k = 0; k < mi; ++k) {
    const int r = rows[k];
    cd.bi[k] = cd.b[r];
    cd.loi[k] = cd.lo[r];
    cd.hii[k] = cd.hi[r];
    cd.localRow[r] = k;
  }
  for (int k = 0; k < mi; ++k)  // a friction row and its normal share their trees, hence their island
    if (cd.findex[rows[k]] >= 0) cd.findexi[k] = cd.localRow[cd.findex[rows[k]]];
  // warm start: the previous step's classes for the rows that existed then. A row new in this step (a body
  // touching a pile) is guessed from its own velocity: a normal or limit row that approaches clamps, one
  // that separates does not, a friction row sticks when its normal clamps, joint friction sticks. A wrong
  // guess fails the validity check and the solve goes on cold, as it would have without the guess.
  const contact::LcpClass* guess = nullptr;
  if (cd.warmStart && options.warmStart && !cd.warmClasses.empty()) {
    cd.guess.assign(mi, contact::LcpClass::Separating);
    const bool withImpulses = cd.warmImpulses.size() == cd.warmClasses.size();
    cd.guessX.assign(withImpulses ? mi : 0, 0.0);
    int found = 0;
    std::vector<int> fresh;  // rows with no previous class
    for (int k = 0; k < mi; ++k) {
      // the first previous row with this key (prevOrder: (key, row) sorted)
      const auto it = std::lower_bound(cd.prevOrder.begin(), cd.prevOrder.end(),
                                       std::make_pair(cd.warmKeys[rows[k]], 0));
      if (it == cd.prevOrder.end() || it->first != cd.warmKeys[rows[k]] ||
          it->second >= static_cast<int>(cd.warmClasses.size())) {
        fresh.push_back(k);
        continue;
      }
      cd.guess[k] = cd.warmClasses[it->second];
      if (withImpulses) cd.guessX[k] = cd.warmImpulses[it->second];
      ++found;
    }
    // in a large island, a few new rows only: when many are new (an impact) the guess is poor, and a failed
    // warm start there costs a factorisation of its clamping system before the cold solve
    if (found > 0 && (mi < contact::kSparseFactorRows || 8 * static_cast<int>(fresh.size()) <= mi)) {
      for (const int k : fresh)  // normals and limits first: friction rows follow their normal's guess
        if (cd.findexi[k] < 0)
          cd.guess[k] = (std::isfinite(cd.hii[k]) || cd.bi[k] < 0.0) ? contact::LcpClass::Clamping
                                                                     : contact::LcpClass::Separating;
      for (const int k : fresh)
        if (cd.findexi[k] >= 0) cd.guess[k] = cd.guess[cd.findexi[k]];
      guess = cd.guess.data();
    }
  }
  contact::BoxedLcp lcp(mi, sparse ? nullptr : Ai.data(), cd.bi.data(), cd.loi.data(), cd.hii.data(),
                        cd.findexi.data());
  const contact::DelassusFactors factors = kept.view();
  if (sparse) {
    lcp.factors = &factors;
    lcp.lazyA = &Ai;
  }
  contact::DelassusRoot root;
  root.dim = cd.treeDof[nt];
  root.start = kept.start.data();
  root.index = kept.index.data();
  root.G = cd.rootG.data();
  if (rooted) lcp.root = &root;
  const contact::BoxedLcpResult res =
      contact::solveBoxedLcp(lcp, ws, options.lcp, guess, guess && !cd.guessX.empty() ? cd.guessX.data() : nullptr);
  // the step reports the latest stage any island needed
  cd.result.success = cd.result.success && res.success;
  cd.result.frictionDropped = cd.result.frictionDropped || res.frictionDropped;
  if (static_cast<int>(res.solver) > static_cast<int>(cd.result.solver) || !res.success) cd.result.solver = res.solver;
  for (int i = 0; i < mi; ++i) {
    cd.x[rows[i]] = ws.x[i];
    cd.classes[rows[i]] = ws.classes[i];
  }
}

}  // namespace

void contactStep(const Model& model, Data& data, const CollisionModel& cmodel, ContactStepData& cd,
                 const ContactOptions& options, const double* q, const double* v, const double* tau, double dt,
                 const double* frame_wrenches, double* q_out, double* v_out) {
  RD_CHECK_ARG(options.frictionDirections == 2 || options.frictionDirections == 4,
               "friction directions must be 2 or 4, got " << options.frictionDirections);
  const int nv = model.nv;
  const int ngeom = static_cast<int>(cmodel.geometries.size());
  // the free step; its aba leaves q's kinematics, from which the contacts at q follow, and the
  // factorisation the impulses need
  cd.vfree.resize(nv);
  freeVelocity(model, data, q, v, tau, dt, frame_wrenches, cd.vfree.data());
  if (ngeom > 0) {
    updateGeometryPlacements(model, data, cmodel, cd.cdata);
    if (options.speculative)
      speculativeReach(model, data, cmodel, cd, dt);
    else
      std::fill(cd.cdata.reach.begin(), cd.cdata.reach.end(), 0.0);
    detectContactsAtPlacements(model, cmodel, cd.cdata);
    if (options.speculative) dropUnreachedGaps(cmodel, cd, options, dt);
  } else {
    cd.cdata.contacts.clear();
  }
  Eigen::Map<const VecX> vq(v, nv);

  // rows: per contact a normal and its friction directions, then limits and joint friction
  cd.prevKeys.swap(cd.warmKeys);  // no copy: the buffers trade places each step
  cd.rows.clear();
  cd.warmKeys.clear();
  cd.tangents.clear();
  cd.friction.clear();
  cd.restitution.clear();
  const auto& contacts = cd.cdata.contacts.contacts;
  int ordinal = 0;
  for (int k = 0; k < static_cast<int>(contacts.size()); ++k) {
    const Contact& c = contacts[k];
    ordinal = (k > 0 && contacts[k - 1].geom_a == c.geom_a && contacts[k - 1].geom_b == c.geom_b) ? ordinal + 1 : 0;
    const Geometry& ga = cmodel.geometries[c.geom_a];
    const Geometry& gb = cmodel.geometries[c.geom_b];
    const double mu = combine(options.frictionCombine, ga.friction, gb.friction);
    const double e = combine(options.restitutionCombine, ga.restitution, gb.restitution);
    cd.friction.push_back(mu);
    cd.restitution.push_back(e);
    cd.tangents.resize(cd.tangents.size() + options.frictionDirections);
    frictionBasis(c.normal, cd.cdata.placements[c.geom_b].R, options.frictionDirections,
                  cd.tangents.data() + cd.tangents.size() - options.frictionDirections);
    pushRow(cd, RowKind::ContactNormal, k, contactKey(c.geom_a, c.geom_b, ordinal, 0, ngeom));
    if (mu > 0.0)
      for (int t = 0; t < options.frictionDirections; ++t)
        pushRow(cd, RowKind::ContactFriction, k, contactKey(c.geom_a, c.geom_b, ordinal, 1 + t, ngeom), t);
  }
  const int ncontact_rows = cd.rowCount();
  if (options.jointLimits) {
    for (int j = 1; j < model.njoints; ++j) {
      const JointModel& jm = model.joints[j];
      if (jm.type == JointType::Planar)
        for (int k = 0; k < 2; ++k)
          if (std::isfinite(model.lower_limit[jm.idx_q + k]) || std::isfinite(model.upper_limit[jm.idx_q + k]))
            RD_THROW(std::invalid_argument, "planar joint '" << model.names[j] << "' has position limits on its "
                     << "xy"[k] << " coordinate, which the contact step's joint limits cannot hold (only its angle's): "
                     "remove them, or use World(solver=\"barrier\"), which holds them");
      int dofs[3];
      for (int k = 0, n = linearlyLimitedDofs(jm, dofs); k < n; ++k) {
        const int iq = jm.idx_q + dofs[k], iv = jm.idx_v + dofs[k];
        const double qn = q[iq] + dt * cd.vfree[iv];
        if (std::isfinite(model.lower_limit[iq]) && qn < model.lower_limit[iq])
          pushRow(cd, RowKind::LowerLimit, iv, -1 - 2L * iv);
        if (std::isfinite(model.upper_limit[iq]) && qn > model.upper_limit[iq])
          pushRow(cd, RowKind::UpperLimit, iv, -2 - 2L * iv);
      }
    }
  }
  if (options.jointFriction)
    for (int iv = 0; iv < nv; ++iv)
      if (model.friction[iv] > 0.0) pushRow(cd, RowKind::JointFriction, iv, -1000000L - iv);

  const int m = cd.rowCount();
  cd.denseRows = false;
  cd.islandBegin.clear();
  if (m == 0) {
    cd.segStart.assign(1, 0);
    Eigen::Map<VecX>(v_out, nv) = cd.vfree;
    cd.warmClasses.clear();
    cd.warmImpulses.clear();
    cd.result = contact::BoxedLcpResult();
    cd.result.success = true;
    finishStep(model, data, q, dt, q_out, v_out);
    return;
  }

  // the rows' Jacobians, on the dofs of the trees each row touches, and LCP data (data.J holds the
  // world-frame subspaces after aba)
  treesAndIslands(model, cmodel, cd, m, ncontact_rows);
  cd.segStart.resize(m + 1);
  cd.segStart[0] = 0;
  for (int r = 0; r < m; ++r) {
    int n = 0;
    forRowTrees(model, cd, r, [&](int, int len) { n += len; });
    cd.segStart[r + 1] = cd.segStart[r] + n;
  }
  cd.Jseg.setZero(cd.segStart[m]);
  cd.MinvJtSeg.resize(cd.segStart[m]);
  cd.b.resize(m);
  cd.lo.resize(m);
  cd.hi.resize(m);
  cd.findex.assign(m, -1);
  cd.target.assign(m, 0.0);
  cd.targetKind.assign(m, TargetKind::None);
  const int nt = options.frictionDirections;
  int normal_row = -1;
  cd.linkSides.clear();
  for (int r = 0; r < ncontact_rows; ++r) {
    const ConstraintRow& row = cd.rows[r];
    const Contact& c = contacts[row.index];
    Vec3 d = c.normal;
    if (row.kind == RowKind::ContactFriction) d = cd.tangents[nt * row.index + row.direction];
    for (const auto& [body, sign] : {std::pair<BodyRef, double>{cmodel.geometries[c.geom_a].body, 1.0},
                                     std::pair<BodyRef, double>{cmodel.geometries[c.geom_b].body, -1.0}}) {
      if (!body.moves()) continue;
      int dof0 = 0;
      const int t = cd.treeOf[body.joint()];
      double* seg = rowSegment(model, cd, r, t, dof0);
      addPointRow(model, data, body, c.point, d, sign, dof0, seg);
      if (body.kind == BodyKind::Articulated && model.subtree_nv[t] != model.joints[t].nv) {
        Vec6 a;
        a << sign * d, sign * c.point.cross(d);
        cd.linkSides.push_back({r, t, body.joint(), a});
      }
    }
    if (row.kind == RowKind::ContactNormal) {
      normal_row = r;
      cd.lo[r] = 0.0;
      cd.hi[r] = INFINITY;
      // allowed approach (a gap closes within the step), bounce, and optional penetration correction
      // (the kind of term that sets the target is kept for the derivatives)
      const double gap = c.distance;
      double tv = 0.0;
      TargetKind kind = TargetKind::None;
      // a gap closes and the body stops restDepth inside; a contact within touchingDistance() holds,
      // like a closed one: bodies rest in the interior of their mode (landed at -restDepth, or placed
      // at zero gap), away from the switch between the two targets, where the step jumps
      if (gap > options.touchingDistance()) {
        tv = -(gap + options.restDepth) / dt;
        kind = TargetKind::Gap;
      }
      const double vn = rowDot(model, cd, cd.Jseg, r, vq);
      const double e = cd.restitution[row.index];
      // a bounce: an approach faster than the threshold, in contact or closing its gap within the step
      // (a speculative contact bounces in the step that reaches the surface, not one step later)
      if ((gap <= 0.0 || gap < -vn * dt) && e > 0.0 && -vn > options.restitutionThreshold && -e * vn > tv) {
        tv = -e * vn;
        kind = TargetKind::Restitution;
      }
      if (options.erp > 0.0 && -gap > options.penetrationAllowance) {
        const double corr = options.erp * (-gap - options.penetrationAllowance) / dt;
        if (std::min(corr, options.maxCorrectionVelocity) > tv) {
          tv = std::min(corr, options.maxCorrectionVelocity);
          kind = corr < options.maxCorrectionVelocity ? TargetKind::Correction : TargetKind::Capped;
        }
      }
      cd.target[r] = tv;
      cd.targetKind[r] = kind;
    } else {
      // with 4 directions the rows' bounds sum to an octagon whose apothem is mu f_n (exact along the
      // directions, at most 8 % over in between); with 2 they make the square of half-side mu f_n
      const double mu = cd.friction[row.index] / (nt == 4 ? 1.0 + std::sqrt(2.0) : 1.0);
      cd.lo[r] = -mu;
      cd.hi[r] = mu;
      cd.findex[r] = normal_row;
    }
  }
  for (int r = ncontact_rows; r < m; ++r) {
    const ConstraintRow& row = cd.rows[r];
    const int iv = row.index;
    const JointModel& jm = model.joints[model.dof_joint[iv]];
    const int iq = jm.idx_q + (iv - jm.idx_v);  // a limited dof's coordinate (linearlyLimitedDofs)
    int dof0 = 0;
    double* seg = rowSegment(model, cd, r, cd.treeOf[model.dof_joint[iv]], dof0);
    if (row.kind == RowKind::JointFriction) {
      seg[iv - dof0] = 1.0;
      cd.lo[r] = -model.friction[iv] * dt;
      cd.hi[r] = model.friction[iv] * dt;
      continue;
    }
    const bool lower = row.kind == RowKind::LowerLimit;
    seg[iv - dof0] = lower ? 1.0 : -1.0;
    const double gap = lower ? q[iq] - model.lower_limit[iq] : model.upper_limit[iq] - q[iq];
    double tv = 0.0;
    TargetKind kind = TargetKind::None;
    if (gap > 0.0) {  // a limit stops the joint at the limit itself (restDepth is for contacts)
      tv = -gap / dt;
      kind = TargetKind::Gap;
    }
    if (options.erp > 0.0 && gap < 0.0) {
      const double corr = options.erp * (-gap) / dt;
      tv = std::min(corr, options.maxCorrectionVelocity);
      kind = corr < options.maxCorrectionVelocity ? TargetKind::Correction : TargetKind::Capped;
    }
    cd.target[r] = tv;
    cd.targetKind[r] = kind;
    cd.lo[r] = 0.0;
    cd.hi[r] = INFINITY;
  }

  impulseResponses(model, data, cd, m, ncontact_rows);
  for (int r = 0; r < m; ++r) cd.b[r] = rowDot(model, cd, cd.Jseg, r, cd.vfree) - cd.target[r];
  cd.localRow.resize(m);
  cd.prevOrder.resize(cd.prevKeys.size());
  for (std::size_t r = 0; r < cd.prevKeys.size(); ++r) cd.prevOrder[r] = {cd.prevKeys[r], static_cast<int>(r)};
  std::sort(cd.prevOrder.begin(), cd.prevOrder.end());
  cd.x.setZero(m);
  cd.treeSlot.assign(model.njoints, -1);
  cd.classes.assign(m, contact::LcpClass::Separating);
  cd.result = contact::BoxedLcpResult();
  cd.result.success = true;
  int slot = 0;
  for (std::size_t begin = 0; begin < cd.islandRows.size(); ++slot) {
    const std::size_t end = cd.islandEnd(begin);
    cd.islandBegin.push_back(begin);
    solveIsland(model, data, cd, options, begin, end, slot);
    begin = end;
  }
  cd.warmClasses = cd.classes;
  cd.warmImpulses.assign(cd.x.data(), cd.x.data() + m);

  Eigen::Map<VecX> vn(v_out, nv);
  vn = cd.vfree;
  for (int r = 0; r < m; ++r)
    if (cd.x[r] != 0.0) addRowTo(model, cd, cd.MinvJtSeg, r, cd.x[r], vn);
  finishStep(model, data, q, dt, q_out, v_out);
}

void denseConstraintRows(const Model& model, Data& data, ContactStepData& cd) {
  if (cd.denseRows) return;
  const int m = cd.rowCount(), nv = model.nv;
  cd.J.setZero(m, nv);
  cd.MinvJt.setZero(nv, m);
  for (int r = 0; r < m; ++r)
    forRowSegments(model, cd, r, [&](int, int b, int n, int off) {
      cd.J.row(r).segment(b, n) = cd.Jseg.segment(off, n).transpose();
      cd.MinvJt.col(r).segment(b, n) = cd.MinvJtSeg.segment(off, n);
    });
  cd.Jt = cd.J.transpose();
  if (m > 0) {  // the step's rows: its derivatives read the trees' blocks of data.Minv, and zeros between them
    minverseTrees(model, data, cd);
    clearMinverseOffTreeBlocks(model, data);
  }
  cd.denseRows = true;
}

void denseDelassus(const Model& model, const ContactStepData& cd, Ref<MatX> A) {
  A.setZero();
  for (std::size_t s = 0; s < cd.islandBegin.size(); ++s) {
    const MatX& Ai = cd.islandA[s];
    const int* rows = cd.islandRows.data() + cd.islandBegin[s];
    const int mi = static_cast<int>(cd.islandEnd(cd.islandBegin[s]) - cd.islandBegin[s]);
    if (mi < contact::kSparseFactorRows || cd.lcps[s].denseReady) {
      for (int k = 0; k < mi; ++k)
        for (int i = 0; i < mi; ++i) A(rows[i], rows[k]) = Ai(i, k);
      continue;
    }
    // a large island's block was read from its factors: sum j_i . k_c over the trees the two rows share
    for (int i = 0; i < mi; ++i)
      for (int c = 0; c < mi; ++c) {
        double a = 0.0;
        forRowSegments(model, cd, rows[i], [&](int t, int, int n, int offI) {
          forRowSegments(model, cd, rows[c], [&](int u, int, int, int offC) {
            if (u == t) a += cd.Jseg.segment(offI, n).dot(cd.MinvJtSeg.segment(offC, n));
          });
        });
        A(rows[i], rows[c]) = a;
      }
  }
}

}  // namespace rigidiff
