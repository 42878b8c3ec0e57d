// Any bounded shape (A) against a half-space (B): the points of A's surface that reach the plane.
#include <cmath>

#include "rigidiff/collision/manifold.hpp"
#include "rigidiff/collision/narrowphase.hpp"

namespace rigidiff {
namespace narrowphase {

namespace {

struct PlaneContext {
  Feature face;  // the plane as a face of B, in B's frame
  Vec3 n;        // world normal
  double offset; // world offset: the plane is {x : n.x = offset}
};

// the candidate points of A below the margin: local point, radius, world point and distance
struct Candidates {
  std::vector<Vec3> local, world;
  std::vector<double> radius, distance;
  void add(const PlaneContext& pc, const SE3& Ma, const Vec3& p, double r, double margin) {
    const Vec3 w = Ma.actPoint(p);
    const double dist = pc.n.dot(w) - pc.offset - r;
    if (dist >= margin) return;
    local.push_back(p);
    world.push_back(w);
    radius.push_back(r);
    distance.push_back(dist);
  }
};

}  // namespace

void shapePlane(const CollisionShape& a, const SE3& Ma, int ga, const CollisionShape& plane, const SE3& Mp, int gp,
                double margin, std::vector<Contact>& out) {
  PlaneContext pc;
  pc.face.kind = FeatureKind::Face;
  pc.face.d = plane.normal;
  pc.face.p = plane.offset * plane.normal;
  pc.n = Mp.R * plane.normal;
  pc.offset = pc.n.dot(Mp.actPoint(pc.face.p));
  const Vec3 u = Ma.R.transpose() * pc.n;  // plane normal in A's frame
  Candidates cand;
  auto point = [&](const Vec3& p, double r) { cand.add(pc, Ma, p, r, margin); };
  switch (a.type) {
    case ShapeType::Sphere: point(Vec3::Zero(), a.radius); break;
    case ShapeType::Capsule:
      point(Vec3(0.0, 0.0, -a.half_length), a.radius);
      point(Vec3(0.0, 0.0, a.half_length), a.radius);
      break;
    case ShapeType::Box:
      for (int k = 0; k < 8; ++k)
        point(Vec3((k & 1) ? a.half_extents.x() : -a.half_extents.x(), (k & 2) ? a.half_extents.y() : -a.half_extents.y(),
                   (k & 4) ? a.half_extents.z() : -a.half_extents.z()),
              0.0);
      break;
    case ShapeType::Cylinder: {
      // on each cap: the rim point deepest along -n and three more at quarter turns (a standing
      // cylinder rests on four of them)
      const double rxy = std::hypot(u.x(), u.y());
      const double phi0 = rxy > 1e-12 ? std::atan2(-u.y(), -u.x()) : 0.0;
      for (double z : {-a.half_length, a.half_length})
        for (int k = 0; k < 4; ++k) {
          const double phi = phi0 + k * (M_PI / 2);
          point(Vec3(a.radius * std::cos(phi), a.radius * std::sin(phi), z), 0.0);
        }
      break;
    }
    case ShapeType::ConvexMesh:
    case ShapeType::TriangleMesh:  // against a half-space the hull's vertices are the deepest points
      for (const Vec3& v : a.vertices) point(v, 0.0);
      break;
    default: break;
  }
  // a resting face of many vertices keeps the four that span it (and the deepest)
  for (int k : manifold::reduceToFour(cand.world, cand.distance)) {
    Feature f;
    f.kind = FeatureKind::Point;
    f.p = cand.local[k];
    f.margin = cand.radius[k];
    addContact(out, ga, gp, f, Ma, pc.face, Mp, pc.n);
  }
}

}  // namespace narrowphase
}  // namespace rigidiff
