// The unbranched chains of a kinematic tree, as ranges of its dofs. Matrices laid out on the dofs vanish
// in whole blocks between chains of unrelated branches: inverse dynamics gives d tau_i / d q_j = 0 unless
// dof i supports dof j or j supports i, so for a humanoid more than half of dtau/dq is zero, in blocks
// between its legs and arms (linalg/dense_product.hpp skips them).
#pragma once

#include <vector>

#include "rigidiff/multibody/model.hpp"

namespace rigidiff {

/// First dof of every chain in dof order, then nv: a chain runs on while each joint is the only child of
/// the one before it. Chains of no dof are left out.
void treeChains(const Model& model, std::vector<int>& starts);

}  // namespace rigidiff
