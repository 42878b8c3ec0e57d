// Options and result of the continuous collision queries (collision/ccd/): every point moves linearly
// from its start to its end position over t in [0, 1], and a query returns the earliest time up to which
// the pair provably keeps a distance above min_distance.
#pragma once

namespace rigidiff {

struct CcdOptions {
  double min_distance = 0.0;            ///< the separation to keep (>= 0)
  double t_max = 1.0;                   ///< the end of the searched interval [0, t_max] (0 < t_max <= 1)
  double conservative_rescaling = 0.9;  ///< fraction s in (0, 1) of each proven-safe advance actually taken
  int max_iterations = 1000000;         ///< cap on the advances (>= 1)
};

/// hit = false: the distance stays above min_distance over all of [0, t_max], and toi = t_max.
/// hit = true: toi in [0, t_max] is a time up to which the distance provably stays above min_distance;
/// the pair comes close after it: its gap (distance - min_distance) shrank to (1 - s) of the initial gap,
/// or the pair starts within min_distance (toi = 0), or the iterations ran out (exhausted, toi = the last
/// proven-safe time). A contact before t_max is never missed and toi never lies after it.
struct CcdResult {
  bool hit = false;
  double toi = 1.0;
  bool exhausted = false;
  int iterations = 0;  ///< advances taken
};

/// invalid_argument unless the options are in the ranges above.
void checkCcdOptions(const CcdOptions& options);

}  // namespace rigidiff
