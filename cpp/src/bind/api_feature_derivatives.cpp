// Binding of the feature-contact derivatives (declared in rigidiff/bind/api.hpp), for tests.
#include <cmath>
#include <string>

#include "rigidiff/bind/api.hpp"
#include "rigidiff/bind/checks.hpp"
#include "rigidiff/collision/feature_derivatives.hpp"

namespace rigidiff {
namespace bind {

namespace {

// the derivatives assume unit directions: a looser vector would bias them by its norm error
constexpr double kUnitTolerance = 1e-9;

Vec3 readUnit(const double* x, const std::string& what) {
  checkFinite(x, 3, what.c_str());
  const Vec3 u(x[0], x[1], x[2]);
  RD_CHECK_ARG(std::abs(u.norm() - 1.0) <= kUnitTolerance,
               what << " must be a unit vector (within " << kUnitTolerance << "), its norm is " << u.norm());
  return u;
}

Feature readFeature(int kind, const double* p, const double* d, double margin, const std::string& side) {
  RD_CHECK_ARG(kind >= 0 && kind <= 4,
               "kind_" << side << " must be 0 (point), 1 (segment), 2 (face), 3 (circle) or 4 (edge cut), got "
                       << kind);
  RD_CHECK_ARG(std::isfinite(margin) && margin >= 0.0, "margin_" << side << " must be finite and >= 0, got " << margin);
  Feature f;
  f.kind = static_cast<FeatureKind>(kind);
  checkFinite(p, 3, ("p_" + side).c_str());
  if (f.kind == FeatureKind::Point)
    checkFinite(d, 3, ("d_" + side).c_str());  // unused, but garbage in is still refused
  else
    f.d = readUnit(d, "d_" + side);
  f.p = Vec3(p[0], p[1], p[2]);
  f.margin = margin;
  return f;
}

// the features, placements and fallback normal of a pair, checked
struct FeaturePair {
  Feature a, b;
  SE3 Ma, Mb;
  Vec3 fallback;
};

FeaturePair readPair(int kind_a, const double* p_a, const double* d_a, double margin_a, double radius_a,
                     double angle_a, const double* pose_a, int kind_b, const double* p_b, const double* d_b,
                     double margin_b, const double* pose_b, const double* fallback, const double* side_p,
                     const double* side_n) {
  FeaturePair pair;
  Feature& a = pair.a;
  Feature& b = pair.b;
  a = readFeature(kind_a, p_a, d_a, margin_a, "a");
  b = readFeature(kind_b, p_b, d_b, margin_b, "b");
  checkFinite(side_p, 3, "side_p");
  const Vec3 sn = readUnit(side_n, "side_n");
  for (Feature* f : {&a, &b}) {
    if (f->kind != FeatureKind::Face) continue;
    f->side_p = Vec3(side_p[0], side_p[1], side_p[2]);
    f->side_n = sn;
  }
  RD_CHECK_ARG(std::isfinite(radius_a) && radius_a >= 0.0 && std::isfinite(angle_a),
               "radius_a must be finite and >= 0 and angle_a finite, got " << radius_a << ", " << angle_a);
  a.radius = radius_a;
  a.angle = angle_a;
  RD_CHECK_ARG(b.kind != FeatureKind::Circle, "a circle feature can only be A (kind_a), against a face");
  contactType(a.kind, b.kind);  // refuses face-face, face-segment, circles and edge cuts off a face
  pair.Ma = readPlacement(pose_a);
  pair.Mb = readPlacement(pose_b);
  pair.fallback = readUnit(fallback, "fallback normal");
  return pair;
}

void writeValue(const FeatureGeometry& g, double* value) {
  Eigen::Map<Vec3> point(value), normal(value + 3);
  point = 0.5 * (g.point_a + g.point_b);
  normal = g.normal;
  value[6] = g.distance;
  checkResult(value, 7, "feature_derivatives");
}

// dpoint and dnormal (3 x cols) row-major, ddistance (cols), each checked finite
template <typename Block, typename Row>
void writeDerivatives(const Block& dpoint_in, const Block& dnormal_in, const Row& ddistance_in, double* dpoint,
                      double* dnormal, double* ddistance) {
  const int cols = static_cast<int>(dpoint_in.cols());
  using Out = Eigen::Map<Eigen::Matrix<double, 3, Eigen::Dynamic, Eigen::RowMajor>>;
  Out dpoint_out(dpoint, 3, cols), dnormal_out(dnormal, 3, cols);
  Eigen::Map<Eigen::RowVectorXd> ddistance_out(ddistance, cols);
  dpoint_out = dpoint_in;
  dnormal_out = dnormal_in;
  ddistance_out = ddistance_in;
  checkResult(dpoint, 3 * cols, "feature_derivatives");
  checkResult(dnormal, 3 * cols, "feature_derivatives");
  checkResult(ddistance, cols, "feature_derivatives");
}

}  // namespace

void featureDerivatives(int kind_a, const double* p_a, const double* d_a, double margin_a, double radius_a,
                        double angle_a, const double* pose_a, int kind_b, const double* p_b, const double* d_b,
                        double margin_b, const double* pose_b, const double* fallback, const double* side_p,
                        const double* side_n, double* value, double* dpoint, double* dnormal, double* ddistance) {
  const FeaturePair pair = readPair(kind_a, p_a, d_a, margin_a, radius_a, angle_a, pose_a, kind_b, p_b, d_b,
                                    margin_b, pose_b, fallback, side_p, side_n);
  FeatureGeometry g;
  FeatureGeometryDerivatives dg;
  evaluateFeatureDerivatives(pair.a, pair.Ma, pair.b, pair.Mb, pair.fallback, g, dg);
  writeValue(g, value);
  writeDerivatives(dg.dpoint, dg.dnormal, dg.ddistance, dpoint, dnormal, ddistance);
}

void featurePointDerivatives(int kind_a, const double* p_a, const double* d_a, double margin_a, double radius_a,
                             double angle_a, const double* pose_a, int kind_b, const double* p_b, const double* d_b,
                             double margin_b, const double* pose_b, const double* fallback, const double* side_p,
                             const double* side_n, double* value, int* counts, double* points, double* dpoint,
                             double* dnormal, double* ddistance) {
  const FeaturePair pair = readPair(kind_a, p_a, d_a, margin_a, radius_a, angle_a, pose_a, kind_b, p_b, d_b,
                                    margin_b, pose_b, fallback, side_p, side_n);
  FeatureGeometry g;
  FeaturePointDerivatives dg;
  evaluateFeaturePointDerivatives(pair.a, pair.Ma, pair.b, pair.Mb, pair.fallback, g, dg);
  writeValue(g, value);
  counts[0] = dg.a.count;
  counts[1] = dg.b.count;
  for (int k = 0; k < dg.a.count + dg.b.count; ++k) {
    Eigen::Map<Vec3> x(points + 3 * k);
    x = k < dg.a.count ? dg.a.points[k] : dg.b.points[k - dg.a.count];
  }
  writeDerivatives(dg.dpoint, dg.dnormal, dg.ddistance, dpoint, dnormal, ddistance);
}

}  // namespace bind
}  // namespace rigidiff
