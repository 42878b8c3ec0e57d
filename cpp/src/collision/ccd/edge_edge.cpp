// Edge–edge additive CCD (collision/ccd/edge_edge.hpp).
#include "rigidiff/collision/ccd/edge_edge.hpp"

#include "additive.hpp"
#include "rigidiff/collision/distance/edge_edge.hpp"

namespace rigidiff {

CcdResult edgeEdgeCcd(const Vec3& ea0, const Vec3& ea1, const Vec3& eb0, const Vec3& eb1, const Vec3& ea0_end,
                      const Vec3& ea1_end, const Vec3& eb0_end, const Vec3& eb1_end, const CcdOptions& options) {
  // edge–edge distances handle parallel and zero-length edges themselves
  return ccd::additiveCcd<4, 2>({ea0, ea1, eb0, eb1}, {ea0_end, ea1_end, eb0_end, eb1_end}, options,
                                [](const std::array<Vec3, 4>& x) { return edgeEdgeDistance(x[0], x[1], x[2], x[3]); });
}

}  // namespace rigidiff
