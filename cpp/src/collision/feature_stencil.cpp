#include "rigidiff/collision/feature_stencil.hpp"

namespace rigidiff {

namespace {

// two unit tangents t1, t2 of a plane with unit normal n, with t1 x t2 = n
void planeTangents(const Vec3& n, Vec3& t1, Vec3& t2) {
  t1 = n.unitOrthogonal();
  t2 = n.cross(t1);
}

void addPlane(const Vec3& p, const Vec3& n, FeatureStencil& s) {
  Vec3 t1, t2;
  planeTangents(n, t1, t2);
  s.points[s.count++] = p;
  s.points[s.count++] = p + t1;
  s.points[s.count++] = p + t2;
}

}  // namespace

FeatureStencil featureStencil(const Feature& f, const SE3& M, bool carries_side_plane) {
  FeatureStencil s;
  const Vec3 p = M.actPoint(f.p);
  switch (f.kind) {
    case FeatureKind::Point: s.points[s.count++] = p; break;
    case FeatureKind::Segment:
    case FeatureKind::EdgeCut:
      s.points[s.count++] = p;
      s.points[s.count++] = p + M.R * f.d;
      break;
    case FeatureKind::Face:
      addPlane(p, M.R * f.d, s);
      if (carries_side_plane) addPlane(M.actPoint(f.side_p), M.R * f.side_n, s);
      break;
    case FeatureKind::Circle:
      s.points[s.count++] = p;
      s.points[s.count++] = p + M.R * f.d;
      s.points[s.count++] = p + M.R * f.d.unitOrthogonal();
      break;
  }
  return s;
}

}  // namespace rigidiff
