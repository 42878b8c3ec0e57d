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

/// The island's Delassus block Ai (mi x mi), dense: summed tree by tree over the rows of that tree alone.
void denseIslandBlock(const Model& model, ContactStepData& cd, const int* rows, int mi, int nt, MatX& Ai);

/// Is the island's dense block in `slot` summed from the same bits as the one kept there (the same sizes, rows
/// per tree and entries of J and M~^-1 J^T)? keep = true records this island's instead (returns true).
bool sameIslandBlock(const Model& model, ContactStepData& cd, const int* rows, int mi, int nt, int slot, bool keep);

}  // namespace island
}  // namespace rigidiff
