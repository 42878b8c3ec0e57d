// Bindings of the collision queries (declared in rigidiff/bind/api.hpp).
#include "rigidiff/bind/api.hpp"
#include "rigidiff/bind/checks.hpp"
#include "rigidiff/collision/distance.hpp"

namespace rigidiff {
namespace bind {

void shapeDistance(int type_a, const double* params_a, const double* vertices_a, int nvert_a, const double* points_a,
                   int npoints_a, const int* faces_a, int nfaces_a, double thickness_a, const double* pose_a,
                   int type_b, const double* params_b, const double* vertices_b, int nvert_b, const double* points_b,
                   int npoints_b, const int* faces_b, int nfaces_b, double thickness_b, const double* pose_b,
                   double* out) {
  const CollisionShape a = readShape(type_a, params_a, vertices_a, nvert_a, points_a, npoints_a, faces_a, nfaces_a,
                                     thickness_a);
  const CollisionShape b = readShape(type_b, params_b, vertices_b, nvert_b, points_b, npoints_b, faces_b, nfaces_b,
                                     thickness_b);
  const DistanceResult r = signedDistance(a, readPlacement(pose_a), b, readPlacement(pose_b));
  out[0] = r.distance;
  for (int k = 0; k < 3; ++k) {
    out[1 + k] = r.point_a[k];
    out[4 + k] = r.point_b[k];
    out[7 + k] = r.normal[k];
  }
  checkResult(out, 10, "distance");
}

}  // namespace bind
}  // namespace rigidiff
