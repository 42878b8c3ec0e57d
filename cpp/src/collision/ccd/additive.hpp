// The additive CCD loop shared by the pair queries (collision/ccd/): the pair advances in time by steps
// that provably keep its distance above min_distance, until the gap has shrunk to (1 - s) of its start.
//
// Why a step is safe: with the mean displacement removed (distances do not change under a common
// translation), no point of the first group moves faster than la and none of the second faster than lb
// (|x'(t)| is constant on a linear path), so the distance between the groups falls no faster than
// l = la + lb. From a gap g at time t the distance therefore stays above min_distance until t + g / l; the
// loop takes s of that.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>

#include "rigidiff/collision/ccd/ccd_types.hpp"
#include "rigidiff/fwd.hpp"
#include "rigidiff/macros.hpp"

namespace rigidiff {
namespace ccd {

/// Points 0 .. Split - 1 form the first primitive and Split .. K - 1 the second. squaredDistance(x) is the
/// squared distance of the pair at the points x.
template <int K, int Split, class SquaredDistance>
CcdResult additiveCcd(const std::array<Vec3, K>& start, const std::array<Vec3, K>& end, const CcdOptions& options,
                      const SquaredDistance& squaredDistance) {
  checkCcdOptions(options);
  for (int k = 0; k < K; ++k)
    RD_CHECK_ARG(start[k].allFinite() && end[k].allFinite(), "point " << k << " has a non-finite coordinate");

  std::array<Vec3, K> dx;
  Vec3 mean = Vec3::Zero();
  for (int k = 0; k < K; ++k) {
    dx[k] = end[k] - start[k];
    mean += dx[k];
  }
  mean /= K;
  double la = 0.0, lb = 0.0;
  for (int k = 0; k < K; ++k) {
    dx[k] -= mean;
    (k < Split ? la : lb) = std::max(k < Split ? la : lb, dx[k].norm());
  }
  const double speed = la + lb;

  const double xi = options.min_distance;
  // gap = distance - xi, written (d^2 - xi^2) / (d + xi) so that it keeps its digits when d and xi are close;
  // a non-finite distance (overflow) counts as no gap, which stops the loop conservatively
  const auto gapAt = [&](double t) {
    std::array<Vec3, K> x;
    for (int k = 0; k < K; ++k) x[k] = start[k] + t * dx[k];
    const double d2 = squaredDistance(x);
    const double gap = (d2 - xi * xi) / (std::sqrt(d2) + xi);
    return std::isfinite(gap) ? gap : 0.0;
  };

  CcdResult result;
  double gap = gapAt(0.0);
  if (!(gap > 0.0)) {  // starts within min_distance
    result.hit = true;
    result.toi = 0.0;
    return result;
  }
  if (speed == 0.0) {  // no relative motion
    result.toi = options.t_max;
    return result;
  }
  const double s = options.conservative_rescaling;
  const double stop_gap = (1.0 - s) * gap;
  double t = 0.0;
  while (true) {
    const double t_next = t + s * gap / speed;
    if (t_next >= options.t_max) {  // [t, t_max] is proven safe
      result.toi = options.t_max;
      return result;
    }
    if (t_next == t) break;  // the safe advance is below the resolution of t: as good as touching
    const double next_gap = gapAt(t_next);
    ++result.iterations;
    // the first advance is accepted unless rounding left no gap, so a hit right after the start is not 0
    if (next_gap < stop_gap && (t > 0.0 || !(next_gap > 0.0))) break;
    t = t_next;
    gap = next_gap;
    if (result.iterations >= options.max_iterations) {
      result.exhausted = true;
      break;
    }
  }
  result.hit = true;
  result.toi = t;
  return result;
}

}  // namespace ccd
}  // namespace rigidiff
