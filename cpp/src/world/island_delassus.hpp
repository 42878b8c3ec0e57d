// The dense Delassus block of a contact island and the rows of G = J L of an island solved through its root
// (contact_step.cpp's solveIsland), and the record that lets a step of the same bits keep the block.
#pragma once

#include "rigidiff/world/contact_step.hpp"

namespace rigidiff {
namespace island {

/// Each row's segment (in cd.Jseg) for island tree s, for the tree's rows (into cd.treeSegs).
void treeSegments(const Model& model, ContactStepData& cd, const int* rows, int s);

/// g = L^T j for a row-major lower factor L (n x n), and its fully unrolled form for n = 6.
void lowerTransposeTimes(const double* L, int n, const double* j, double* g);
void lowerTransposeTimes6(const double* L, const double* j, double* out);

/// The island's Delassus block Ai (mi x mi), dense: summed tree by tree over the rows of that tree alone, and
/// recorded with what it was summed from (the sizes and rows of each tree, the rows' entries of J and
/// M~^-1 J^T) for island slot `slot`. An island of the same bits as the slot's record (bodies at rest) keeps
/// the Ai it has.
void islandBlock(const Model& model, ContactStepData& cd, const int* rows, int mi, int nt, int slot, MatX& Ai);

/// Slot's Ai is about to hold something else (a large island's buffer): nothing is kept for it.
void forgetIslandBlock(ContactStepData& cd, int slot);

}  // namespace island
}  // namespace rigidiff
