#include "rigidiff/collision/triangle_mesh.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "rigidiff/macros.hpp"

namespace rigidiff {

namespace {

// box of face f's prism
void faceBox(const MeshTriangles& mesh, int f, Vec3& lo, Vec3& hi) {
  const Vec3 back = -mesh.thickness * mesh.normals[f];
  lo = hi = mesh.points[mesh.faces[f][0]];
  for (int k = 0; k < 3; ++k) {
    const Vec3& p = mesh.points[mesh.faces[f][k]];
    lo = lo.cwiseMin(p).cwiseMin(p + back);
    hi = hi.cwiseMax(p).cwiseMax(p + back);
  }
}

}  // namespace

bool MeshTriangles::ghostContact(int f, const Vec3& p, const Vec3& n) const {
  const Vec3& nf = normals[f];
  if (n.dot(nf) > 1.0 - 1e-9) return false;  // along the face normal: a face contact
  // barycentric coordinates of p projected on the face; edge k is opposite vertex k + 2
  const Vec3& a = points[faces[f][0]];
  const Vec3 e1 = points[faces[f][1]] - a, e2 = points[faces[f][2]] - a, d = p - a;
  const double d11 = e1.dot(e1), d12 = e1.dot(e2), d22 = e2.dot(e2), den = d11 * d22 - d12 * d12;
  const double u = (d22 * e1.dot(d) - d12 * e2.dot(d)) / den, w = (d11 * e2.dot(d) - d12 * e1.dot(d)) / den;
  const double bary[3] = {1.0 - u - w, u, w};  // of vertices 0, 1, 2
  const double tol = 1e-3;
  bool on_edge = false;
  for (int k = 0; k < 3; ++k) {
    if (bary[(k + 2) % 3] > tol) continue;  // not on edge k (vertices k, k + 1)
    on_edge = true;
    if (ridge[f][k]) return false;
  }
  return on_edge;
}

bool MeshTriangles::acrossAnotherFace(int f, const Vec3& p, std::vector<int>& scratch) const {
  if (!(normals[f].dot(p - points[faces[f][0]]) < 0.0)) return false;  // in front of the face
  const Vec3 to = nearestPoint(f, p);
  const Vec3 dir = to - p;
  const double len = dir.norm();
  if (!(len > 0.0)) return false;
  query(p.cwiseMin(to), p.cwiseMax(to), scratch);  // a face the segment meets has its box there
  // the ends themselves do not count: `to` lies on f (and on its neighbours at a shared edge), and `p` may
  // lie on the surface
  const double endSlack = 1e-9;
  for (const int g : scratch) {
    if (g == f) continue;
    const Vec3& a = points[faces[g][0]];
    const Vec3 e1 = points[faces[g][1]] - a, e2 = points[faces[g][2]] - a;
    const Vec3 pvec = dir.cross(e2);
    const double det = e1.dot(pvec);
    if (!(std::abs(det) > 1e-12 * len * e1.norm() * e2.norm())) continue;  // parallel to the face
    const Vec3 s = p - a, qvec = s.cross(e1);
    const double u = s.dot(pvec) / det, v = dir.dot(qvec) / det, t = e2.dot(qvec) / det;
    if (u >= 0.0 && v >= 0.0 && u + v <= 1.0 && t > endSlack && t < 1.0 - endSlack) return true;
  }
  return false;
}

Vec3 MeshTriangles::nearestPoint(int f, const Vec3& p) const {
  // the Voronoi regions of the corners, then of the edges, then the interior
  const Vec3 &a = points[faces[f][0]], &b = points[faces[f][1]], &c = points[faces[f][2]];
  const Vec3 ab = b - a, ac = c - a, ap = p - a;
  const double d1 = ab.dot(ap), d2 = ac.dot(ap);
  if (d1 <= 0.0 && d2 <= 0.0) return a;
  const Vec3 bp = p - b;
  const double d3 = ab.dot(bp), d4 = ac.dot(bp);
  if (d3 >= 0.0 && d4 <= d3) return b;
  const double vc = d1 * d4 - d3 * d2;
  if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) return a + (d1 / (d1 - d3)) * ab;
  const Vec3 cp = p - c;
  const double d5 = ab.dot(cp), d6 = ac.dot(cp);
  if (d6 >= 0.0 && d5 <= d6) return c;
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) return a + (d2 / (d2 - d6)) * ac;
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0) return b + ((d4 - d3) / ((d4 - d3) + (d5 - d6))) * (c - b);
  const double den = 1.0 / (va + vb + vc);
  return a + (vb * den) * ab + (vc * den) * ac;
}

