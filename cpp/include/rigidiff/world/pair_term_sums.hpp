// The contact terms of a barrier world's pairs (barrier or friction), summed per pair of bodies before they
// reach the Newton matrix. Pairs come grouped by their bodies (the broad phase visits one body pair at a time),
// so each fixed chunk of consecutive pairs adds its terms into one running sum per run of pairs between the
// same two bodies, in cache, on two threads; one thread then adds the few sums up in order. The chunks do not
// depend on the thread count, so neither do the sums. Per-pair 24 x 24 blocks written to memory and read back
// by one thread cost more than the pairs' own arithmetic on large contact areas (two touching sheets).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "rigidiff/world/block_hessian.hpp"
#include "rigidiff/world/parallel_chunks.hpp"

namespace rigidiff {

/// The terms of consecutive pairs between the same two bodies: in the coordinates of body[0] (12), then
/// body[1]'s (12). body[] are the pairs' own bodies, static ones included (-1: a ground plane, or none).
struct BodyPairSum {
  int body[2] = {-1, -1};
  double value = 0.0;
  Eigen::Matrix<double, 24, 1> gradient;
  Mat24 hessian;
};

class PairTermSums {
 public:
  static constexpr std::size_t kPairsPerChunk = 64;

  /// For i in [0, n): bodies(i, int[2]) writes pair i's two bodies, and terms(i, sum) adds pair i's value
  /// (and gradient, Hessian when asked for) into sum, whose members start at zero for each run of pairs.
  template <class Bodies, class Terms>
  void compute(std::size_t n, bool gradient, bool hessian, Bodies&& bodies, Terms&& terms) {
    const std::size_t chunks = (n + kPairsPerChunk - 1) / kPairsPerChunk;
    if (chunks_.size() < chunks) chunks_.resize(chunks);
    used_.assign(chunks, 0);
    parallelChunks(
        chunks,
        [&](std::size_t c) {
          auto& sums = chunks_[c];
          std::size_t used = 0;
          for (std::size_t i = c * kPairsPerChunk; i < std::min(n, (c + 1) * kPairsPerChunk); ++i) {
            int b[2];
            bodies(i, b);
            if (used == 0 || sums[used - 1].body[0] != b[0] || sums[used - 1].body[1] != b[1]) {
              if (sums.size() == used) sums.emplace_back();
              BodyPairSum& s = sums[used++];
              s.body[0] = b[0];
              s.body[1] = b[1];
              s.value = 0.0;
              if (gradient) s.gradient.setZero();
              if (hessian) s.hessian.setZero();
            }
            terms(i, sums[used - 1]);
          }
          used_[c] = used;
        },
        256 / kPairsPerChunk, 1);
  }

  /// f(sum) for every sum of the last compute, in the pairs' order.
  template <class F>
  void forEach(F&& f) const {
    for (std::size_t c = 0; c < used_.size(); ++c)
      for (std::size_t k = 0; k < used_[c]; ++k) f(chunks_[c][k]);
  }

 private:
  std::vector<std::vector<BodyPairSum, Eigen::aligned_allocator<BodyPairSum>>> chunks_;
  std::vector<std::size_t> used_;
};

}  // namespace rigidiff
