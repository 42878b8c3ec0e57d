// A convex polytope as a link's collision shape (pd_hull.hpp).
#include "rigidiff/deformable/pd_hull.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>

namespace rigidiff {
namespace deformable {
namespace {

// Where the nearest point of a triangle to p lies: inside the face, on an edge (a, b), or at a vertex a.
enum class Region { Face = 0, Edge = 1, Vertex = 2 };

struct Nearest {
  Vec3 point;
  Region region = Region::Face;
  Vec3 edge = Vec3::Zero();  // the unit direction of the edge (Region::Edge)
};

// The nearest point of triangle (a, b, c) to p, by the Voronoi regions of its vertices, edges and face.
Nearest nearestOnTriangle(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c) {
  const Vec3 ab = b - a, ac = c - a, ap = p - a;
  const double d1 = ab.dot(ap), d2 = ac.dot(ap);
  if (d1 <= 0.0 && d2 <= 0.0) return {a, Region::Vertex};
  const Vec3 bp = p - b;
  const double d3 = ab.dot(bp), d4 = ac.dot(bp);
  if (d3 >= 0.0 && d4 <= d3) return {b, Region::Vertex};
  const Vec3 cp = p - c;
  const double d5 = ab.dot(cp), d6 = ac.dot(cp);
  if (d6 >= 0.0 && d5 <= d6) return {c, Region::Vertex};
  const double vc = d1 * d4 - d3 * d2;
  if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) return {a + d1 / (d1 - d3) * ab, Region::Edge, ab.normalized()};
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) return {a + d2 / (d2 - d6) * ac, Region::Edge, ac.normalized()};
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0)
    return {b + (d4 - d3) / ((d4 - d3) + (d5 - d6)) * (c - b), Region::Edge, (c - b).normalized()};
  const double denom = 1.0 / (va + vb + vc);
  return {a + ab * (vb * denom) + ac * (vc * denom), Region::Face};
}

}  // namespace

PdHull makePdHull(const std::vector<Vec3>& vertices, const std::vector<std::array<int, 3>>& triangles) {
  const int nv = static_cast<int>(vertices.size());
  if (nv < 4) throw std::invalid_argument("a hull needs at least 4 vertices, got " + std::to_string(nv));
  PdHull hull;
  hull.vertices = vertices;
  double scale = 0.0;
  for (const Vec3& v : vertices) {
    if (!v.allFinite()) throw std::invalid_argument("a hull's vertex coordinates must be finite");
    hull.radius = std::max(hull.radius, v.norm());
    scale = std::max(scale, v.cwiseAbs().maxCoeff());
  }
  for (const auto& t : triangles) {
    for (int i : t)
      if (i < 0 || i >= nv)
        throw std::invalid_argument("a hull's triangle index " + std::to_string(i) + " is outside [0, " +
                                    std::to_string(nv) + ")");
    const Vec3 n = (vertices[t[1]] - vertices[t[0]]).cross(vertices[t[2]] - vertices[t[0]]);
    const double area2 = n.norm();
    if (!(area2 > 1e-14 * scale * scale)) continue;  // a sliver: its plane is undefined, its neighbours cover it
    hull.triangles.push_back(t);
    hull.normals.push_back(n / area2);
    hull.offsets.push_back(hull.normals.back().dot(vertices[t[0]]));
  }
  if (hull.triangles.size() < 4) throw std::invalid_argument("a hull needs at least 4 triangles of non-zero area");
  // Qhull triangulates the facets it merged over nearly coplanar points, whose vertices then stand up to about
  // 1e-8 of the hull's size off their triangles' planes (measured on robots' CAD meshes): a distance error of
  // that order, not a concave hull
  for (std::size_t f = 0; f < hull.triangles.size(); ++f)
    for (const Vec3& v : vertices)
      if (hull.normals[f].dot(v) - hull.offsets[f] > 1e-6 * scale)
        throw std::invalid_argument("a hull's surface must be convex and wound outward: a vertex lies " +
                                    std::to_string(hull.normals[f].dot(v) - hull.offsets[f]) +
                                    " outside the plane of triangle " + std::to_string(f));
  // the sharp edges: a flat face's diagonals (between coplanar triangles) are not edges of the hull
  std::map<std::pair<int, int>, std::vector<int>> sides;
  for (std::size_t f = 0; f < hull.triangles.size(); ++f)
    for (int e = 0; e < 3; ++e) {
      const int i = hull.triangles[f][e], j = hull.triangles[f][(e + 1) % 3];
      sides[{std::min(i, j), std::max(i, j)}].push_back(static_cast<int>(f));
    }
  for (const auto& [edge, faces] : sides)
    if (faces.size() == 2 && hull.normals[faces[0]].dot(hull.normals[faces[1]]) < 1.0 - 1e-9) {
      hull.edges.push_back({edge.first, edge.second});
      hull.edge_faces.push_back({faces[0], faces[1]});
    }
  return hull;
}

double hullDistance(const PdHull& hull, const Vec3& p, double reach, Vec3* normal, Mat3* curvature) {
  // the hull lies in the ball of its radius: a point far from it is done without looking at the faces
  const double ball = p.norm() - hull.radius;
  if (ball >= reach) return ball;
  int face = 0;
  double plane = -std::numeric_limits<double>::infinity();
  for (std::size_t f = 0; f < hull.normals.size(); ++f) {
    const double s = hull.normals[f].dot(p) - hull.offsets[f];
    if (s > plane) plane = s, face = static_cast<int>(f);
  }
  if (plane <= 0.0) {  // inside: the nearest face's plane, flat
    *normal = hull.normals[face];
    curvature->setZero();
    return plane;
  }
  // outside, each plane's distance is a lower bound of the distance
  if (plane >= reach) return plane;
  // the nearest point lies on a triangle that p is in front of; on a tie keep the lower-dimensional region,
  // whose curvature is the right one (a point over one face is also at that distance from its neighbour's edge)
  double best = -1.0;
  Nearest nearest;
  for (std::size_t f = 0; f < hull.triangles.size(); ++f) {
    if (!(hull.normals[f].dot(p) - hull.offsets[f] > 0.0)) continue;
    const auto& t = hull.triangles[f];
    const Nearest c = nearestOnTriangle(p, hull.vertices[t[0]], hull.vertices[t[1]], hull.vertices[t[2]]);
    const double d = (p - c.point).norm();
    const double tie = 1e-12 * std::max(d, best);
    if (best < 0.0 || d < best - tie || (d <= best + tie && c.region < nearest.region)) {
      best = d;
      nearest = c;
      if (c.region == Region::Face) *normal = hull.normals[f];
    }
  }
  const Mat3 I = Mat3::Identity();
  if (nearest.region == Region::Face) {
    curvature->setZero();
    return best;
  }
  *normal = (p - nearest.point) / best;
  *curvature = (I - *normal * normal->transpose()) / best;
  if (nearest.region == Region::Edge) *curvature -= nearest.edge * nearest.edge.transpose() / best;
  return best;
}

}  // namespace deformable
}  // namespace rigidiff
