// Checks that evaluateFeatureDerivatives (and the point form it chains through rigid motions) allocates nothing,
// for every feature pair and its degenerate branches: malloc is wrapped and counted around each call. Built
// and run by test_no_heap_allocation.py.
#include <cstdio>

#include "rigidiff/collision/feature_derivatives.hpp"

#include "malloc_counter.hpp"  // after the standard headers, which declare malloc

using namespace rigidiff;

namespace {

Feature feature(FeatureKind kind, const Vec3& p, const Vec3& d) {
  Feature f;
  f.kind = kind;
  f.p = p;
  f.d = d.normalized();
  f.margin = 0.05;
  return f;
}

// a rim point of a cylinder (radius 0.1) at angle t from the rim's support point
Feature circle(const Vec3& p, const Vec3& d, double t) {
  Feature f = feature(FeatureKind::Circle, p, d);
  f.margin = 0.0;
  f.radius = 0.1;
  f.angle = t;
  return f;
}

}  // namespace

int main() {
  using K = FeatureKind;
  const SE3 Ma(Eigen::AngleAxisd(0.4, Vec3(1.0, 2.0, 3.0).normalized()).toRotationMatrix(), Vec3(0.1, -0.2, 0.3));
  const SE3 Mb(Eigen::AngleAxisd(-0.7, Vec3(0.0, 1.0, 1.0).normalized()).toRotationMatrix(), Vec3(-0.3, 0.1, 0.0));
  const Vec3 fallback = Vec3(0.1, 0.2, 1.0).normalized();
  const Vec3 x(0.2, 0.1, -0.3), y(-0.1, 0.4, 0.2), e(1.0, 0.5, 0.0);
  const Vec3 xa = Ma.R.transpose() * (Mb.actPoint(y) - Ma.p);  // A's local point at B's point y
  struct Pair {
    const char* name;
    Feature a, b;
  };
  // the last two share one world line through the same point: the fallback branches
  const Pair pairs[] = {
      {"point-face", feature(K::Point, x, e), feature(K::Face, y, e)},
      {"face-point", feature(K::Face, x, e), feature(K::Point, y, e)},
      {"point-point", feature(K::Point, x, e), feature(K::Point, y, e)},
      {"point-segment", feature(K::Point, x, e), feature(K::Segment, y, e)},
      {"segment-point", feature(K::Segment, x, e), feature(K::Point, y, e)},
      {"segment-segment", feature(K::Segment, x, e), feature(K::Segment, y, Vec3(0.0, 1.0, 0.3))},
      {"circle-face", circle(x, e, 0.5), feature(K::Face, y, e)},
      {"flat circle-face", circle(x, Ma.R.transpose() * Mb.R * e, 0.0), feature(K::Face, y, e)},
      {"coincident points", feature(K::Point, xa, e), feature(K::Point, y, e)},
      {"coincident lines", feature(K::Segment, xa, Ma.R.transpose() * Mb.R * e), feature(K::Segment, y, e)},
  };
  int failures = 0;
  for (const Pair& pair : pairs) {
    FeatureGeometry g;
    FeatureGeometryDerivatives dg;
    const long before = g_mallocs;
    evaluateFeatureDerivatives(pair.a, Ma, pair.b, Mb, fallback, g, dg);
    const long n = g_mallocs - before;
    const bool finite = dg.dpoint.allFinite() && dg.dnormal.allFinite() && dg.ddistance.allFinite();
    std::printf("%-18s %ld heap allocations%s\n", pair.name, n, finite ? "" : ", non-finite derivatives");
    if (n != 0 || !finite) ++failures;
  }
  std::printf("%d of %zu pairs failed\n", failures, sizeof(pairs) / sizeof(pairs[0]));
  return failures == 0 ? 0 : 1;
}