CollisionShape MeshTriangles::prism(int f) const {
  CollisionShape s;
  s.type = ShapeType::ConvexMesh;
  s.vertices.reserve(6);
  for (int k = 0; k < 3; ++k) s.vertices.push_back(points[faces[f][k]]);
  for (int k = 0; k < 3; ++k) s.vertices.push_back(points[faces[f][k]] - thickness * normals[f]);
  return s;
}

CollisionShape makeTriangleMesh(const double* points, int n, const int* faces, int m, const double* hull, int h,
                                double thickness) {
  RD_CHECK_ARG(n >= 3 && m >= 1, "a triangle mesh needs at least 3 vertices and 1 face, got " << n << " and " << m);
  RD_CHECK_ARG(h >= 4, "the convex hull of a triangle mesh needs at least 4 vertices, got " << h);
  RD_CHECK_ARG(std::isfinite(thickness) && thickness > 0.0, "mesh prism thickness must be > 0, got " << thickness);
  auto mesh = std::make_shared<MeshTriangles>();
  mesh->thickness = thickness;
  mesh->points.reserve(n);
  for (int k = 0; k < n; ++k) {
    const Vec3 p(points[3 * k], points[3 * k + 1], points[3 * k + 2]);
    RD_CHECK_ARG(p.allFinite(), "mesh vertex " << k << " is not finite");
    mesh->points.push_back(p);
  }
  double size = 0.0;
  for (const Vec3& p : mesh->points) size = std::max(size, (p - mesh->points[0]).norm());
  for (int f = 0; f < m; ++f) {
    const std::array<int, 3> face{faces[3 * f], faces[3 * f + 1], faces[3 * f + 2]};
    for (int k : face) RD_CHECK_ARG(k >= 0 && k < n, "mesh face " << f << " has vertex index " << k << " out of range");
    const Vec3 c = (mesh->points[face[1]] - mesh->points[face[0]]).cross(mesh->points[face[2]] - mesh->points[face[0]]);
    if (!(c.norm() > 1e-12 * size * size)) continue;  // degenerate: no area, no normal
    mesh->faces.push_back(face);
    mesh->normals.push_back(c.normalized());
  }
  RD_CHECK_ARG(!mesh->faces.empty(), "every face of the triangle mesh is degenerate (zero area)");
  const int nf = static_cast<int>(mesh->faces.size());
  // edges: a ridge when the neighbour's far vertex lies behind the face (boundary edges count as ridges)
  std::map<std::pair<int, int>, std::vector<std::pair<int, int>>> edges;  // (face, edge) per vertex pair
  for (int f = 0; f < nf; ++f)
    for (int k = 0; k < 3; ++k) {
      const int i = mesh->faces[f][k], j = mesh->faces[f][(k + 1) % 3];
      edges[{std::min(i, j), std::max(i, j)}].emplace_back(f, k);
    }
  mesh->ridge.assign(nf, {true, true, true});
  for (const auto& [key, users] : edges) {
    if (users.size() != 2) continue;
    for (int s = 0; s < 2; ++s) {
      const auto [f, k] = users[s];
      const auto [g, l] = users[1 - s];
      const Vec3& far = mesh->points[mesh->faces[g][(l + 2) % 3]];
      const double behind = mesh->normals[f].dot(far - mesh->points[mesh->faces[f][k]]);
      mesh->ridge[f][k] = behind < -1e-6 * size;
    }
  }
  std::vector<Vec3> lo(nf), hi(nf);
  for (int f = 0; f < nf; ++f) faceBox(*mesh, f, lo[f], hi[f]);
  mesh->tree.build(lo.data(), hi.data(), nf);
  CollisionShape s = makeConvexMesh(hull, h);
  s.type = ShapeType::TriangleMesh;
  s.triangles = mesh;
  return s;
}

}  // namespace rigidiff
