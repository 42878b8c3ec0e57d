// Bindings of the collision model and contact queries (declared in rigidiff/bind/api.hpp).
#include "rigidiff/bind/api.hpp"
#include "rigidiff/bind/checks.hpp"
#include "rigidiff/collision/triangle_mesh.hpp"

namespace rigidiff {
namespace bind {

CollisionShape readShape(int type, const double* params, const double* vertices, int nvert, const double* mesh_points,
                         int n_points, const int* mesh_faces, int n_faces, double thickness) {
  if (static_cast<ShapeType>(type) == ShapeType::TriangleMesh)
    return makeTriangleMesh(mesh_points, n_points, mesh_faces, n_faces, vertices, nvert, thickness);
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

int addGeometry(CollisionModel& cmodel, const Model& model, int type, const double* params, const double* vertices,
                int nvert, int frame, int skeleton, const double* placement, double friction, double restitution,
                unsigned group, unsigned mask, const std::string& name, const double* mesh_points, int n_points,
                const int* mesh_faces, int n_faces, double thickness) {
  const CollisionShape shape = readShape(type, params, vertices, nvert, mesh_points, n_points, mesh_faces, n_faces,
                                         thickness);
  return cmodel.addGeometry(model, shape, frame, skeleton, readPlacement(placement), friction, restitution, group, mask,
                            name);
}

void setSelfCollision(CollisionModel& cmodel, int skeleton, bool enabled) {
  RD_CHECK_ARG(skeleton >= 0, "skeleton index must be >= 0");
  if (static_cast<int>(cmodel.self_collision.size()) <= skeleton) cmodel.self_collision.resize(skeleton + 1, 0);
  cmodel.self_collision[skeleton] = enabled ? 1 : 0;
}

void setGeometryCoefficients(CollisionModel& cmodel, int g, double friction, double restitution) {
  RD_CHECK_ARG(g >= 0 && g < static_cast<int>(cmodel.geometries.size()), "geometry index " << g << " out of range");
  RD_CHECK_ARG(std::isfinite(friction) && friction >= 0.0, "friction must be >= 0, got " << friction);
  RD_CHECK_ARG(std::isfinite(restitution) && restitution >= 0.0 && restitution <= 1.0,
               "restitution must be in [0, 1], got " << restitution);
  cmodel.geometries[g].friction = friction;
  cmodel.geometries[g].restitution = restitution;
}

int computeContacts(const Model& m, Data& d, const CollisionModel& cm, CollisionData& cd, const double* q) {
  checkState(m, q, nullptr);
  rigidiff::computeContacts(m, d, cm, cd, q);
  return cd.contacts.size();
}

void readContacts(const CollisionData& cd, double* points, double* normals, double* distances, int* geom_a,
                  int* geom_b, int* types) {
  int k = 0;
  for (const Contact& c : cd.contacts.contacts) {
    for (int i = 0; i < 3; ++i) {
      points[3 * k + i] = c.point[i];
      normals[3 * k + i] = c.normal[i];
    }
    distances[k] = c.distance;
    geom_a[k] = c.geom_a;
    geom_b[k] = c.geom_b;
    types[k] = static_cast<int>(c.type);
    ++k;
  }
}

}  // namespace bind
}  // namespace rigidiff
