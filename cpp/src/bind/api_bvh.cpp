// Binding of the box tree over triangle meshes and boxes (declared in rigidiff/bind/api_bvh.hpp).
#include "rigidiff/bind/api_bvh.hpp"

#include <algorithm>
#include <cmath>

#include "rigidiff/bind/checks.hpp"

namespace rigidiff {
namespace bind {

namespace {

void checkMargin(double x, const char* name) {
  RD_CHECK_ARG(std::isfinite(x) && x >= 0.0, name << " must be finite and >= 0, got " << x);
}

void flatten(const std::vector<std::pair<int, int>>& pairs, std::vector<int>& out) {
  out.clear();
  for (const auto& [i, j] : pairs) {
    out.push_back(i);
    out.push_back(j);
  }
}

}  // namespace

MeshTree::MeshTree(const double* points, int n, const int* faces, int m, double inflate) {
  RD_CHECK_ARG(n >= 0 && m >= 0, "a mesh needs >= 0 points and faces, got " << n << " and " << m);
  checkMargin(inflate, "inflate");
  for (int k = 0; k < m; ++k) faces_.push_back({faces[3 * k], faces[3 * k + 1], faces[3 * k + 2]});
  faceBoxes(points, n);
  tree_.build(lo_.data(), hi_.data(), m, inflate);
}

void MeshTree::faceBoxes(const double* points, int n) {
  points_.clear();
  for (int k = 0; k < n; ++k) points_.emplace_back(points[3 * k], points[3 * k + 1], points[3 * k + 2]);
  lo_.resize(faces_.size());
  hi_.resize(faces_.size());
  triangleBoxes(points_.data(), n, faces_.data(), static_cast<int>(faces_.size()), lo_.data(), hi_.data());
}

void MeshTree::refit(const double* points, int n, double inflate) {
  RD_CHECK_ARG(n == static_cast<int>(points_.size()),
               "a refit needs the mesh's " << points_.size() << " points, got " << n);
  checkMargin(inflate, "inflate");
  faceBoxes(points, n);
  tree_.refit(lo_.data(), hi_.data(), static_cast<int>(faces_.size()), inflate);
}

void MeshTree::pairs(const MeshTree& other, const double* pose, const double* other_pose, double margin,
                     std::vector<int>& out) const {
  checkMargin(margin, "margin");
  const SE3 Ma = readPlacement(pose), Mb = readPlacement(other_pose);
  bvhPairs(tree_, other.tree_, Ma.actInv(Mb), margin, pairs_);
  flatten(pairs_, out);
}

void MeshTree::selfPairs(double margin, std::vector<int>& out) const {
  checkMargin(margin, "margin");
  tree_.selfPairs(margin, pairs_);
  dropAdjacentTriangles(faces_.data(), pairs_);
  flatten(pairs_, out);
}

void MeshTree::boxQuery(const double* lo, const double* hi, double margin, std::vector<int>& out) const {
  checkMargin(margin, "margin");
  checkFinite(lo, 3, "lo");
  checkFinite(hi, 3, "hi");
  tree_.queryBox(Vec3(lo[0], lo[1], lo[2]), Vec3(hi[0], hi[1], hi[2]), margin, out);
}

void MeshTree::halfspaceQuery(const double* normal, double offset, double margin, std::vector<int>& out) const {
  checkMargin(margin, "margin");
  checkFinite(normal, 3, "normal");
  RD_CHECK_ARG(std::isfinite(offset), "offset must be finite, got " << offset);
  tree_.queryHalfspace(Vec3(normal[0], normal[1], normal[2]), offset, margin, out);
}

void MeshTree::shape(int* out) const {
  int leaf = 0;
  for (const Bvh::Node& node : tree_.nodes) leaf = std::max(leaf, node.count);
  out[0] = static_cast<int>(tree_.nodes.size());
  out[1] = tree_.depth;
  out[2] = leaf;
}

void boxSelfPairs(const double* lo, const double* hi, int n, std::vector<int>& out) {
  RD_CHECK_ARG(n >= 0, "boxSelfPairs needs n >= 0 boxes, got " << n);
  std::vector<Vec3> l(n), h(n);
  for (int k = 0; k < n; ++k) {
    l[k] = Vec3(lo[3 * k], lo[3 * k + 1], lo[3 * k + 2]);
    h[k] = Vec3(hi[3 * k], hi[3 * k + 1], hi[3 * k + 2]);
  }
  Bvh tree;
  tree.build(l.data(), h.data(), n);
  std::vector<std::pair<int, int>> pairs;
  tree.selfPairs(0.0, pairs);
  flatten(pairs, out);
}

}  // namespace bind
}  // namespace rigidiff
