// The pair queries of the box tree (collision/bvh.hpp): a tree against itself, and two trees whose
// frames differ by a rigid transform.
#include <algorithm>
#include <cmath>

#include "bvh_stack.hpp"
#include "rigidiff/collision/bvh.hpp"

namespace rigidiff {

namespace {

using NodePair = std::pair<int, int>;

bool overlapGrown(const Vec3& alo, const Vec3& ahi, const Vec3& blo, const Vec3& bhi, double margin) {
  for (int k = 0; k < 3; ++k)
    if (alo[k] - margin > bhi[k] || blo[k] > ahi[k] + margin) return false;
  return true;
}

// a's box (a's frame) against b's box (b's frame) placed in a's frame: R = aMb.R, absR = |R| (slightly
// grown so that nearly parallel edges never produce a false separation), p = aMb.p
struct Placement {
  Mat3 R, absR;
  Vec3 p;
  double margin;
};

// centre and half extents of a's box grown by the margin, and the offset of b's centre from it (a's frame)
struct BoxPair {
  Vec3 ha, hb, t;
  BoxPair(const Vec3& alo, const Vec3& ahi, const Vec3& blo, const Vec3& bhi, const Placement& P)
      : ha(0.5 * (ahi - alo) + Vec3::Constant(P.margin)), hb(0.5 * (bhi - blo)),
        t(P.R * (0.5 * (blo + bhi)) + P.p - 0.5 * (alo + ahi)) {}
};

// separated along a face normal of either box? (conservative: enough for pruning nodes)
bool separatedByFaces(const BoxPair& b, const Placement& P) {
  for (int i = 0; i < 3; ++i)
    if (std::abs(b.t[i]) > b.ha[i] + P.absR.row(i).dot(b.hb)) return true;
  for (int j = 0; j < 3; ++j)
    if (std::abs(P.R.col(j).dot(b.t)) > P.absR.col(j).dot(b.ha) + b.hb[j]) return true;
  return false;
}

// separated along the cross product of a's axis i and b's axis j, for some i, j?
bool separatedByEdges(const BoxPair& b, const Placement& P) {
  for (int i = 0; i < 3; ++i) {
    const int i1 = (i + 1) % 3, i2 = (i + 2) % 3;
    for (int j = 0; j < 3; ++j) {
      const int j1 = (j + 1) % 3, j2 = (j + 2) % 3;
      const double ra = b.ha[i1] * P.absR(i2, j) + b.ha[i2] * P.absR(i1, j);
      const double rb = b.hb[j1] * P.absR(i, j2) + b.hb[j2] * P.absR(i, j1);
      if (std::abs(b.t[i2] * P.R(i1, j) - b.t[i1] * P.R(i2, j)) > ra + rb) return true;
    }
  }
  return false;
}

// the larger of two nodes (sum of extents) is the one to open next
double extent(const Bvh::Node& n) { return (n.hi - n.lo).sum(); }

// the walk of two trees from nodes (ia, ib): meet(na, nb) prunes node pairs, visit(slot of a, slot of b)
// tests and records the primitive pairs of two leaves that meet
template <typename Meet, typename Visit>
void walkPairs(const Bvh& a, const Bvh& b, int ia, int ib, const Meet& meet, const Visit& visit) {
  BvhStack<NodePair> stack;
  stack.push({ia, ib});
  while (!stack.empty()) {
    const auto [ka, kb] = stack.pop();
    const Bvh::Node &na = a.nodes[ka], &nb = b.nodes[kb];
    if (!meet(na, nb)) continue;
    const bool leaf_a = na.count > 0, leaf_b = nb.count > 0;
    if (leaf_a && leaf_b) {
      for (int s = na.first; s < na.first + na.count; ++s)
        for (int r = nb.first; r < nb.first + nb.count; ++r) visit(s, r);
    } else if (leaf_b || (!leaf_a && extent(na) >= extent(nb))) {
      stack.push({na.first, kb});
      stack.push({ka + 1, kb});
    } else {
      stack.push({ka, nb.first});
      stack.push({ka, kb + 1});
    }
  }
}

}  // namespace

void bvhPairs(const Bvh& a, const Bvh& b, const SE3& aMb, double margin, std::vector<std::pair<int, int>>& out,
              PairSortBuffers* buffers) {
  out.clear();
  if (a.nodes.empty() || b.nodes.empty()) return;
  if (aMb.R == Mat3::Identity()) {
    // a translation: b's boxes stay axis-aligned in a's frame, and the test is the exact corner comparison
    const Vec3& p = aMb.p;
    walkPairs(
        a, b, 0, 0,
        [&](const Bvh::Node& na, const Bvh::Node& nb) {
          return overlapGrown(na.lo, na.hi, nb.lo + p, nb.hi + p, margin);
        },
        [&](int s, int r) {
          if (overlapGrown(a.lo[s], a.hi[s], b.lo[r] + p, b.hi[r] + p, margin))
            out.emplace_back(a.order[s], b.order[r]);
        });
  } else {
    Placement P;
    P.R = aMb.R;
    P.absR = aMb.R.cwiseAbs().array() + 1e-14;
    P.p = aMb.p;
    P.margin = margin;
    walkPairs(
        a, b, 0, 0,
        [&](const Bvh::Node& na, const Bvh::Node& nb) {
          return !separatedByFaces(BoxPair(na.lo, na.hi, nb.lo, nb.hi, P), P);
        },
        [&](int s, int r) {
          const BoxPair boxes(a.lo[s], a.hi[s], b.lo[r], b.hi[r], P);
          if (!separatedByFaces(boxes, P) && !separatedByEdges(boxes, P)) out.emplace_back(a.order[s], b.order[r]);
        });
  }
  sortPairs(out, static_cast<int>(a.order.size()), static_cast<int>(b.order.size()), buffers);
}

void Bvh::selfPairs(double margin, std::vector<std::pair<int, int>>& out) const {
  out.clear();
  auto meet = [&](const Node& na, const Node& nb) { return overlapGrown(na.lo, na.hi, nb.lo, nb.hi, margin); };
  auto visit = [&](int s, int r) {
    if (overlapGrown(lo[s], hi[s], lo[r], hi[r], margin))
      out.emplace_back(std::min(order[s], order[r]), std::max(order[s], order[r]));
  };
  // every pair of primitives meets in exactly one node: inside a leaf, or across an internal node's children
  for (int k = 0; k < static_cast<int>(nodes.size()); ++k) {
    const Node& node = nodes[k];
    if (node.count == 0) {
      walkPairs(*this, *this, k + 1, node.first, meet, visit);
      continue;
    }
    for (int s = node.first; s < node.first + node.count; ++s)
      for (int r = s + 1; r < node.first + node.count; ++r) visit(s, r);
  }
  std::sort(out.begin(), out.end());
}

}  // namespace rigidiff
