// A triangle mesh against a sphere or a capsule, triangle by triangle (mesh_rounded.hpp). The features
// are the ones the contact derivatives know: a face, an edge (segment) or a vertex (point) of the mesh
// against a centre or an end (point) or the axis (segment) of the rounded shape, grown by its radius.
#include "mesh_rounded.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "axes.hpp"
#include "rigidiff/collision/triangle_mesh.hpp"

namespace rigidiff {
namespace narrowphase {

namespace {

// where on a face the point closest to a query lies
enum class On { Interior, Edge, Vertex };

struct Nearest {
  On on = On::Interior;
  int k = 0;              // Edge: from corner k to corner k + 1; Vertex: corner k
  Vec3 x = Vec3::Zero();  // the closest point (mesh frame)
};

Nearest nearestOnFace(const MeshTriangles& m, int f, const Vec3& c) {
  const std::array<int, 3>& F = m.faces[f];
  const Vec3& a = m.points[F[0]];
  const Vec3 e1 = m.points[F[1]] - a, e2 = m.points[F[2]] - a, d = c - a;
  const double d11 = e1.dot(e1), d12 = e1.dot(e2), d22 = e2.dot(e2), den = d11 * d22 - d12 * d12;
  const double u = (d22 * e1.dot(d) - d12 * e2.dot(d)) / den, w = (d11 * e2.dot(d) - d12 * e1.dot(d)) / den;
  const double tol = 1e-12;  // a projection onto a shared edge counts as inside both faces
  Nearest best;
  if (u >= -tol && w >= -tol && 1.0 - u - w >= -tol) {
    best.x = c - m.normals[f].dot(d) * m.normals[f];
    return best;
  }
  double best_d2 = INFINITY;
  for (int k = 0; k < 3; ++k) {
    const Vec3& p0 = m.points[F[k]];
    const Vec3 e = m.points[F[(k + 1) % 3]] - p0;
    const double t = std::clamp((c - p0).dot(e) / e.squaredNorm(), 0.0, 1.0);
    const Vec3 x = p0 + t * e;
    const double d2 = (c - x).squaredNorm();
    if (d2 < best_d2) {
      best_d2 = d2;
      best.x = x;
      best.on = (t <= 0.0 || t >= 1.0) ? On::Vertex : On::Edge;
      best.k = t >= 1.0 ? (k + 1) % 3 : k;
    }
  }
  return best;
}

// a vertex (index, -1) or an edge (its vertex indices, increasing) of the mesh
using Key = std::pair<int, int>;

Key edgeKey(const MeshTriangles& m, int f, int k) {
  const int i = m.faces[f][k], j = m.faces[f][(k + 1) % 3];
  return {std::min(i, j), std::max(i, j)};
}

Key keyOf(const MeshTriangles& m, int f, const Nearest& q) {
  return q.on == On::Vertex ? Key{m.faces[f][q.k], -1} : edgeKey(m, f, q.k);
}

bool faceHolds(const MeshTriangles& m, int f, const Key& key) {
  const std::array<int, 3>& F = m.faces[f];
  auto has = [&](int v) { return F[0] == v || F[1] == v || F[2] == v; };
  return has(key.first) && (key.second < 0 || has(key.second));
}

// The edge or vertex nearest[i] of faces[i] is a contact when it is the nearest feature of every face
// holding it (the distance has a local minimum there; otherwise a face beside it is closer), reported
// once: by the first such face. Every face holding it is a candidate, as its box holds the feature.
bool firstAndSharedByAll(const MeshTriangles& m, const std::vector<int>& faces, const std::vector<Nearest>& nearest,
                         std::size_t i) {
  const Key key = keyOf(m, faces[i], nearest[i]);
  for (std::size_t j = 0; j < faces.size(); ++j) {
    if (j == i || !faceHolds(m, faces[j], key)) continue;
    if (j < i || nearest[j].on == On::Interior || keyOf(m, faces[j], nearest[j]) != key) return false;
  }
  return true;
}

// of the contacts out[first:] of one centre, those whose normals agree within 5 degrees are one touch
// seen from neighbouring faces: keep the deepest, in the place of the first
void keepDeepestPerNormal(std::vector<Contact>& out, std::size_t first) {
  const double agree = std::cos(5.0 * M_PI / 180.0);
  std::size_t kept = first;
  for (std::size_t k = first; k < out.size(); ++k) {
    std::size_t same = kept;
    for (std::size_t i = first; i < kept && same == kept; ++i)
      if (out[i].normal.dot(out[k].normal) > agree) same = i;
    if (same == kept)
      out[kept++] = out[k];
    else if (out[k].distance < out[same].distance)
      out[same] = out[k];
  }
  out.resize(kept);
}

// more than kMostPerCentre contacts of one centre (out[first:]) keep that many that span their normals:
// the deepest (the first within a rounding of it, so that equal depths keep the same one from step to
// step), then each time the one whose normal makes the largest angle with the nearest kept normal
constexpr std::size_t kMostPerCentre = 8;

void keepSpread(std::vector<Contact>& out, std::size_t first, double size) {
  const std::size_t n = out.size() - first;
  if (n <= kMostPerCentre) return;
  std::vector<bool> keep(n, false);
  std::vector<double> closest(n, -2.0);  // per contact: the largest cosine of its normal with a kept one
  auto add = [&](std::size_t i) {
    keep[i] = true;
    for (std::size_t j = 0; j < n; ++j)
      closest[j] = std::max(closest[j], out[first + j].normal.dot(out[first + i].normal));
  };
  double deepest = INFINITY;
  for (std::size_t j = 0; j < n; ++j) deepest = std::min(deepest, out[first + j].distance);
  std::size_t start = 0;
  while (out[first + start].distance > deepest + 1e-9 * size) ++start;
  add(start);
  for (std::size_t count = 1; count < kMostPerCentre; ++count) {
    std::size_t far = n;
    for (std::size_t j = 0; j < n; ++j)
      if (!keep[j] && (far == n || closest[j] < closest[far])) far = j;
    add(far);
  }
  std::size_t kept = first;
  for (std::size_t j = 0; j < n; ++j)
    if (keep[j]) out[kept++] = out[first + j];  // in their order of discovery
  out.resize(kept);
}

// contacts of the point pb of B (its frame: a sphere's centre, a capsule's end) grown by radius r
void pointContacts(const MeshTriangles& m, const SE3& Mm, int gm, const std::vector<int>& faces, const Vec3& pb,
                   double r, const SE3& Mr, int gr, double margin, std::vector<Contact>& out) {
  const Vec3 c = Mm.R.transpose() * (Mr.actPoint(pb) - Mm.p);
  std::vector<Nearest> nearest;
  nearest.reserve(faces.size());
  for (int f : faces) nearest.push_back(nearestOnFace(m, f, c));
  Feature point;
  point.kind = FeatureKind::Point;
  point.p = pb;
  point.margin = r;
  const std::size_t first = out.size();
  std::vector<bool> behind;  // per contact: is the point behind its face?
  std::vector<int> crossing;  // the faces a way out may cross
  for (std::size_t i = 0; i < faces.size(); ++i) {
    const int f = faces[i];
    const Nearest& q = nearest[i];
    Feature fm;
    const double height = m.normals[f].dot(c - q.x);
    if (q.on == On::Interior) {
      // deeper than the prism thickness the point has passed through (as with the other shapes); behind
      // the face, it is in the solid only if its way out to the face crosses no other face
      if (height < -m.thickness || height - r >= margin) continue;
      if (m.acrossAnotherFace(f, c, crossing)) continue;
      fm.kind = FeatureKind::Face;
      fm.p = m.points[m.faces[f][0]];
      fm.d = m.normals[f];
    } else {
      if ((c - q.x).norm() - r >= margin || !firstAndSharedByAll(m, faces, nearest, i)) continue;
      fm.kind = q.on == On::Edge ? FeatureKind::Segment : FeatureKind::Point;
      fm.p = m.points[m.faces[f][q.k]];
      if (q.on == On::Edge) fm.d = (m.points[m.faces[f][(q.k + 1) % 3]] - fm.p).normalized();
    }
    addContact(out, gm, gr, fm, Mm, point, Mr, -(Mm.R * m.normals[f]));
    behind.push_back(q.on == On::Interior && height < 0.0);
  }
  // a point in front of a face it touches is outside the solid: the faces it lies behind are then
  // across a thin wall (a cup's outer side), not the surface it entered through
  if (std::find(behind.begin(), behind.end(), false) != behind.end()) {
    std::size_t kept = first;
    for (std::size_t k = 0; k < behind.size(); ++k)
      if (!behind[k]) out[kept++] = out[first + k];
    out.resize(kept);
  }
  keepDeepestPerNormal(out, first);
  keepSpread(out, first, m.size());  // the mesh's size
}

// Is the edge or vertex `key` the nearest feature to y (mesh frame) of every face holding it? Then
// the distance from y to the surface has a local minimum there.
bool nearestOfAll(const MeshTriangles& m, const std::vector<int>& faces, const Vec3& y, const Key& key) {
  for (int g : faces) {
    if (!faceHolds(m, g, key)) continue;
    const Nearest q = nearestOnFace(m, g, y);
    if (q.on == On::Interior || keyOf(m, g, q) != key) return false;
  }
  return true;
}

// contacts of a capsule's axis, between its ends (an end is a point contact above), with the edges and
// vertices of the mesh it passes over (ridges and corners: elsewhere a face is closer)
void axisContacts(const MeshTriangles& m, const SE3& Mm, int gm, const std::vector<int>& faces,
                  const CollisionShape& capsule, const SE3& Mr, int gr, double margin, std::vector<Contact>& out) {
  const SE3 rel = Mm.actInv(Mr);
  const axes::Axis C{rel.p, rel.R.col(2), capsule.half_length, capsule.radius};
  Feature axis;
  axis.kind = FeatureKind::Segment;
  axis.d = Vec3::UnitZ();
  axis.margin = capsule.radius;
  // the closest point of the axis's interior to x, s its parameter; false at an end or out of reach
  auto axisPoint = [&](const Vec3& x, double s, Vec3& y) {
    y = C.c + s * C.u;
    return std::abs(s) < C.h && (y - x).norm() > 0.0 && (y - x).norm() - C.r < margin;
  };
  std::vector<Key> seen;
  for (int f : faces)
    for (int k = 0; k < 3; ++k) {
      const Key edge = edgeKey(m, f, k), corner{m.faces[f][k], -1};
      const Vec3& p0 = m.points[m.faces[f][k]];
      Vec3 y;
      if (std::find(seen.begin(), seen.end(), corner) == seen.end()) {
        seen.push_back(corner);
        if (axisPoint(p0, C.u.dot(p0 - C.c), y) && nearestOfAll(m, faces, y, corner)) {
          Feature vertex;
          vertex.p = p0;
          addContact(out, gm, gr, vertex, Mm, axis, Mr, -(Mm.R * (y - p0).normalized()));
        }
      }
      if (std::find(seen.begin(), seen.end(), edge) != seen.end()) continue;
      seen.push_back(edge);
      const Vec3 e = m.points[m.faces[f][(k + 1) % 3]] - p0;
      const axes::Axis E{p0 + 0.5 * e, e.normalized(), 0.5 * e.norm(), 0.0};
      if (C.u.cross(E.u).squaredNorm() < 1e-12) continue;  // parallel: its ends or the faces carry it
      double s, t;
      axes::closestParameters(C, E, s, t);
      if (std::abs(t) >= E.h || !axisPoint(E.c + t * E.u, s, y) || !nearestOfAll(m, faces, y, edge)) continue;
      Feature segment;
      segment.kind = FeatureKind::Segment;
      segment.p = p0;
      segment.d = E.u;
      addContact(out, gm, gr, segment, Mm, axis, Mr, -(Mm.R * (y - E.c - t * E.u).normalized()));
    }
}

}  // namespace

void meshRounded(const CollisionShape& mesh, const SE3& Mm, int gm, const std::vector<int>& faces,
                 const CollisionShape& rounded, const SE3& Mr, int gr, double margin, std::vector<Contact>& out) {
  const MeshTriangles& m = *mesh.triangles;
  if (rounded.type != ShapeType::Capsule) {
    pointContacts(m, Mm, gm, faces, Vec3::Zero(), rounded.radius, Mr, gr, margin, out);
    return;
  }
  for (double end : {-rounded.half_length, rounded.half_length})
    pointContacts(m, Mm, gm, faces, Vec3(0.0, 0.0, end), rounded.radius, Mr, gr, margin, out);
  axisContacts(m, Mm, gm, faces, rounded, Mr, gr, margin, out);
}

}  // namespace narrowphase
}  // namespace rigidiff
