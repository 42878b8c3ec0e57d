// Point–edge additive CCD (collision/ccd/point_edge.hpp).
#include "rigidiff/collision/ccd/point_edge.hpp"

#include "additive.hpp"
#include "rigidiff/collision/distance/point_edge.hpp"

namespace rigidiff {

CcdResult pointEdgeCcd(const Vec3& p, const Vec3& e0, const Vec3& e1, const Vec3& p_end, const Vec3& e0_end,
                       const Vec3& e1_end, const CcdOptions& options) {
  return ccd::additiveCcd<3, 1>({p, e0, e1}, {p_end, e0_end, e1_end}, options,
                                [](const std::array<Vec3, 3>& x) { return pointEdgeDistance(x[0], x[1], x[2]); });
}

}  // namespace rigidiff
