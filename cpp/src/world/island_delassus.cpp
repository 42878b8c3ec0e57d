// The dense Delassus block of a contact island, the rows of G = J L, and the record of what a block was summed
// from (island_delassus.hpp).
#include "island_delassus.hpp"

#include <algorithm>
#include <cstring>

namespace rigidiff {
namespace island {

// Each row's segment (in Jseg) for island tree s, for the tree's rows (cd.treeSegs).
void treeSegments(const Model& model, ContactStepData& cd, const int* rows, int s) {
  const int t = cd.islandTrees[s];
  const int* tr = cd.treeRows.data() + cd.treeStart[s];
  const int nr = cd.treeStart[s + 1] - cd.treeStart[s];
  cd.treeSegs.resize(std::max<std::size_t>(cd.treeSegs.size(), nr));
  for (int a = 0; a < nr; ++a) {
    const int r = rows[tr[a]], first = cd.rowTrees[2 * r];
    cd.treeSegs[a] = cd.segStart[r] + (first == t ? 0 : model.subtree_nv[first]);
  }
}

// g = L^T j for a row-major lower factor L (n x n): g_d sums L(e, d) j_e over e >= d in increasing e, row by
// row of L so that the 6 sums of a free body's tree stay in registers (fully unrolled)
void lowerTransposeTimes(const double* L, int n, const double* j, double* g) {
  std::fill(g, g + n, 0.0);
  for (int e = 0; e < n; ++e) {
    const double je = j[e];
    for (int d = 0; d <= e; ++d) g[d] += L[e * n + d] * je;
  }
}

void lowerTransposeTimes6(const double* L, const double* j, double* out) {
  double g[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
#pragma GCC unroll 6
  for (int e = 0; e < 6; ++e) {
    const double je = j[e];
#pragma GCC unroll 6
    for (int d = 0; d < 6; ++d)
      if (d <= e) g[d] += L[e * 6 + d] * je;
  }
  std::copy(g, g + 6, out);
}

namespace {

// j . r over 6 entries, summed in the order of Eigen's vectorised dot of two dynamic segments (pairs of
// lanes (0, 2, 4) and (1, 3, 5), then the two lanes): the same bits as the general path, without its set-up
inline double dot6(const double* j, const double* r) {
  const double even = (j[0] * r[0] + j[2] * r[2]) + j[4] * r[4];
  const double odd = (j[1] * r[1] + j[3] * r[3]) + j[5] * r[5];
  return even + odd;
}

// Is slot's kept block summed from the same bits as this island's would be (the same sizes, rows per tree and
// entries of J and M~^-1 J^T)?
bool sameEntries(const Model& model, ContactStepData& cd, const int* rows, int mi, int nt, int slot) {
  if (static_cast<int>(cd.islandKeptLayout.size()) <= slot) return false;
  const std::vector<int>& layout = cd.islandKeptLayout[slot];
  const std::vector<double>& entries = cd.islandKeptEntries[slot];
  if (layout.size() < 2 || layout[0] != mi || layout[1] != nt) return false;
  std::size_t li = 2, ei = 0;
  for (int s = 0; s < nt; ++s) {
    const int* tr = cd.treeRows.data() + cd.treeStart[s];
    const int nr = cd.treeStart[s + 1] - cd.treeStart[s], n = model.subtree_nv[cd.islandTrees[s]];
    if (layout.size() < li + 2 + nr || layout[li] != n || layout[li + 1] != nr ||
        !std::equal(tr, tr + nr, layout.begin() + li + 2) || entries.size() < ei + 2 * nr * n)
      return false;
    li += 2 + nr;
    treeSegments(model, cd, rows, s);
    for (int a = 0; a < nr; ++a) {
      // bit for bit (+0 and -0 differ): the block summed from these entries would be the same bits
      if (std::memcmp(cd.Jseg.data() + cd.treeSegs[a], entries.data() + ei, sizeof(double) * n) != 0 ||
          std::memcmp(cd.MinvJtSeg.data() + cd.treeSegs[a], entries.data() + ei + n, sizeof(double) * n) != 0)
        return false;
      ei += 2 * n;
    }
  }
  return li == layout.size() && ei == entries.size();
}

}  // namespace

void islandBlock(const Model& model, ContactStepData& cd, const int* rows, int mi, int nt, int slot, MatX& Ai) {
  if (Ai.rows() == mi && Ai.cols() == mi && sameEntries(model, cd, rows, mi, nt, slot)) return;
  if (static_cast<int>(cd.islandKeptLayout.size()) <= slot) {
    cd.islandKeptLayout.resize(slot + 1);
    cd.islandKeptEntries.resize(slot + 1);
  }
  std::vector<int>& layout = cd.islandKeptLayout[slot];
  std::vector<double>& entries = cd.islandKeptEntries[slot];
  layout.assign({mi, nt});
  entries.clear();
  Ai.setZero(mi, mi);
  for (int s = 0; s < nt; ++s) {
    const int* tr = cd.treeRows.data() + cd.treeStart[s];
    const int nr = cd.treeStart[s + 1] - cd.treeStart[s];
    const int n = model.subtree_nv[cd.islandTrees[s]];
    treeSegments(model, cd, rows, s);
    auto sum = [&](auto&& dot) {
      for (int a = 0; a < nr; ++a) {
        const int i = tr[a];
        for (int c = 0; c <= a; ++c) {
          const int k = tr[c];
          const double d = dot(cd.treeSegs[a], cd.treeSegs[c]);
          Ai(i, k) += d;
          if (k != i) Ai(k, i) += d;
        }
      }
    };
    if (n == 6)  // a free body's tree
      sum([&](int ja, int kc) { return dot6(cd.Jseg.data() + ja, cd.MinvJtSeg.data() + kc); });
    else
      sum([&](int ja, int kc) { return cd.Jseg.segment(ja, n).dot(cd.MinvJtSeg.segment(kc, n)); });
    // what the block was summed from
    layout.push_back(n);
    layout.push_back(nr);
    layout.insert(layout.end(), tr, tr + nr);
    for (int a = 0; a < nr; ++a) {
      const int at = cd.treeSegs[a];
      entries.insert(entries.end(), cd.Jseg.data() + at, cd.Jseg.data() + at + n);
      entries.insert(entries.end(), cd.MinvJtSeg.data() + at, cd.MinvJtSeg.data() + at + n);
    }
  }
}

void forgetIslandBlock(ContactStepData& cd, int slot) {
  if (slot < static_cast<int>(cd.islandKeptLayout.size())) cd.islandKeptLayout[slot].clear();
}

}  // namespace island
}  // namespace rigidiff
