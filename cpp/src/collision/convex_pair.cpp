// Any two convex shapes: GJK/EPA gives the normal; each shape's support feature along it (a face,
// an edge or a point of its core) is collected, and the larger one clips the other, as for boxes.
#include <algorithm>
#include <cmath>

#include "rigidiff/collision/distance.hpp"
#include "rigidiff/collision/feature.hpp"
#include "rigidiff/collision/manifold.hpp"
#include "rigidiff/collision/narrowphase.hpp"

namespace rigidiff {
namespace narrowphase {

namespace {

// points of the core of s (local frame) whose support value along the local direction u is within a
// small fraction `flat` of the shape's size of the maximum: a face, an edge or a single point. The
// default, about 0.6 degrees of tilt, still counts as resting on a face
std::vector<Vec3> supportFeature(const CollisionShape& s, const Vec3& u, double flat = 1e-2) {
  std::vector<Vec3> pts;
  switch (s.type) {
    case ShapeType::Sphere: pts.push_back(Vec3::Zero()); break;
    case ShapeType::Capsule:
      if (std::abs(u.z()) < flat) {
        pts.push_back(Vec3(0.0, 0.0, -s.half_length));
        pts.push_back(Vec3(0.0, 0.0, s.half_length));
      } else {
        pts.push_back(Vec3(0.0, 0.0, u.z() > 0.0 ? s.half_length : -s.half_length));
      }
      break;
    case ShapeType::Cylinder: {
      const double rxy = std::hypot(u.x(), u.y());
      const double z = u.z() >= 0.0 ? s.half_length : -s.half_length;
      if (rxy < flat) {  // a cap: its rim as an octagon
        for (int k = 0; k < 8; ++k)
          pts.push_back(Vec3(s.radius * std::cos(k * M_PI / 4), s.radius * std::sin(k * M_PI / 4), z));
      } else {
        const Vec3 rim(s.radius * u.x() / rxy, s.radius * u.y() / rxy, 0.0);
        if (std::abs(u.z()) < flat) {  // the side: a line
          pts.push_back(rim - s.half_length * Vec3::UnitZ());
          pts.push_back(rim + s.half_length * Vec3::UnitZ());
        } else {
          pts.push_back(rim + z * Vec3::UnitZ());
        }
      }
      break;
    }
    case ShapeType::Box:
    case ShapeType::ConvexMesh: {
      std::vector<Vec3> corners;
      if (s.type == ShapeType::Box) {
        for (int k = 0; k < 8; ++k)
          corners.push_back(Vec3((k & 1) ? s.half_extents.x() : -s.half_extents.x(),
                                 (k & 2) ? s.half_extents.y() : -s.half_extents.y(),
                                 (k & 4) ? s.half_extents.z() : -s.half_extents.z()));
      }
      const std::vector<Vec3>& vs = s.type == ShapeType::Box ? corners : s.vertices;
      double top = -INFINITY, size = 0.0;
      for (const Vec3& v : vs) {
        top = std::max(top, u.dot(v));
        size = std::max(size, v.norm());
      }
      for (const Vec3& v : vs)
        if (u.dot(v) >= top - flat * size) pts.push_back(v);
      break;
    }
    default: break;
  }
  return pts;
}

// area of a support feature (local points of the shape placed by M) seen along the world normal n
double featureArea(const std::vector<Vec3>& local, const SE3& M, const Vec3& n) {
  if (local.size() < 3) return 0.0;
  std::vector<Vec3> pts;
  for (const Vec3& p : local) pts.push_back(M.actPoint(p));
  manifold::orderAround(pts, n);
  double twice = 0.0;
  for (std::size_t k = 0; k < pts.size(); ++k) twice += (pts[k] - pts[0]).cross(pts[(k + 1) % pts.size()] - pts[0]).dot(n);
  return 0.5 * std::abs(twice);
}

// the feature of s (local frame) that its support points `pts` along a direction form, grown by the
// shape's margin: a point (one), an edge's line (two) or, with `face_normal` (local, outward), the plane
// through `on_face` (three or more). False for a cylinder, whose support point on its rim slides as the
// normal turns (it is no fixed point of the body)
bool supportAsFeature(const CollisionShape& s, const std::vector<Vec3>& pts, const Vec3& on_face,
                      const Vec3& face_normal, Feature& f) {
  if (s.type == ShapeType::Cylinder || pts.empty()) return false;
  f.margin = s.margin();
  f.p = pts[0];
  if (pts.size() == 1) {
    f.kind = FeatureKind::Point;
    return true;
  }
  if (pts.size() >= 3) {
    f.kind = FeatureKind::Face;
    f.p = on_face;
    f.d = face_normal;
    return true;
  }
  const Vec3 e = pts[1] - pts[0];
  if (!(e.norm() > 0.0)) return false;
  f.kind = FeatureKind::Segment;
  f.d = e / e.norm();
  return true;
}

// does the feature pair reproduce the distance query (its normal, distance and witness on A), so that
// its derivatives are those of the contact the query found? An edge whose foot lies beyond its ends,
// cores that cross, or a pair of kinds without a contact type (a face and an edge) do not
bool reproduces(const Feature& fa, const SE3& Ma, const Feature& fb, const SE3& Mb, const DistanceResult& r) {
  using K = FeatureKind;
  if ((fa.kind == K::Face && fb.kind != K::Point) || (fb.kind == K::Face && fa.kind == K::Segment)) return false;
  const FeatureGeometry g = evaluateFeatures(fa, Ma, fb, Mb, r.normal);
  const double scale = 1.0 + std::max(Ma.p.norm(), Mb.p.norm());
  return g.normal.dot(r.normal) > 1.0 - 1e-9 && std::abs(g.distance - r.distance) <= 1e-9 * scale &&
         (g.point_a - r.point_a).norm() <= 1e-7 * scale;
}

}  // namespace

void convexPair(const CollisionShape& a, const SE3& Ma, int ga, const CollisionShape& b, const SE3& Mb, int gb,
                double margin, std::vector<Contact>& out) {
  const DistanceResult r = signedDistance(a, Ma, b, Mb);
  if (r.distance >= margin) return;
  const Vec3 n = r.normal;  // from B to A
  std::vector<Vec3> fa = supportFeature(a, Ma.R.transpose() * (-n)), fb = supportFeature(b, Mb.R.transpose() * n);
  // point or edge contacts: one contact at the witness points. Between two points or edges of the bodies
  // (a vertex and a sphere, two edges) the contact is theirs, so its normal follows both as they move (a
  // ball pushed across a corner turns about it); otherwise the normal turns with B
  auto witnessContact = [&]() {
    // the features that hold the witness points: the support points along n within round-off of it
    const double exact = 1e-9;
    Feature ea, eb;
    if (supportAsFeature(a, supportFeature(a, Ma.R.transpose() * (-n), exact), Ma.R.transpose() * (r.point_a - Ma.p),
                         Ma.R.transpose() * (-n), ea) &&
        supportAsFeature(b, supportFeature(b, Mb.R.transpose() * n, exact), Mb.R.transpose() * (r.point_b - Mb.p),
                         Mb.R.transpose() * n, eb) &&
        reproduces(ea, Ma, eb, Mb, r)) {
      addContact(out, ga, gb, ea, Ma, eb, Mb, n);
      return;
    }
    Feature pa, pb;
    pa.kind = FeatureKind::Point;
    pa.p = Ma.R.transpose() * (r.point_a - Ma.p);
    pb.kind = FeatureKind::Face;
    pb.p = Mb.R.transpose() * (r.point_b - Mb.p);
    pb.d = Mb.R.transpose() * n;
    addContact(out, ga, gb, pa, Ma, pb, Mb, n);
  };
  if (fa.size() < 3 && fb.size() < 3) {
    witnessContact();
    return;
  }
  // the side with the larger feature (by area, then by number of points) is the reference face, so the
  // clipped points are mostly material points of the other side; its feature is clipped to it
  const double area_a = featureArea(fa, Ma, n), area_b = featureArea(fb, Mb, n);
  const bool a_ref = area_a > area_b || (area_a == area_b && fa.size() > fb.size());
  const CollisionShape& R = a_ref ? a : b;
  const CollisionShape& I = a_ref ? b : a;
  const SE3& Mr = a_ref ? Ma : Mb;
  const SE3& Mi = a_ref ? Mb : Ma;
  const Vec3 n_ref = a_ref ? Vec3(-n) : n;  // outward from the reference shape towards the other
  std::vector<Vec3> ref = a_ref ? fa : fb, inc = a_ref ? fb : fa;
  for (Vec3& p : ref) p = Mr.actPoint(p);
  for (Vec3& p : inc) p = Mi.actPoint(p);
  manifold::orderAround(ref, n_ref);
  if (inc.size() >= 3) manifold::orderAround(inc, n_ref);
  // the reference plane passes through the reference's support point, grown by its margin
  double top = -INFINITY;
  for (const Vec3& p : ref) top = std::max(top, n_ref.dot(p));
  const Vec3 face_point = ref.front() + (top - n_ref.dot(ref.front())) * n_ref;
  Feature face;
  face.kind = FeatureKind::Face;
  face.p = Mr.R.transpose() * (face_point - Mr.p);
  face.d = Mr.R.transpose() * n_ref;
  face.margin = R.margin();
  const std::size_t first = out.size();
  if (clippedPatchContacts(face, ref, n_ref, Mr, a_ref ? ga : gb, inc, I.margin(), Mi, a_ref ? gb : ga, margin,
                           out) == 0) {
    witnessContact();  // the features only touch at their rims: the witness points describe it
    return;
  }
  if (!a_ref) swapRoles(out, first);
}

}  // namespace narrowphase
}  // namespace rigidiff
