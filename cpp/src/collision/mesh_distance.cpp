// Distance of a triangle mesh that is not convex to another shape (collision/distance.hpp), through the
// narrow phase's contacts: they are the local minima of the distance between the two surfaces.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "rigidiff/collision/distance.hpp"
#include "rigidiff/collision/narrowphase.hpp"
#include "rigidiff/macros.hpp"

namespace rigidiff {

namespace {

// radius of a ball about the shape's origin that holds it
double reach(const CollisionShape& s) {
  double r = 0.0;
  for (int k = 0; k < 3; ++k)
    for (double sign : {-1.0, 1.0}) r = std::max(r, s.coreSupport(sign * Vec3::Unit(k)).norm());
  return std::sqrt(3.0) * r + s.margin();
}

}  // namespace

DistanceResult meshDistance(const CollisionShape& a, const SE3& Ma, const CollisionShape& b, const SE3& Mb) {
  const double ra = reach(a), rb = reach(b);
  const double size = ra + rb, far = 4.0 * ((Ma.p - Mb.p).norm() + size);
  std::vector<Contact> contacts;
  for (double margin = 1e-3 * size; contacts.empty(); margin *= 4.0) {
    if (margin > far)
      RD_THROW(std::runtime_error, "no contact between the mesh and the other shape: it lies deeper inside the "
                                   "mesh than the mesh's prism thickness, where no depth is defined");
    collideShapes(a, Ma, 0, b, Mb, 1, margin, contacts);
  }
  const Contact* best = &contacts[0];
  for (const Contact& c : contacts)
    if (c.distance < best->distance) best = &c;
  DistanceResult r;
  r.distance = best->distance;
  r.normal = best->normal;
  r.point_a = best->point + 0.5 * best->distance * best->normal;
  r.point_b = best->point - 0.5 * best->distance * best->normal;
  return r;
}

}  // namespace rigidiff
