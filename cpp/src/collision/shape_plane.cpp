// Any bounded shape (A) against a half-space (B): the points of A's surface that reach the plane.
#include <cmath>

#include "rigidiff/collision/manifold.hpp"
#include "rigidiff/collision/narrowphase.hpp"
#include "thread_scratch.hpp"

namespace rigidiff {
namespace narrowphase {

namespace {

// relative bound on the rounding of a vertex's distance to the plane, computed either way (placed, or
// along u in A's frame): about 20 unit roundoffs of |v|_1 + |Ma.p|_inf + |offset| by the usual dot
// product bounds (a rotation's columns and the normal are unit); 1e-13 keeps a wide safety factor
constexpr double kRoundingBound = 1e-13;

struct PlaneContext {
  Feature face;  // the plane as a face of B, in B's frame
  Vec3 n;        // world normal
  double offset; // world offset: the plane is {x : n.x = offset}
};

// the candidate features of A below the margin, with their world points and distances
struct Candidates {
  std::vector<Feature> feature;
  std::vector<Vec3> world;
  std::vector<double> distance;
  void clear() {
    feature.clear();
    world.clear();
    distance.clear();
  }
  void add(const PlaneContext& pc, const SE3& Ma, const Feature& f, double margin) {
    const Vec3 w = f.kind == FeatureKind::Circle ? circlePoint(f, Ma, pc.n) : Ma.actPoint(f.p);
    const double dist = pc.n.dot(w) - pc.offset - f.margin;
    if (dist < margin) keep(f, w, dist);
  }
  // a Point feature (local p, radius r): as add, but the feature is only built for a point that is kept
  // (a mesh's many vertices mostly lie above the plane)
  void addPoint(const PlaneContext& pc, const SE3& Ma, const Vec3& p, double r, double margin) {
    const Vec3 w = Ma.actPoint(p);
    const double dist = pc.n.dot(w) - pc.offset - r;
    if (dist >= margin) return;
    Feature f;
    f.kind = FeatureKind::Point;
    f.p = p;
    f.margin = r;
    keep(f, w, dist);
  }
  void keep(const Feature& f, const Vec3& w, double dist) {
    feature.push_back(f);
    world.push_back(w);
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
  // the thread's lists, kept from call to call: a ball or a box on the ground allocates nothing
  Candidates& cand = threadScratch<Candidates>();
  cand.clear();
  auto point = [&](const Vec3& p, double r) { cand.addPoint(pc, Ma, p, r, margin); };
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
      // cylinder rests on four of them). They slide along the rim as the cylinder turns (a rolling
      // wheel touches the ground at its lowest point), unless the caps lie flat: then they are points of
      // the body, as a box's corners
      const bool flat = std::hypot(u.x(), u.y()) <= kCircleTiltTolerance;
      for (double z : {-a.half_length, a.half_length})
        for (int k = 0; k < 4; ++k) {
          if (flat) {
            point(Vec3(a.radius * std::cos(k * M_PI / 2), a.radius * std::sin(k * M_PI / 2), z), 0.0);
            continue;
          }
          Feature f;
          f.kind = FeatureKind::Circle;
          f.p = Vec3(0.0, 0.0, z);
          f.d = Vec3::UnitZ();
          f.radius = a.radius;
          f.angle = k * (M_PI / 2);
          cand.add(pc, Ma, f, margin);
        }
      break;
    }
    case ShapeType::ConvexMesh:
    case ShapeType::TriangleMesh: {  // against a half-space the hull's vertices are the deepest points
      // most of a resting sole's vertices lie well above the plane: a vertex whose height along u (A's
      // frame, a few operations) clears the margin by more than the rounding of both ways of computing
      // it is dropped unplaced; the others are placed as before, so the contacts are the same to the bit
      const double base = pc.n.dot(Ma.p) - pc.offset;
      const double scale = Ma.p.cwiseAbs().maxCoeff() + std::abs(pc.offset) + std::abs(margin);
      for (const Vec3& v : a.vertices) {
        const double clear = margin + kRoundingBound * (v.cwiseAbs().sum() + scale);  // inf or nan: place it
        if (std::isfinite(clear) && u.dot(v) + base >= clear) continue;
        point(v, 0.0);
      }
      break;
    }
    default: break;
  }
  // a resting face of many vertices keeps the four that span it; points above the plane (let in by a
  // margin) only fill up to four
  if (cand.feature.size() <= 4) {  // nothing to reduce
    for (std::size_t k = 0; k < cand.feature.size(); ++k) addContact(out, ga, gp, cand.feature[k], Ma, pc.face, Mp, pc.n);
    return;
  }
  for (int k : manifold::reduceTouchingFirst(cand.world, cand.distance))
    addContact(out, ga, gp, cand.feature[k], Ma, pc.face, Mp, pc.n);
}

}  // namespace narrowphase
}  // namespace rigidiff
