// The continuous collision queries (collision/ccd/) as seen by Cython: n configurations at once, each a
// row of the stacked start and end point coordinates.
#pragma once

#include <vector>

namespace rigidiff {
namespace bind {

/// Pair codes, with the points of one configuration in brackets: 0 point–point [p0, p1], 1 point–edge
/// [p, e0, e1], 2 point–triangle [p, t0, t1, t2], 3 edge–edge [ea0, ea1, eb0, eb1].
constexpr int kCcdPairCount = 4;
/// Points per configuration of a pair (invalid_argument for an unknown code).
int ccdPointCount(int pair);

/// points: n x 6K row-major, the K start points then the K end points. Writes hit (n, 0 or 1), toi (n)
/// and exhausted (n, 0 or 1). invalid_argument naming the configuration for a non-finite point, and for
/// options out of range (ccd_types.hpp).
void primitiveCcd(int pair, int n, const double* points, double min_distance, double t_max,
                  double conservative_rescaling, int max_iterations, unsigned char* hit, double* toi,
                  unsigned char* exhausted);

/// out = the pairs (i, j) (flattened, sorted) of sweptPairs: set a is na primitives of ka points, its
/// start and end points (na * ka x 3 each, row-major), likewise set b.
void ccdSweptPairs(const double* start_a, const double* end_a, int na, int ka, const double* start_b,
                   const double* end_b, int nb, int kb, double min_distance, std::vector<int>& out);

}  // namespace bind
}  // namespace rigidiff
