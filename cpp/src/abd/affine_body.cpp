// Affine body model (abd/affine_body.hpp): volume integrals, mesh checks, mass matrix, point map.
#include "rigidiff/abd/affine_body.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "rigidiff/macros.hpp"

namespace rigidiff {

VolumeIntegrals meshVolumeIntegrals(const Vec3* points, int n, const std::array<int, 3>* faces, int m) {
  VolumeIntegrals out;
  for (int f = 0; f < m; ++f) {
    const Vec3 &a = points[faces[f][0]], &b = points[faces[f][1]], &c = points[faces[f][2]];
    // the tetrahedron (0, a, b, c): signed volume, centroid (a + b + c) / 4 and covariance
    // V / 20 (a a^T + b b^T + c c^T + s s^T) with s = a + b + c
    const double vol = a.dot(b.cross(c)) / 6.0;
    const Vec3 s = a + b + c;
    out.volume += vol;
    out.first += vol / 4.0 * s;
    out.second += vol / 20.0 * (a * a.transpose() + b * b.transpose() + c * c.transpose() + s * s.transpose());
  }
  (void)n;
  return out;
}

void checkClosedMesh(int n, const std::array<int, 3>* faces, int m) {
  RD_CHECK_ARG(m >= 4, "a closed mesh needs >= 4 faces, got " << m);
  std::map<std::pair<int, int>, int> directed;  // directed edge -> uses
  for (int f = 0; f < m; ++f) {
    for (int k = 0; k < 3; ++k) {
      const int i = faces[f][k], j = faces[f][(k + 1) % 3];
      RD_CHECK_ARG(i >= 0 && i < n, "face " << f << " has vertex index " << i << " outside [0, " << n << ")");
      RD_CHECK_ARG(i != j, "face " << f << " repeats vertex " << i);
      ++directed[{i, j}];
    }
  }
  for (const auto& [e, uses] : directed) {
    RD_CHECK_ARG(uses == 1, "the mesh is not a consistently oriented surface: edge (" << e.first << ", " << e.second
                                << ") is used " << uses << " times in the same direction");
    RD_CHECK_ARG(directed.count({e.second, e.first}) == 1,
                 "the mesh is not closed: edge (" << e.first << ", " << e.second << ") has a single face");
  }
}

AffineBody makeSurfaceBody(const std::string& name, const double* points, int n, const int* faces, int m) {
  AffineBody body;
  body.name = name;
  body.rest.resize(n);
  for (int i = 0; i < n; ++i) {
    body.rest[i] = Vec3(points[3 * i], points[3 * i + 1], points[3 * i + 2]);
    RD_CHECK_ARG(body.rest[i].allFinite(), "mesh vertex " << i << " has a non-finite coordinate");
  }
  std::map<std::pair<int, int>, int> directed;  // directed edge -> uses, over the faces kept
  for (int f = 0; f < m; ++f) {
    const std::array<int, 3> face{faces[3 * f], faces[3 * f + 1], faces[3 * f + 2]};
    for (const int i : face)
      RD_CHECK_ARG(i >= 0 && i < n, "face " << f << " has vertex index " << i << " outside [0, " << n << ")");
    const Vec3 &a = body.rest[face[0]], &b = body.rest[face[1]], &c = body.rest[face[2]];
    const double longest = std::max({(b - a).squaredNorm(), (c - b).squaredNorm(), (a - c).squaredNorm()});
    // twice the area over the longest edge is the height: a sliver's distances have no stable normal
    if (!((b - a).cross(c - a).squaredNorm() > 1e-18 * longest * longest)) continue;
    body.faces.push_back(face);
    for (int k = 0; k < 3; ++k) ++directed[{face[k], face[(k + 1) % 3]}];
  }
  RD_CHECK_ARG(!body.faces.empty(), "the mesh has no face with an area (" << m << " faces given)");
  body.closed = true;
  for (const auto& [e, uses] : directed) {
    const auto back = directed.find({e.second, e.first});
    if (uses != 1 || back == directed.end() || back->second != 1) body.closed = false;
  }
  // each edge once, in the order of the faces; on a closed surface exactly the affine bodies' list (an edge
  // where its face runs it from the smaller index), so that closed link meshes pair as they always have
  std::map<std::pair<int, int>, bool> listed;
  for (const auto& f : body.faces)
    for (int k = 0; k < 3; ++k) {
      const int i = f[k], j = f[(k + 1) % 3];
      if (i > j && directed.count({j, i})) continue;  // listed where its face runs it upwards
      if (!listed.emplace(std::make_pair(std::min(i, j), std::max(i, j)), true).second) continue;
      body.edges.push_back({std::min(i, j), std::max(i, j)});
    }
  return body;
}

Mat12 affineMassMatrix(const VolumeIntegrals& I, double density) {
  Mat12 M = Mat12::Zero();
  M.topLeftCorner<3, 3>() = density * I.volume * Mat3::Identity();
  for (int k = 0; k < 3; ++k) {
    M.block<1, 3>(k, 3 + 3 * k) = density * I.first.transpose();
    M.block<3, 1>(3 + 3 * k, k) = density * I.first;
    M.block<3, 3>(3 + 3 * k, 3 + 3 * k) = density * I.second;
  }
  return M;
}

AffineBody makeAffineBody(const std::string& name, const double* points, int n, const int* faces, int m,
                          double density, double stiffness) {
  RD_CHECK_ARG(std::isfinite(density) && density > 0.0, "density must be finite and > 0, got " << density);
  RD_CHECK_ARG(std::isfinite(stiffness) && stiffness > 0.0, "stiffness must be finite and > 0, got " << stiffness);
  AffineBody body;
  body.name = name;
  body.density = density;
  body.stiffness = stiffness;
  body.rest.resize(n);
  for (int i = 0; i < n; ++i) {
    body.rest[i] = Vec3(points[3 * i], points[3 * i + 1], points[3 * i + 2]);
    RD_CHECK_ARG(body.rest[i].allFinite(), "mesh vertex " << i << " has a non-finite coordinate");
  }
  body.faces.resize(m);
  for (int f = 0; f < m; ++f) body.faces[f] = {faces[3 * f], faces[3 * f + 1], faces[3 * f + 2]};
  checkClosedMesh(n, body.faces.data(), m);
  for (const auto& f : body.faces) {
    for (int k = 0; k < 3; ++k) {
      const int i = f[k], j = f[(k + 1) % 3];
      if (i < j) body.edges.push_back({i, j});  // the opposite direction belongs to the neighbour face
    }
  }
  body.integrals = meshVolumeIntegrals(body.rest.data(), n, body.faces.data(), m);
  RD_CHECK_ARG(body.integrals.volume > 0.0, "the mesh is inverted or flat: its enclosed volume is "
                                                << body.integrals.volume << " (faces must wind counter-clockwise "
                                                << "seen from outside)");
  body.mass = density * body.integrals.volume;
  body.mass_matrix = affineMassMatrix(body.integrals, density);
  return body;
}

AffineJacobian affineJacobian(const Vec3& xbar) {
  AffineJacobian J = AffineJacobian::Zero();
  for (int k = 0; k < 3; ++k) {
    J(k, k) = 1.0;
    J.block<1, 3>(k, 3 + 3 * k) = xbar.transpose();
  }
  return J;
}

Vec12 affineGravityForce(const AffineBody& body, const Vec3& g) {
  Vec12 f;
  f.head<3>() = body.mass * g;
  for (int k = 0; k < 3; ++k) f.segment<3>(3 + 3 * k) = g[k] * body.density * body.integrals.first;
  return f;
}

}  // namespace rigidiff
