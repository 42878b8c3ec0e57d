// The inverse of the joint-space inertia M(q) without forming M (Carpentier & Mansard 2018).
#pragma once

#include <vector>

#include "rigidiff/multibody/data.hpp"

namespace rigidiff {

/// Fills data.Minv (both triangles) with the inverse of M(q) + diag(extra_diag) (armature included)
/// without forming M, in O(nv^2). extra_diag (model.nv) may be nullptr.
const MatX& computeMinverse(const Model& model, Data& data, const double* q, const double* extra_diag = nullptr);
/// The same inverse from the articulated-body factorisation the last aba() call left in data (same q
/// and extra_diag; data.J, data.U, data.Dinv untouched since): two sweeps, no kinematics.
const MatX& computeMinverseFromFactorization(const Model& model, Data& data);
/// The diagonal blocks of that inverse, one per kinematic tree (treeOf: the root joint of each joint,
/// 0 for the world), into data.Minv; the entries between two trees are left as they were (they are
/// zero in M^-1: clearMinverseOffTreeBlocks writes them).
void computeMinverseTreeBlocksFromFactorization(const Model& model, Data& data, const std::vector<int>& treeOf);
/// Zeroes the entries of data.Minv that couple two kinematic trees.
void clearMinverseOffTreeBlocks(const Model& model, Data& data);

}  // namespace rigidiff
