// Many right-hand sides through a tree's articulated-body factorisation (aba_tree_solve.hpp).
#include "rigidiff/algorithm/aba_tree_solve.hpp"

#include <vector>

namespace rigidiff {

namespace {

// per-thread flags of a tree's joints, zeroed (a tree solve allocates nothing once its thread has met the size)
std::vector<char>& scratchFlags(int count) {
  thread_local std::vector<char> flags;
  flags.assign(count, 0);
  return flags;
}

}  // namespace

// abaSolve's two passes, each joint's force (backward) and then acceleration (forward) held as k columns of 6 in
// its slot of scratch: backward, u_i = b_i - S_i^T P_i and the parent gathers P_i + U_i D_i^-1 u_i; forward,
// x_i = D_i^-1 (u_i - U_i^T A_parent) and A_i = A_parent + S_i x_i. One-dof joints (most of a robot) run column by
// column on fixed-size 6-vectors: a dynamic 6 x k block expression costs more to set up than its arithmetic.
void abaSolveTreeColumns(const Model& model, const Data& data, int root, Eigen::Ref<MatX> X, MatX& scratch) {
  const int k = static_cast<int>(X.cols()), b0 = model.joints[root].idx_v;
  int end = root + 1;  // the tree's joints: root and its depth-first descendants
  while (end < model.njoints && model.parents[end] >= root) ++end;
  const int count = end - root;
  // one slot per joint, and one more for a multi-dof joint's intermediate
  if (scratch.rows() != 6 || scratch.cols() < (count + 1) * k) scratch.resize(6, (count + 1) * k);
  scratch.leftCols(count * k).setZero();
  auto slot = [&](int i) { return scratch.middleCols((i - root) * k, k); };
  auto column = [&](int i, int c) { return Eigen::Map<Vec6>(scratch.data() + 6 * ((i - root) * k + c)); };
  const Mat6X& oS = data.J;
  // the backward pass carries force only up from the joints where some right-hand side is not zero (a foot's
  // rows: the leg's joints and the base, not the other limbs); their slots stay zero elsewhere
  std::vector<char>& loaded = scratchFlags(count);
  for (int i = end - 1; i >= root; --i) {
    const JointModel& jm = model.joints[i];
    const int r = jm.idx_v - b0, p = model.parents[i];
    if (!loaded[i - root]) loaded[i - root] = !X.middleRows(r, jm.nv).isZero(0.0);
    if (loaded[i - root] && p != 0) loaded[p - root] = 1;
  }
  for (int i = end - 1; i >= root; --i) {
    if (!loaded[i - root]) continue;  // u_i = b_i - S_i^T P_i = 0, and nothing to pass up
    const JointModel& jm = model.joints[i];
    const int n = jm.nv, r = jm.idx_v - b0, p = model.parents[i];
    if (n == 1) {
      const Vec6 s = oS.col(jm.idx_v), Ud = data.Dinv[i](0, 0) * data.U.col(jm.idx_v);
      for (int c = 0; c < k; ++c) {
        const auto P = column(i, c);
        const double u = X(r, c) - s.dot(P);
        X(r, c) = u;
        if (p != 0) column(p, c) += P + Ud * u;
      }
      continue;
    }
    auto P = slot(i);
    auto u = X.middleRows(r, n);
    u.noalias() -= oS.middleCols(jm.idx_v, n).transpose() * P;
    if (p == 0) continue;
    auto Pp = slot(p);
    Pp += P;
    Eigen::Matrix<double, 6, Eigen::Dynamic, 0, 6, 6> UD(6, n);
    UD.noalias() = data.U.middleCols(jm.idx_v, n) * data.Dinv[i].topLeftCorner(n, n);
    Pp.noalias() += UD * u;
  }
  for (int i = root; i < end; ++i) {
    const JointModel& jm = model.joints[i];
    const int n = jm.nv, r = jm.idx_v - b0, p = model.parents[i];
    if (n == 1) {
      const Vec6 s = oS.col(jm.idx_v), U = data.U.col(jm.idx_v);
      const double dinv = data.Dinv[i](0, 0);
      for (int c = 0; c < k; ++c) {
        auto A = column(i, c);
        if (p == 0)
          A.setZero();
        else
          A = column(p, c);
        const double x = dinv * (X(r, c) - U.dot(A));
        X(r, c) = x;
        A += s * x;
      }
      continue;
    }
    auto A = slot(i);
    if (p == 0)
      A.setZero();
    else
      A = slot(p);
    auto x = X.middleRows(r, n);
    auto t = scratch.middleCols(count * k, k).topRows(n);
    t = x;
    t.noalias() -= data.U.middleCols(jm.idx_v, n).transpose() * A;
    x.noalias() = data.Dinv[i].topLeftCorner(n, n) * t;
    A.noalias() += oS.middleCols(jm.idx_v, n) * x;
  }
}

}  // namespace rigidiff
