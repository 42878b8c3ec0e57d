// Point–point additive CCD (collision/ccd/point_point.hpp).
#include "rigidiff/collision/ccd/point_point.hpp"

#include "additive.hpp"
#include "rigidiff/collision/distance/point_point.hpp"

namespace rigidiff {

CcdResult pointPointCcd(const Vec3& p0, const Vec3& p1, const Vec3& p0_end, const Vec3& p1_end,
                        const CcdOptions& options) {
  return ccd::additiveCcd<2, 1>({p0, p1}, {p0_end, p1_end}, options,
                                [](const std::array<Vec3, 2>& x) { return pointPointDistance(x[0], x[1]); });
}

}  // namespace rigidiff
