// Any two convex shapes: GJK/EPA gives the normal; each shape's support feature along it (a face,
// an edge or a point of its core) is collected, and the larger one clips the other, as for boxes.
#include <algorithm>
#include <cmath>

#include "rigidiff/collision/distance.hpp"
#include "rigidiff/collision/manifold.hpp"
#include "rigidiff/collision/narrowphase.hpp"

namespace rigidiff {
namespace narrowphase {

namespace {

// points of the core of s (local frame) whose support value along the local direction u is within a
// small fraction of the shape's size of the maximum: a face, an edge or a single point
std::vector<Vec3> supportFeature(const CollisionShape& s, const Vec3& u) {
  std::vector<Vec3> pts;
  const double flat = 1e-2;  // about 0.6 degrees of tilt still counts as resting on a face
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

}  // namespace

void convexPair(const CollisionShape& a, const SE3& Ma, int ga, const CollisionShape& b, const SE3& Mb, int gb,
                double margin, std::vector<Contact>& out) {
  const DistanceResult r = signedDistance(a, Ma, b, Mb);
  if (r.distance >= margin) return;
  const Vec3 n = r.normal;  // from B to A
  std::vector<Vec3> fa = supportFeature(a, Ma.R.transpose() * (-n)), fb = supportFeature(b, Mb.R.transpose() * n);
  // point or edge contacts: one contact at the witness points, the normal turning with B
  auto witnessContact = [&]() {
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
