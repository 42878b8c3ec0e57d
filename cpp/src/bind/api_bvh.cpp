// Binding of the box tree over triangle meshes (declared in rigidiff/bind/api_bvh.hpp), for tests.
#include "rigidiff/bind/api_bvh.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "rigidiff/bind/checks.hpp"
#include "rigidiff/collision/bvh.hpp"

namespace rigidiff {
namespace bind {

namespace {

// the faces' boxes of a mesh given as flat arrays
struct MeshBoxes {
  std::vector<Vec3> points;
  std::vector<std::array<int, 3>> faces;
  std::vector<Vec3> lo, hi;

  MeshBoxes(const double* p, int n, const int* f, int m) {
    RD_CHECK_ARG(n >= 0 && m >= 0, "a mesh needs >= 0 points and faces, got " << n << " and " << m);
    for (int k = 0; k < n; ++k) points.emplace_back(p[3 * k], p[3 * k + 1], p[3 * k + 2]);
    for (int k = 0; k < m; ++k) faces.push_back({f[3 * k], f[3 * k + 1], f[3 * k + 2]});
    lo.resize(m);
    hi.resize(m);
    triangleBoxes(points.data(), n, faces.data(), m, lo.data(), hi.data());
  }
  int size() const { return static_cast<int>(faces.size()); }
};

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

void bvhMeshPairs(const double* points_a, int na, const int* faces_a, int ma, const double* pose_a,
                  const double* points_b, int nb, const int* faces_b, int mb, const double* pose_b, double margin,
                  std::vector<int>& out) {
  checkMargin(margin, "margin");
  const SE3 Ma = readPlacement(pose_a), Mb = readPlacement(pose_b);
  const MeshBoxes a(points_a, na, faces_a, ma), b(points_b, nb, faces_b, mb);
  Bvh ta, tb;
  ta.build(a.lo.data(), a.hi.data(), a.size());
  tb.build(b.lo.data(), b.hi.data(), b.size());
  std::vector<std::pair<int, int>> pairs;
  bvhPairs(ta, tb, Ma.actInv(Mb), margin, pairs);
  flatten(pairs, out);
}

void bvhSelfPairs(const double* points, int n, const int* faces, int m, double margin, std::vector<int>& out) {
  checkMargin(margin, "margin");
  const MeshBoxes mesh(points, n, faces, m);
  Bvh tree;
  tree.build(mesh.lo.data(), mesh.hi.data(), mesh.size());
  std::vector<std::pair<int, int>> pairs;
  tree.selfPairs(margin, pairs);
  dropAdjacentTriangles(mesh.faces.data(), pairs);
  flatten(pairs, out);
}

void bvhRefitPairs(const double* points0, const double* points1, int n, const int* faces, int m, double inflate,
                   double margin, std::vector<int>& out) {
  checkMargin(inflate, "inflate");
  checkMargin(margin, "margin");
  const MeshBoxes before(points0, n, faces, m), after(points1, n, faces, m);
  Bvh tree;
  tree.build(before.lo.data(), before.hi.data(), before.size(), inflate);
  tree.refit(after.lo.data(), after.hi.data(), after.size(), inflate);
  std::vector<std::pair<int, int>> pairs;
  tree.selfPairs(margin, pairs);
  dropAdjacentTriangles(after.faces.data(), pairs);
  flatten(pairs, out);
}

void bvhBoxQuery(const double* points, int n, const int* faces, int m, const double* lo, const double* hi,
                 double margin, std::vector<int>& out) {
  checkMargin(margin, "margin");
  checkFinite(lo, 3, "lo");
  checkFinite(hi, 3, "hi");
  const MeshBoxes mesh(points, n, faces, m);
  Bvh tree;
  tree.build(mesh.lo.data(), mesh.hi.data(), mesh.size());
  tree.queryBox(Vec3(lo[0], lo[1], lo[2]), Vec3(hi[0], hi[1], hi[2]), margin, out);
}

void bvhHalfspaceQuery(const double* points, int n, const int* faces, int m, const double* normal, double offset,
                       double margin, std::vector<int>& out) {
  checkMargin(margin, "margin");
  checkFinite(normal, 3, "normal");
  RD_CHECK_ARG(std::isfinite(offset), "offset must be finite, got " << offset);
  const MeshBoxes mesh(points, n, faces, m);
  Bvh tree;
  tree.build(mesh.lo.data(), mesh.hi.data(), mesh.size());
  tree.queryHalfspace(Vec3(normal[0], normal[1], normal[2]), offset, margin, out);
}

void bvhTreeShape(const double* points, int n, const int* faces, int m, int* shape) {
  const MeshBoxes mesh(points, n, faces, m);
  Bvh tree;
  tree.build(mesh.lo.data(), mesh.hi.data(), mesh.size());
  int leaf = 0;
  for (const Bvh::Node& node : tree.nodes) leaf = std::max(leaf, node.count);
  shape[0] = static_cast<int>(tree.nodes.size());
  shape[1] = tree.depth;
  shape[2] = leaf;
}

}  // namespace bind
}  // namespace rigidiff
