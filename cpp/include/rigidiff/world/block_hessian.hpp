// The Newton matrix of a barrier world as 12 x 12 blocks, one per body (diagonal) and one per pair of bodies
// that share a contact term (off the diagonal), written into a sparse matrix whose pattern is kept while the
// set of blocks stays the same, so that the sparse factorisation's symbolic analysis runs once per pattern
// and the Newton loop allocates nothing.
#pragma once

#include <Eigen/Sparse>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "rigidiff/collision/distance/distance_types.hpp"
#include "rigidiff/fwd.hpp"

namespace rigidiff {

using Mat24 = Eigen::Matrix<double, 24, 24>;

/// A symmetric block matrix of 12 x 12 blocks accumulated from element Hessians.
class BlockHessian {
 public:
  /// Zero every block and size the diagonal for n bodies; the off-diagonal blocks seen before stay allocated
  /// but count as unused until added to again.
  void reset(int n);
  /// H[i, i] += block.
  void addDiagonal(int i, const Mat12& block);
  /// The element Hessian h (24 x 24) of bodies a (rows and columns 0..11) and b (12..23) added to H; a
  /// negative index (no body, or a static one) leaves that body's rows and columns out.
  void addPair(int a, int b, const Mat24& h);
  /// The lower triangle of H written into `out` (n * 12 square). Returns whether the pattern of `out`
  /// changed (a block came or went since the last call; the first call always changes it).
  bool writeLower(Eigen::SparseMatrix<double>& out);
  /// The whole symmetric H as a dense matrix (for tests and bindings).
  MatX dense() const;
  /// Calls f(row, col, block) for every diagonal block (row == col) and every off-diagonal block in use, as
  /// stored: the lower triangle's (row > col).
  template <class F>
  void forEachBlock(F&& f) const {
    for (int i = 0; i < n_; ++i) f(i, i, diagonal_[i]);
    for (size_t k = 0; k < off_.size(); ++k)
      if (used_[k]) f(off_index_[k].first, off_index_[k].second, off_[k]);
  }
  /// The number of off-diagonal blocks in use.
  int offDiagonalBlocks() const;

 private:
  static std::uint64_t key(int row, int col) {
    return (static_cast<std::uint64_t>(row) << 32) | static_cast<std::uint32_t>(col);
  }
  Mat12& lowerBlock(int row, int col);  // row > col

  int n_ = 0;
  std::vector<Mat12, Eigen::aligned_allocator<Mat12>> diagonal_;
  std::vector<Mat12, Eigen::aligned_allocator<Mat12>> off_;  // blocks (row > col) in the order first seen
  std::vector<std::pair<int, int>> off_index_;               // (row, col) of each of off_
  std::vector<char> used_;                                    // off_[k] added to since reset
  std::unordered_map<std::uint64_t, int> where_;              // key(row, col) -> k
  std::vector<std::pair<int, int>> pattern_;                  // (row, col) of the blocks in the last written pattern
  std::vector<std::pair<int, int>> scratch_;
  std::vector<std::vector<int>> column_blocks_;               // per body column, its used blocks k by row
};

}  // namespace rigidiff
