#include "rigidiff/algorithm/tree_chains.hpp"

namespace rigidiff {

void treeChains(const Model& model, std::vector<int>& starts) {
  const int n = model.njoints;
  std::vector<int> children(n, 0);
  for (int j = 1; j < n; ++j) ++children[model.parents[j]];
  starts.clear();
  bool chain_ends = true;  // a joint without dofs can end a chain too
  for (int j = 1; j < n; ++j) {
    if (!(model.parents[j] == j - 1 && children[j - 1] == 1)) chain_ends = true;
    if (model.joints[j].nv == 0) continue;
    if (chain_ends) starts.push_back(model.joints[j].idx_v);
    chain_ends = false;
  }
  starts.push_back(model.nv);
}

}  // namespace rigidiff
