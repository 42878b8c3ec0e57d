// Build, refit and the single-box queries of the box tree (collision/bvh.hpp); the pair queries are in
// bvh_pairs.cpp.
#include "rigidiff/collision/bvh.hpp"

#include <algorithm>
#include <cmath>

#include "bvh_stack.hpp"
#include "rigidiff/macros.hpp"

namespace rigidiff {

namespace {

void checkBoxes(const Vec3* lo, const Vec3* hi, int n, double inflate) {
  RD_CHECK_ARG(n >= 0, "number of boxes must be >= 0, got " << n);
  RD_CHECK_ARG(std::isfinite(inflate) && inflate >= 0.0, "box inflation must be finite and >= 0, got " << inflate);
  for (int i = 0; i < n; ++i) {
    RD_CHECK_ARG(lo[i].allFinite() && hi[i].allFinite(), "box " << i << " is not finite");
    RD_CHECK_ARG((lo[i].array() <= hi[i].array()).all(), "box " << i << " has a lower corner above its upper one");
  }
}

// the box of slots [begin, end)
void slotBox(const Bvh& t, int begin, int end, Vec3& lo, Vec3& hi) {
  lo = t.lo[begin];
  hi = t.hi[begin];
  for (int s = begin + 1; s < end; ++s) {
    lo = lo.cwiseMin(t.lo[s]);
    hi = hi.cwiseMax(t.hi[s]);
  }
}

// node over order[begin:end) (slots still hold primitive-indexed boxes, in `plo`/`phi`); returns its depth
int buildNode(Bvh& t, const std::vector<Vec3>& plo, const std::vector<Vec3>& phi, int begin, int end) {
  const int id = static_cast<int>(t.nodes.size());
  t.nodes.emplace_back();
  if (end - begin <= Bvh::kLeafSize) {
    t.nodes[id].first = begin;
    t.nodes[id].count = end - begin;
    return 0;
  }
  // longest axis of the centres' extent (centres doubled: lo + hi), median by (centre, index)
  Vec3 clo = plo[t.order[begin]] + phi[t.order[begin]], chi = clo;
  for (int s = begin + 1; s < end; ++s) {
    const Vec3 c = plo[t.order[s]] + phi[t.order[s]];
    clo = clo.cwiseMin(c);
    chi = chi.cwiseMax(c);
  }
  int axis;
  (chi - clo).maxCoeff(&axis);
  const int mid = begin + (end - begin) / 2;
  std::nth_element(t.order.begin() + begin, t.order.begin() + mid, t.order.begin() + end, [&](int a, int b) {
    const double ca = plo[a][axis] + phi[a][axis], cb = plo[b][axis] + phi[b][axis];
    return ca < cb || (ca == cb && a < b);
  });
  const int left = buildNode(t, plo, phi, begin, mid);
  const int right_id = static_cast<int>(t.nodes.size());
  const int right = buildNode(t, plo, phi, mid, end);
  t.nodes[id].first = right_id;
  t.nodes[id].count = 0;
  return 1 + std::max(left, right);
}

// out = the primitives of t whose boxes pass meets(lo, hi), sorted; meets must hold for a node's box
// whenever it holds for one of the boxes inside it
template <typename Meets>
void collect(const Bvh& t, const Meets& meets, std::vector<int>& out) {
  out.clear();
  if (t.nodes.empty()) return;
  BvhStack<int> stack;
  stack.push(0);
  while (!stack.empty()) {
    const int k = stack.pop();
    const Bvh::Node& node = t.nodes[k];
    if (!meets(node.lo, node.hi)) continue;
    if (node.count == 0) {
      stack.push(node.first);
      stack.push(k + 1);
      continue;
    }
    for (int s = node.first; s < node.first + node.count; ++s)
      if (meets(t.lo[s], t.hi[s])) out.push_back(t.order[s]);
  }
  std::sort(out.begin(), out.end());
}

}  // namespace

void Bvh::build(const Vec3* blo, const Vec3* bhi, int n, double inflate) {
  checkBoxes(blo, bhi, n, inflate);
  nodes.clear();
  order.resize(n);
  slot.resize(n);
  depth = 0;
  if (n == 0) {
    lo.clear();
    hi.clear();
    return;
  }
  for (int i = 0; i < n; ++i) order[i] = i;
  const std::vector<Vec3> plo(blo, blo + n), phi(bhi, bhi + n);
  // a median split leaves at least 2 primitives in a leaf: at most n / 2 leaves, n nodes
  nodes.reserve(static_cast<std::size_t>(n) + 1);
  depth = buildNode(*this, plo, phi, 0, n);
  // the median halves each node: the depth stays under the traversal stacks' bound
  if (depth >= kBvhMaxDepth) RD_THROW(std::logic_error, "box tree depth " << depth << " exceeds " << kBvhMaxDepth);
  for (int s = 0; s < n; ++s) slot[order[s]] = s;
  lo.resize(n);
  hi.resize(n);
  refit(blo, bhi, n, inflate);
}

void Bvh::refit(const Vec3* blo, const Vec3* bhi, int n, double inflate) {
  RD_CHECK_ARG(n == size(), "refit needs the " << size() << " boxes the tree was built on, got " << n);
  checkBoxes(blo, bhi, n, inflate);
  const Vec3 grow = Vec3::Constant(inflate);
  for (int i = 0; i < n; ++i) {
    lo[slot[i]] = blo[i] - grow;
    hi[slot[i]] = bhi[i] + grow;
  }
  // children come after their parent: a reverse sweep sees both children of a node before the node
  for (int k = static_cast<int>(nodes.size()) - 1; k >= 0; --k) {
    Node& node = nodes[k];
    if (node.count > 0) {
      slotBox(*this, node.first, node.first + node.count, node.lo, node.hi);
    } else {
      node.lo = nodes[k + 1].lo.cwiseMin(nodes[node.first].lo);
      node.hi = nodes[k + 1].hi.cwiseMax(nodes[node.first].hi);
    }
  }
}

void Bvh::queryBox(const Vec3& qlo, const Vec3& qhi, double margin, std::vector<int>& out) const {
  const Vec3 glo = qlo - Vec3::Constant(margin), ghi = qhi + Vec3::Constant(margin);
  collect(*this, [&](const Vec3& l, const Vec3& h) {
    return (l.array() <= ghi.array()).all() && (glo.array() <= h.array()).all();
  }, out);
}

void Bvh::queryHalfspace(const Vec3& normal, double offset, double margin, std::vector<int>& out) const {
  const double level = offset + margin;
  // the lowest value of normal . x over the box, at the corner deepest along the normal
  collect(*this, [&](const Vec3& l, const Vec3& h) {
    double lowest = 0.0;
    for (int k = 0; k < 3; ++k) lowest += normal[k] * (normal[k] > 0.0 ? l[k] : h[k]);
    return lowest <= level;
  }, out);
}

}  // namespace rigidiff
