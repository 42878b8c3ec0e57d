#include "rigidiff/collision/manifold.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "axes.hpp"

namespace rigidiff {
namespace manifold {

void orderAround(std::vector<Vec3>& pts, const Vec3& n) {
  if (pts.size() < 3) return;
  Vec3 c = Vec3::Zero();
  for (const Vec3& p : pts) c += p;
  c /= static_cast<double>(pts.size());
  const Vec3 e1 = axes::anyOrthogonal(n);
  const Vec3 e2 = n.cross(e1);
  std::vector<std::pair<double, Vec3>> keyed;
  keyed.reserve(pts.size());
  for (const Vec3& p : pts) keyed.emplace_back(std::atan2(e2.dot(p - c), e1.dot(p - c)), p);
  std::sort(keyed.begin(), keyed.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  for (std::size_t k = 0; k < pts.size(); ++k) pts[k] = keyed[k].second;
}

std::vector<Vec3> clipToPrism(const std::vector<Vec3>& incident, const std::vector<Vec3>& reference, const Vec3& n) {
  std::vector<Vec3> poly = incident, next;
  const std::size_t m = reference.size();
  for (std::size_t e = 0; e < m && !poly.empty(); ++e) {
    const Vec3& r0 = reference[e];
    const Vec3& r1 = reference[(e + 1) % m];
    const Vec3 inward = n.cross(r1 - r0);  // counter-clockwise order: the interior is on the left
    const double scale = (r1 - r0).norm();
    if (scale == 0.0) continue;
    auto side = [&](const Vec3& p) { return inward.dot(p - r0) / scale; };
    next.clear();
    const std::size_t k = poly.size();
    auto cut = [&](const Vec3& a, const Vec3& b, double sa, double sb) { return Vec3(a + (sa / (sa - sb)) * (b - a)); };
    if (k == 1) {
      if (side(poly[0]) >= 0.0) next.push_back(poly[0]);
    } else if (k == 2) {  // a segment
      const double sa = side(poly[0]), sb = side(poly[1]);
      if (sa >= 0.0) next.push_back(poly[0]);
      if ((sa >= 0.0) != (sb >= 0.0)) next.push_back(cut(poly[0], poly[1], sa, sb));
      if (sb >= 0.0) next.push_back(poly[1]);
    } else {  // Sutherland-Hodgman on the closed polygon
      for (std::size_t i = 0; i < k; ++i) {
        const Vec3& prev = poly[(i + k - 1) % k];
        const Vec3& cur = poly[i];
        const double sp = side(prev), sc = side(cur);
        if ((sp >= 0.0) != (sc >= 0.0)) next.push_back(cut(prev, cur, sp, sc));
        if (sc >= 0.0) next.push_back(cur);
      }
    }
    poly.swap(next);
  }
  return poly;
}

std::vector<int> reduceToFour(const std::vector<Vec3>& pts, const std::vector<double>& depth) {
  const int n = static_cast<int>(pts.size());
  std::vector<int> keep(n);
  std::iota(keep.begin(), keep.end(), 0);
  if (n <= 4) return keep;
  keep.clear();
  const int first = static_cast<int>(std::min_element(depth.begin(), depth.end()) - depth.begin());
  keep.push_back(first);
  int second = first;
  double far = -1.0;
  for (int i = 0; i < n; ++i)
    if ((pts[i] - pts[first]).squaredNorm() > far) {
      far = (pts[i] - pts[first]).squaredNorm();
      second = i;
    }
  keep.push_back(second);
  // third: the largest triangle; fourth: the largest area added on the other side of the diagonal
  int third = -1;
  double best = -1.0;
  Vec3 nrm = Vec3::Zero();
  for (int i = 0; i < n; ++i) {
    const Vec3 c = (pts[second] - pts[first]).cross(pts[i] - pts[first]);
    if (c.squaredNorm() > best) {
      best = c.squaredNorm();
      third = i;
      nrm = c;
    }
  }
  if (third < 0 || best == 0.0) {
    std::sort(keep.begin(), keep.end());
    return keep;
  }
  keep.push_back(third);
  int fourth = -1;
  best = 0.0;
  for (int i = 0; i < n; ++i) {
    const double a = -(pts[second] - pts[first]).cross(pts[i] - pts[first]).dot(nrm);
    if (a > best) {
      best = a;
      fourth = i;
    }
  }
  if (fourth >= 0) keep.push_back(fourth);
  std::sort(keep.begin(), keep.end());
  return keep;
}

}  // namespace manifold
}  // namespace rigidiff
