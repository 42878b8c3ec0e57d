// Point–triangle additive CCD (collision/ccd/point_triangle.hpp).
#include "rigidiff/collision/ccd/point_triangle.hpp"

#include <algorithm>

#include "additive.hpp"
#include "rigidiff/collision/distance/point_edge.hpp"
#include "rigidiff/collision/distance/point_triangle.hpp"

namespace rigidiff {

namespace {

// The point–triangle classification needs a positive area; a triangle flattened to a segment (it may pass
// through one on its way) is exactly the union of its edges.
double squaredDistance(const std::array<Vec3, 4>& x) {
  const Vec3& p = x[0];
  if ((x[2] - x[1]).cross(x[3] - x[1]).squaredNorm() > 0.0) return pointTriangleDistance(p, x[1], x[2], x[3]);
  return std::min({pointEdgeDistance(p, x[1], x[2]), pointEdgeDistance(p, x[2], x[3]),
                   pointEdgeDistance(p, x[3], x[1])});
}

}  // namespace

CcdResult pointTriangleCcd(const Vec3& p, const Vec3& t0, const Vec3& t1, const Vec3& t2, const Vec3& p_end,
                           const Vec3& t0_end, const Vec3& t1_end, const Vec3& t2_end, const CcdOptions& options) {
  return ccd::additiveCcd<4, 1>({p, t0, t1, t2}, {p_end, t0_end, t1_end, t2_end}, options, squaredDistance);
}

}  // namespace rigidiff
