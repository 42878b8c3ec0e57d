#include "rigidiff/collision/shape.hpp"

#include <cmath>

#include "rigidiff/macros.hpp"

namespace rigidiff {

namespace {
void checkPositive(double x, const char* what) {
  RD_CHECK_ARG(std::isfinite(x) && x > 0.0, what << " must be finite and > 0, got " << x);
}

// a capsule or a cylinder: axis z, length of the straight part
CollisionShape axial(ShapeType type, double radius, double length, const char* kind) {
  RD_CHECK_ARG(std::isfinite(radius) && radius > 0.0, kind << " radius must be finite and > 0, got " << radius);
  RD_CHECK_ARG(std::isfinite(length) && length > 0.0, kind << " length must be finite and > 0, got " << length);
  CollisionShape s;
  s.type = type;
  s.radius = radius;
  s.half_length = 0.5 * length;
  return s;
}

}  // namespace

Vec3 CollisionShape::coreSupport(const Vec3& d) const {
  switch (type) {
    case ShapeType::Sphere: return Vec3::Zero();
    case ShapeType::Capsule: return Vec3(0.0, 0.0, d.z() >= 0.0 ? half_length : -half_length);
    case ShapeType::Box:
      return Vec3(d.x() >= 0.0 ? half_extents.x() : -half_extents.x(),
                  d.y() >= 0.0 ? half_extents.y() : -half_extents.y(),
                  d.z() >= 0.0 ? half_extents.z() : -half_extents.z());
    case ShapeType::Cylinder: {
      const double r = std::hypot(d.x(), d.y());
      const double z = d.z() >= 0.0 ? half_length : -half_length;
      if (r < 1e-300) return Vec3(radius, 0.0, z);
      return Vec3(radius * d.x() / r, radius * d.y() / r, z);
    }
    case ShapeType::ConvexMesh:
    case ShapeType::TriangleMesh: {
      int best = 0;
      double best_dot = d.dot(vertices[0]);
      for (int k = 1; k < static_cast<int>(vertices.size()); ++k) {
        const double s = d.dot(vertices[k]);
        if (s > best_dot) {
          best_dot = s;
          best = k;
        }
      }
      return vertices[best];
    }
    default: RD_THROW(std::invalid_argument, "a half-space has no support point");
  }
}

CollisionShape makeSphere(double radius) {
  // radius zero is a point (a particle without size)
  RD_CHECK_ARG(std::isfinite(radius) && radius >= 0.0, "sphere radius must be finite and >= 0, got " << radius);
  CollisionShape s;
  s.type = ShapeType::Sphere;
  s.radius = radius;
  return s;
}

CollisionShape makeCapsule(double radius, double length) {
  return axial(ShapeType::Capsule, radius, length, "capsule");
}

CollisionShape makeBox(const Vec3& size) {
  for (int k = 0; k < 3; ++k) checkPositive(size[k], "box size");
  CollisionShape s;
  s.type = ShapeType::Box;
  s.half_extents = 0.5 * size;
  return s;
}

CollisionShape makeCylinder(double radius, double length) {
  return axial(ShapeType::Cylinder, radius, length, "cylinder");
}

CollisionShape makePlane(const Vec3& normal, double offset) {
  const double n = normal.norm();
  RD_CHECK_ARG(normal.allFinite() && n > 1e-12, "plane normal must be a finite non-zero vector");
  RD_CHECK_ARG(std::isfinite(offset), "plane offset must be finite, got " << offset);
  CollisionShape s;
  s.type = ShapeType::Plane;
  s.normal = normal / n;
  s.offset = offset / n;
  return s;
}

CollisionShape makeConvexMesh(const double* vertices, int n) {
  RD_CHECK_ARG(n >= 4, "a convex mesh needs at least 4 vertices, got " << n);
  CollisionShape s;
  s.type = ShapeType::ConvexMesh;
  s.vertices.reserve(n);
  Vec3 lo = Vec3::Constant(INFINITY), hi = Vec3::Constant(-INFINITY);
  for (int k = 0; k < n; ++k) {
    const Vec3 p(vertices[3 * k], vertices[3 * k + 1], vertices[3 * k + 2]);
    RD_CHECK_ARG(p.allFinite(), "convex mesh vertex " << k << " is not finite");
    s.vertices.push_back(p);
    lo = lo.cwiseMin(p);
    hi = hi.cwiseMax(p);
  }
  // a flat point set has no interior: the distance queries need a solid
  const Vec3& a = s.vertices[0];
  double best = 0.0;
  Vec3 e1 = Vec3::Zero();
  for (const Vec3& p : s.vertices)
    if ((p - a).squaredNorm() > best) {
      best = (p - a).squaredNorm();
      e1 = p - a;
    }
  Vec3 nrm = Vec3::Zero();
  for (const Vec3& p : s.vertices) {
    const Vec3 c = e1.cross(p - a);
    if (c.squaredNorm() > nrm.squaredNorm()) nrm = c;
  }
  double vol = 0.0;
  for (const Vec3& p : s.vertices) vol = std::max(vol, std::abs(nrm.dot(p - a)));
  const double scale = (hi - lo).norm();
  RD_CHECK_ARG(scale > 0.0 && vol > 1e-10 * scale * scale * scale,
               "convex mesh vertices are degenerate (all in one plane or one point)");
  return s;
}

}  // namespace rigidiff
