#include "rigidiff/collision/manifold.hpp"

#include <algorithm>
#include <cmath>

#include "axes.hpp"
#include "thread_scratch.hpp"

namespace rigidiff {
namespace manifold {

namespace {

// orderAround's angle keys of a face of more than 16 points
struct OrderScratch {
  std::vector<std::pair<double, Vec3>> keyed;
};

}  // namespace

void orderAround(Vec3* pts, std::size_t size, const Vec3& n) {
  if (size < 3) return;
  Vec3 c = Vec3::Zero();
  for (std::size_t k = 0; k < size; ++k) c += pts[k];
  c /= static_cast<double>(size);
  const Vec3 e1 = axes::anyOrthogonal(n);
  const Vec3 e2 = n.cross(e1);
  // sorted by angle: a face's few points by insertion on the stack, as libstdc++'s std::sort sorts up
  // to 16 (equal keys keep their order; a key below the first goes straight to the front), so that
  // every size keeps the order the std::sort below gives
  constexpr std::size_t kInsertion = 16;
  if (size <= kInsertion) {
    double key[kInsertion];
    Vec3 at[kInsertion];
    for (std::size_t i = 0; i < size; ++i) {
      const double ki = std::atan2(e2.dot(pts[i] - c), e1.dot(pts[i] - c));
      const Vec3 pi = pts[i];
      std::size_t j = i;
      if (i > 0 && ki < key[0]) {
        for (; j > 0; --j) key[j] = key[j - 1], at[j] = at[j - 1];
      } else {
        for (; j > 0 && ki < key[j - 1]; --j) key[j] = key[j - 1], at[j] = at[j - 1];
      }
      key[j] = ki;
      at[j] = pi;
    }
    for (std::size_t k = 0; k < size; ++k) pts[k] = at[k];
    return;
  }
  // the thread's keys: ordering a large face allocates nothing once warm
  std::vector<std::pair<double, Vec3>>& keyed = narrowphase::threadScratch<OrderScratch>().keyed;
  keyed.clear();
  for (std::size_t k = 0; k < size; ++k) keyed.emplace_back(std::atan2(e2.dot(pts[k] - c), e1.dot(pts[k] - c)), pts[k]);
  std::sort(keyed.begin(), keyed.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  for (std::size_t k = 0; k < size; ++k) pts[k] = keyed[k].second;
}

namespace {

// every point carries the line the polygon follows from it to the next point: an incident edge
// (edge0, edge1), or the side plane of reference edge e (stored as edge0 = -1 - e)
struct Tracked {
  ClippedPoint point;
  int line0, line1;
};

// the working polygons of clipToPrism and their points' signed distances to the current side plane
struct ClipScratch {
  std::vector<Tracked> poly, next;
  std::vector<double> side;
};

// reduceTouchingFirst's copies of the points touching the plane, and their indices
struct TouchingScratch {
  std::vector<Vec3> pts;
  std::vector<double> depth;
  std::vector<int> index;
};

}  // namespace

void clipToPrism(PointsView incident, PointsView reference, const Vec3& n, std::vector<ClippedPoint>& out) {
  const int k0 = static_cast<int>(incident.size());
  // the thread's scratch: clipping allocates nothing once warm
  ClipScratch& scratch = narrowphase::threadScratch<ClipScratch>();
  std::vector<Tracked>& poly = scratch.poly;
  std::vector<Tracked>& next = scratch.next;
  std::vector<double>& sides = scratch.side;
  poly.clear();
  for (int i = 0; i < k0; ++i) {
    ClippedPoint c;
    c.x = incident[i];
    c.vertex = i;
    poly.push_back({c, i, (i + 1) % k0});
  }
  const std::size_t m = reference.size();
  for (std::size_t e = 0; e < m && !poly.empty(); ++e) {
    const Vec3& r0 = reference[e];
    const Vec3& r1 = reference[(e + 1) % m];
    const Vec3 inward = n.cross(r1 - r0);  // counter-clockwise order: the interior is on the left
    const double scale = (r1 - r0).norm();
    if (scale == 0.0) continue;
    const int side_line = -1 - static_cast<int>(e);
    auto side = [&](const Vec3& x) { return inward.dot(x - r0) / scale; };
    // the point where the line from a (following a's line) to b crosses the side plane
    auto cut = [&](const Tracked& a, const Tracked& b, double sa, double sb) {
      Tracked t;
      t.point.x = a.point.x + (sa / (sa - sb)) * (b.point.x - a.point.x);
      if (a.line0 >= 0) {  // an incident edge crosses the side plane
        t.point.edge0 = a.line0;
        t.point.edge1 = a.line1;
        t.point.side = static_cast<int>(e);
      } else {  // two side planes meet: below the reference point they share, if adjacent
        const std::size_t s = static_cast<std::size_t>(-1 - a.line0);
        if ((s + 1) % m == e) t.point.corner = static_cast<int>(e);
        if ((e + 1) % m == s) t.point.corner = static_cast<int>(s);
      }
      t.line0 = a.line0;
      t.line1 = a.line1;
      return t;
    };
    next.clear();
    const std::size_t k = poly.size();
    sides.resize(k);
    for (std::size_t i = 0; i < k; ++i) sides[i] = side(poly[i].point.x);  // once per point and plane
    if (k == 1) {
      if (sides[0] >= 0.0) next.push_back(poly[0]);
    } else if (k == 2) {  // a segment
      const double sa = sides[0], sb = sides[1];
      if (sa >= 0.0) next.push_back(poly[0]);
      if ((sa >= 0.0) != (sb >= 0.0)) next.push_back(cut(poly[0], poly[1], sa, sb));
      if (sb >= 0.0) next.push_back(poly[1]);
    } else {  // Sutherland-Hodgman on the closed polygon
      for (std::size_t i = 0; i < k; ++i) {
        const std::size_t ip = (i + k - 1) % k;
        const Tracked& prev = poly[ip];
        const Tracked& cur = poly[i];
        const double sp = sides[ip], sc = sides[i];
        if ((sp >= 0.0) != (sc >= 0.0)) {
          next.push_back(cut(prev, cur, sp, sc));
          if (sp >= 0.0) {  // leaving: the polygon goes on along the side plane
            next.back().line0 = side_line;
            next.back().line1 = side_line;
          }
        }
        if (sc >= 0.0) next.push_back(cur);
      }
    }
    poly.swap(next);
  }
  out.clear();
  for (const Tracked& t : poly) out.push_back(t.point);
}

void clippedFeatures(const ClippedPoint& c, PointsView incident, PointsView reference, const Vec3& n, const SE3& Mr,
                     const SE3& Mi, Feature& ref, Feature& inc) {
  inc.kind = FeatureKind::Point;
  inc.p = Mi.R.transpose() * (c.x - Mi.p);
  if (c.corner >= 0 && incident.size() >= 3) {
    // the incident face's outward normal (Newell), facing the reference side: against n
    Vec3 nf = Vec3::Zero();
    for (std::size_t k = 0; k < incident.size(); ++k) nf += incident[k].cross(incident[(k + 1) % incident.size()]);
    if (nf.norm() == 0.0) return;
    if (nf.dot(n) > 0.0) nf = -nf;
    ref.kind = FeatureKind::Point;
    ref.p = Mr.R.transpose() * (reference[c.corner] - Mr.p);
    inc.kind = FeatureKind::Face;
    inc.p = Mi.R.transpose() * (incident[0] - Mi.p);
    inc.d = Mi.R.transpose() * nf.normalized();
    return;
  }
  if (c.edge0 < 0) return;
  const Vec3 along = incident[c.edge1] - incident[c.edge0];
  const Vec3& r0 = reference[c.side];
  const Vec3 inward = n.cross(reference[(c.side + 1) % reference.size()] - r0);
  if (along.norm() == 0.0 || inward.norm() == 0.0) return;
  inc.kind = FeatureKind::EdgeCut;
  inc.p = Mi.R.transpose() * (incident[c.edge0] - Mi.p);
  inc.d = Mi.R.transpose() * along.normalized();
  ref.side_p = Mr.R.transpose() * (r0 - Mr.p);
  ref.side_n = Mr.R.transpose() * inward.normalized();
}

FourIndices reduceToFour(const std::vector<Vec3>& pts, const std::vector<double>& depth) {
  const int n = static_cast<int>(pts.size());
  FourIndices keep;
  if (n <= 4) {
    for (int i = 0; i < n; ++i) keep.push(i);
    return keep;
  }
  const int first = static_cast<int>(std::min_element(depth.begin(), depth.end()) - depth.begin());
  keep.push(first);
  int second = first;
  double far = -1.0;
  for (int i = 0; i < n; ++i)
    if ((pts[i] - pts[first]).squaredNorm() > far) {
      far = (pts[i] - pts[first]).squaredNorm();
      second = i;
    }
  keep.push(second);
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
    keep.sort();
    return keep;
  }
  keep.push(third);
  int fourth = -1;
  best = 0.0;
  for (int i = 0; i < n; ++i) {
    const double a = -(pts[second] - pts[first]).cross(pts[i] - pts[first]).dot(nrm);
    if (a > best) {
      best = a;
      fourth = i;
    }
  }
  if (fourth >= 0) keep.push(fourth);
  keep.sort();
  return keep;
}

FourIndices reduceTouchingFirst(const std::vector<Vec3>& pts, const std::vector<double>& depth) {
  const int n = static_cast<int>(pts.size());
  FourIndices keep;
  if (n <= 4) {
    for (int i = 0; i < n; ++i) keep.push(i);
    return keep;
  }
  int touching = 0;
  for (int i = 0; i < n; ++i) touching += depth[i] <= 0.0 ? 1 : 0;
  if (touching >= 4) {
    // the thread's copies of the touching points
    TouchingScratch& scratch = narrowphase::threadScratch<TouchingScratch>();
    std::vector<Vec3>& tp = scratch.pts;
    std::vector<double>& td = scratch.depth;
    std::vector<int>& which = scratch.index;
    tp.clear();
    td.clear();
    which.clear();
    for (int i = 0; i < n; ++i)
      if (depth[i] <= 0.0) {
        tp.push_back(pts[i]);
        td.push_back(depth[i]);
        which.push_back(i);
      }
    for (int k : reduceToFour(tp, td)) keep.push(which[k]);
    return keep;  // increasing already: `which` increases
  }
  for (int i = 0; i < n; ++i)
    if (depth[i] <= 0.0) keep.push(i);
  // then the points above nearest the plane, by depth, then index (what a stable sort of them by depth
  // would put first); at most three picks, so no sort
  while (keep.count < 4) {
    int pick = -1;
    for (int i = 0; i < n; ++i) {
      if (depth[i] <= 0.0 || std::find(keep.begin(), keep.end(), i) != keep.end()) continue;
      if (pick < 0 || depth[i] < depth[pick]) pick = i;
    }
    if (pick < 0) break;
    keep.push(pick);
  }
  keep.sort();
  return keep;
}

}  // namespace manifold
}  // namespace rigidiff
