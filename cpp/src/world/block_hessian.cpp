// Block Newton matrix of a barrier world with a kept sparsity pattern (world/block_hessian.hpp).
#include "rigidiff/world/block_hessian.hpp"

#include <algorithm>

namespace rigidiff {

void BlockHessian::reset(int n) {
  if (n != n_) {
    n_ = n;
    diagonal_.assign(n, Mat12::Zero());
    off_.clear();
    off_index_.clear();
    used_.clear();
    where_.clear();
    pattern_.clear();
    column_blocks_.assign(n, {});
    return;
  }
  for (Mat12& d : diagonal_) d.setZero();
  for (size_t k = 0; k < off_.size(); ++k)
    if (used_[k]) {
      off_[k].setZero();
      used_[k] = 0;
    }
}

void BlockHessian::addDiagonal(int i, const Mat12& block) { diagonal_[i] += block; }

Mat12& BlockHessian::lowerBlock(int row, int col) {
  const auto [it, inserted] = where_.try_emplace(key(row, col), static_cast<int>(off_.size()));
  if (inserted) {
    off_.push_back(Mat12::Zero());
    off_index_.emplace_back(row, col);
    used_.push_back(0);
  }
  used_[it->second] = 1;
  return off_[it->second];
}

void BlockHessian::addPair(int a, int b, const Mat24& h) {
  if (a < 0) {
    if (b >= 0) diagonal_[b] += h.bottomRightCorner<12, 12>();
    return;
  }
  diagonal_[a] += h.topLeftCorner<12, 12>();
  if (b < 0) return;
  if (a == b) {
    diagonal_[a] += h.bottomRightCorner<12, 12>() + h.topRightCorner<12, 12>() + h.bottomLeftCorner<12, 12>();
    return;
  }
  diagonal_[b] += h.bottomRightCorner<12, 12>();
  if (a > b)
    lowerBlock(a, b) += h.topRightCorner<12, 12>();
  else
    lowerBlock(b, a) += h.bottomLeftCorner<12, 12>();
}

bool BlockHessian::writeLower(Eigen::SparseMatrix<double>& out) {
  scratch_.clear();
  for (size_t k = 0; k < off_.size(); ++k)
    if (used_[k]) scratch_.push_back(off_index_[k]);
  // column-major order of the lower blocks: by column body, then row body
  std::sort(scratch_.begin(), scratch_.end(), [](const auto& x, const auto& y) {
    return x.second != y.second ? x.second < y.second : x.first < y.first;
  });
  const int N = 12 * n_;
  const bool changed = scratch_ != pattern_ || out.rows() != N || out.cols() != N || out.isCompressed() == false;
  if (changed) {
    pattern_ = scratch_;
    for (auto& c : column_blocks_) c.clear();
    for (const auto& [row, col] : pattern_) column_blocks_[col].push_back(where_.at(key(row, col)));
    out.resize(N, N);
    Eigen::Index nnz = 78 * static_cast<Eigen::Index>(n_) + 144 * static_cast<Eigen::Index>(pattern_.size());
    out.resizeNonZeros(nnz);
    int* outer = out.outerIndexPtr();
    int* inner = out.innerIndexPtr();
    int at = 0;
    for (int c = 0; c < n_; ++c) {
      for (int k = 0; k < 12; ++k) {
        outer[12 * c + k] = at;
        for (int r = k; r < 12; ++r) inner[at++] = 12 * c + r;
        for (int blk : column_blocks_[c])
          for (int r = 0; r < 12; ++r) inner[at++] = 12 * off_index_[blk].first + r;
      }
    }
    outer[N] = at;
  }
  double* values = out.valuePtr();
  int at = 0;
  for (int c = 0; c < n_; ++c) {
    for (int k = 0; k < 12; ++k) {
      for (int r = k; r < 12; ++r) values[at++] = diagonal_[c](r, k);
      for (int blk : column_blocks_[c])
        for (int r = 0; r < 12; ++r) values[at++] = off_[blk](r, k);
    }
  }
  return changed;
}

MatX BlockHessian::dense() const {
  MatX H = MatX::Zero(12 * n_, 12 * n_);
  for (int i = 0; i < n_; ++i) H.block<12, 12>(12 * i, 12 * i) = diagonal_[i];
  for (size_t k = 0; k < off_.size(); ++k) {
    if (!used_[k]) continue;
    const auto [row, col] = off_index_[k];
    H.block<12, 12>(12 * row, 12 * col) = off_[k];
    H.block<12, 12>(12 * col, 12 * row) = off_[k].transpose();
  }
  return H;
}

int BlockHessian::offDiagonalBlocks() const {
  return static_cast<int>(std::count(used_.begin(), used_.end(), 1));
}

}  // namespace rigidiff
