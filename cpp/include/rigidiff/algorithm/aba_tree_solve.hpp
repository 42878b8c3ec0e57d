// Solves with the joint-space inertia of one kinematic tree through the articulated-body factorisation, for
// many right-hand sides at once: the impulse responses M~^-1 J^T of a robot's contact rows without forming
// M~^-1 (O(n) per row instead of the O(n^2) of the inverse's block).
#pragma once

#include "rigidiff/multibody/data.hpp"

namespace rigidiff {

/// X (the tree's nv rows, k columns) <- M~^-1 X on the kinematic tree whose root joint is `root`, from the
/// factorisation the last aba() call left in data (world frame: data.J, data.U, data.Dinv; M~ = M plus the
/// diagonal that call added). M~^-1 couples no two trees, so these are the tree's rows of M~^-1 B for B on the
/// tree's dofs. The tree's joints are root and the joints after it down to the next tree (depth-first order).
/// scratch: 6 x k per joint of the tree, grown as needed.
void abaSolveTreeColumns(const Model& model, const Data& data, int root, Eigen::Ref<MatX> X, MatX& scratch);

}  // namespace rigidiff
