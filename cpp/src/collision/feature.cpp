#include "rigidiff/collision/feature.hpp"

#include <cmath>

#include "rigidiff/macros.hpp"

namespace rigidiff {

ContactType contactType(FeatureKind a, FeatureKind b) {
  using K = FeatureKind;
  if ((a == K::Point || a == K::Circle) && b == K::Face) return ContactType::PointFace;
  if (a == K::Face && b == K::Point) return ContactType::FacePoint;
  if (a == K::Point && b == K::Point) return ContactType::PointPoint;
  if (a == K::Point && b == K::Segment) return ContactType::PointSegment;
  if (a == K::Segment && b == K::Point) return ContactType::SegmentPoint;
  if (a == K::Segment && b == K::Segment) return ContactType::SegmentSegment;
  if (a == K::Face && b == K::EdgeCut) return ContactType::FaceEdge;
  if (a == K::EdgeCut && b == K::Face) return ContactType::EdgeFace;
  RD_THROW(std::invalid_argument, "no contact type for feature kinds " << static_cast<int>(a) << " and "
                                                                         << static_cast<int>(b));
}

Vec3 circlePoint(const Feature& f, const SE3& Ma, const Vec3& n) {
  const Vec3 axis = Ma.R * f.d;
  const Vec3 m = n - n.dot(axis) * axis;
  const double len = m.norm();
  // any unit vector orthogonal to d serves when the circle lies flat: d's first orthogonal axis
  const Vec3 e = len > kCircleTiltTolerance ? Vec3(-m / len) : Vec3(Ma.R * f.d.unitOrthogonal());
  return Ma.actPoint(f.p) + f.radius * (std::cos(f.angle) * e + std::sin(f.angle) * axis.cross(e));
}

Vec3 edgeCutPoint(const Feature& edge, const SE3& Me, const Feature& face, const SE3& Mf) {
  const Vec3 c = Me.actPoint(edge.p), u = Me.R * edge.d;
  const Vec3 sp = Mf.actPoint(face.side_p), sn = Mf.R * face.side_n;
  const double den = sn.dot(u);
  if (std::abs(den) <= kEdgeCutTolerance) return c;
  return c + (sn.dot(sp - c) / den) * u;
}

namespace {

// point x against the line through c with unit direction u: the foot of the perpendicular
Vec3 footOnLine(const Vec3& x, const Vec3& c, const Vec3& u) { return c + u.dot(x - c) * u; }

// centres (before margins) and the unit normal from B to A
void centresAndNormal(const Feature& a, const SE3& Ma, const Feature& b, const SE3& Mb, const Vec3& fallback,
                      Vec3& ca, Vec3& cb, Vec3& n) {
  using K = FeatureKind;
  const Vec3 pb = b.kind == K::EdgeCut ? edgeCutPoint(b, Mb, a, Ma) : Mb.actPoint(b.p);
  const Vec3 pa = a.kind == K::Circle    ? circlePoint(a, Ma, Mb.R * b.d)
                  : a.kind == K::EdgeCut ? edgeCutPoint(a, Ma, b, Mb)
                                         : Ma.actPoint(a.p);
  if (b.kind == K::Face) {  // point of A on the plane of B
    n = Mb.R * b.d;
    ca = pa;
    cb = pa - n.dot(pa - pb) * n;
    return;
  }
  if (a.kind == K::Face) {  // point of B on the plane of A: the normal is minus A's outward normal
    n = -(Ma.R * a.d);
    cb = pb;
    ca = pb + n.dot(pa - pb) * n;
    return;
  }
  if (a.kind == K::Segment && b.kind == K::Segment) {
    const Vec3 ua = Ma.R * a.d, ub = Mb.R * b.d;
    const Vec3 w = pa - pb;
    const double k = ua.dot(ub), den = 1.0 - k * k;
    if (den > kParallelLinesTolerance) {
      // closest points of the two lines
      const double s = (k * ub.dot(w) - ua.dot(w)) / den;
      const double t = (ub.dot(w) - k * ua.dot(w)) / den;
      ca = pa + s * ua;
      cb = pb + t * ub;
      const Vec3 c = ua.cross(ub);
      n = c / std::sqrt(den);
      // the common perpendicular, on the side of the reference normal: the lines may have passed
      // through each other (penetration), so the side of ca - cb does not orient it
      if (n.dot(fallback) < 0.0) n = -n;
      return;
    }
    ca = pa;
    cb = footOnLine(pa, pb, ub);
  } else if (a.kind == K::Segment) {  // point of B against the line of A
    cb = pb;
    ca = footOnLine(pb, pa, Ma.R * a.d);
  } else if (b.kind == K::Segment) {  // point of A against the line of B
    ca = pa;
    cb = footOnLine(pa, pb, Mb.R * b.d);
  } else {
    ca = pa;
    cb = pb;
  }
  const Vec3 w = ca - cb;
  const double len = w.norm();
  n = len > kCoincidentCentresTolerance * (1.0 + ca.norm()) ? Vec3(w / len) : fallback;
}

}  // namespace

FeatureGeometry evaluateFeatures(const Feature& a, const SE3& Ma, const Feature& b, const SE3& Mb,
                                 const Vec3& fallback_normal) {
  Vec3 ca, cb, n;
  centresAndNormal(a, Ma, b, Mb, fallback_normal, ca, cb, n);
  FeatureGeometry g;
  g.normal = n;
  g.point_a = ca - a.margin * n;
  g.point_b = cb + b.margin * n;
  g.distance = n.dot(ca - cb) - a.margin - b.margin;
  return g;
}

}  // namespace rigidiff
