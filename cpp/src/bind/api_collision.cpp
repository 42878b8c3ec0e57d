// Bindings of the collision queries (declared in rigidiff/bind/api.hpp).
#include "rigidiff/bind/api.hpp"
#include "rigidiff/bind/checks.hpp"
#include "rigidiff/collision/distance.hpp"

namespace rigidiff {
namespace bind {

namespace {
// params: 4 numbers (see api.hpp)
CollisionShape readShape(int type, const double* params, const double* vertices, int nvert) {
  checkFinite(params, 4, "shape parameters");
  switch (static_cast<ShapeType>(type)) {
    case ShapeType::Sphere: return makeSphere(params[0]);
    case ShapeType::Capsule: return makeCapsule(params[0], params[1]);
    case ShapeType::Box: return makeBox(Vec3(params[0], params[1], params[2]));
    case ShapeType::Cylinder: return makeCylinder(params[0], params[1]);
    case ShapeType::Plane: return makePlane(Vec3(params[0], params[1], params[2]), params[3]);
    case ShapeType::ConvexMesh: return makeConvexMesh(vertices, nvert);
    default: RD_THROW(std::invalid_argument, "unknown shape type code " << type);
  }
}
}  // namespace

void shapeDistance(int type_a, const double* params_a, const double* vertices_a, int nvert_a, const double* pose_a,
                   int type_b, const double* params_b, const double* vertices_b, int nvert_b, const double* pose_b,
                   double* out) {
  const CollisionShape a = readShape(type_a, params_a, vertices_a, nvert_a);
  const CollisionShape b = readShape(type_b, params_b, vertices_b, nvert_b);
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
