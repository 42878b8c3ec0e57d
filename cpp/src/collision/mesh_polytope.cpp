// A triangle mesh against a box or another triangle mesh, triangle by triangle (mesh_polytope.hpp):
// vertex-face, face-vertex and edge-edge features, each a local minimum of the distance between the
// two surfaces, so the contact derivatives of those features apply unchanged.
#include "mesh_polytope.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <tuple>

#include "contact_patches.hpp"  // kPatchAngleDegrees
#include "rigidiff/collision/pair_sort.hpp"
#include "rigidiff/collision/distance/point_triangle.hpp"
#include "rigidiff/collision/triangle_mesh.hpp"

namespace rigidiff {
namespace narrowphase {

namespace {

using Tri = std::array<int, 3>;
using EdgeId = std::pair<int, int>;  // vertex indices, increasing

EdgeId edgeOf(const Tri& F, int k) { return {std::min(F[k], F[(k + 1) % 3]), std::max(F[k], F[(k + 1) % 3])}; }

// the twelve outward triangles of a box with the given half extents
struct BoxSurface {
  std::vector<Vec3> points, normals;
  std::vector<Tri> faces;
  explicit BoxSurface(const Vec3& h) {
    for (int i = 0; i < 8; ++i)
      points.emplace_back((i & 4) ? h.x() : -h.x(), (i & 2) ? h.y() : -h.y(), (i & 1) ? h.z() : -h.z());
    for (int axis = 0; axis < 3; ++axis)
      for (int side = 0; side < 2; ++side) {
        const int bit = 4 >> axis, u = 4 >> ((axis + 1) % 3), v = 4 >> ((axis + 2) % 3);
        const int base = side ? bit : 0;
        std::array<int, 4> q{base, base | u, base | u | v, base | v};
        const Vec3 out = (side ? 1.0 : -1.0) * Vec3::Unit(axis);
        if ((points[q[1]] - points[q[0]]).cross(points[q[2]] - points[q[0]]).dot(out) < 0.0) std::swap(q[1], q[3]);
        faces.push_back({q[0], q[1], q[2]});
        faces.push_back({q[0], q[2], q[3]});
        normals.push_back(out);
        normals.push_back(out);
      }
  }
};

// one side of the pair: its surface (own frame), placement and the world data of its candidate faces
struct Side {
  const std::vector<Vec3>* points = nullptr;
  const std::vector<Tri>* faces = nullptr;
  const std::vector<Vec3>* normals = nullptr;
  SE3 M;
  int geom = -1;
  double depth = 0.0;                            // how far behind a face a contact may lie
  const MeshTriangles* mesh = nullptr;           // the triangle mesh of this side (none for a box)
  std::vector<Vec3> x;                           // world vertices (of the candidate faces)
  std::vector<Vec3> n;                           // world face normals (of the candidate faces)
  std::vector<std::pair<int, int>> vertexFaces;  // (vertex, candidate face), sorted
  std::vector<std::tuple<int, int, int>> edgeFaces;  // (edge's vertices, candidate face), sorted
  std::vector<std::array<bool, 3>> ridges;       // per candidate face and edge: a ridge?
  // per vertex: do its candidate faces bend there? (a flat vertex touches only through its faces)
  std::vector<bool> corner;

  void prepare(const std::vector<int>& listed, PairSortBuffers& buffers) {
    std::vector<int> cand;  // the listed faces, once each, in increasing order
    {
      std::vector<char> seen(faces->size(), 0);
      for (int f : listed) seen[f] = 1;
      for (int f = 0; f < static_cast<int>(seen.size()); ++f)
        if (seen[f]) cand.push_back(f);
    }
    x.assign(points->size(), Vec3::Zero());
    n.assign(faces->size(), Vec3::Zero());
    for (int f : cand) {
      const Tri& F = (*faces)[f];
      n[f] = M.R * (*normals)[f];
      for (int k = 0; k < 3; ++k) {
        x[F[k]] = M.actPoint((*points)[F[k]]);
        vertexFaces.emplace_back(F[k], f);
        const int i = F[k], j = F[(k + 1) % 3];
        edgeFaces.emplace_back(std::min(i, j), std::max(i, j), f);
      }
    }
    stableSortByFirst(vertexFaces, static_cast<int>(points->size()), buffers);  // the faces come in order
    std::sort(edgeFaces.begin(), edgeFaces.end());
    corner.assign(points->size(), false);
    for (std::size_t i = 0, j = 0; i < vertexFaces.size(); i = j) {
      for (j = i; j < vertexFaces.size() && vertexFaces[j].first == vertexFaces[i].first; ++j)
        if (n[vertexFaces[j].second].dot(n[vertexFaces[i].second]) < 1.0 - 1e-12) corner[vertexFaces[i].first] = true;
    }
    ridges.assign(faces->size(), {false, false, false});
    Vec3 n1, n2;
    for (int f : cand)
      for (int k = 0; k < 3; ++k) ridges[f][k] = ridge(edgeOf((*faces)[f], k), n1, n2);
  }

  // the candidate faces at edge (i, j), and at vertex i
  std::vector<int> facesAtEdge(int i, int j) const {
    std::vector<int> out;
    const int a = std::min(i, j), b = std::max(i, j);
    auto it = std::lower_bound(edgeFaces.begin(), edgeFaces.end(), std::make_tuple(a, b, -1));
    for (; it != edgeFaces.end() && std::get<0>(*it) == a && std::get<1>(*it) == b; ++it)
      out.push_back(std::get<2>(*it));
    return out;
  }
  std::vector<int> facesAtVertex(int i) const {
    std::vector<int> out;
    auto it = std::lower_bound(vertexFaces.begin(), vertexFaces.end(), std::make_pair(i, -1));
    for (; it != vertexFaces.end() && it->first == i; ++it) out.push_back(it->second);
    return out;
  }

  // the outward normal (world) at vertex i: the mean of its candidate faces' normals weighted by their angles there
  Vec3 vertexNormal(int i) const {
    Vec3 sum = Vec3::Zero();
    auto it = std::lower_bound(vertexFaces.begin(), vertexFaces.end(), std::make_pair(i, -1));
    for (; it != vertexFaces.end() && it->first == i; ++it) {
      const Tri& F = (*faces)[it->second];
      const int k = F[0] == i ? 0 : (F[1] == i ? 1 : 2);
      const Vec3 e1 = x[F[(k + 1) % 3]] - x[i], e2 = x[F[(k + 2) % 3]] - x[i];
      sum += std::atan2(e1.cross(e2).norm(), e1.dot(e2)) * n[it->second];
    }
    const double len = sum.norm();
    return len > 0.0 ? Vec3(sum / len) : sum;
  }

  // Is vertex v the lowest of its neighbours along direction d, within an angle whose sine is slack?
  bool lowestAlong(int v, const Vec3& d, double slack) const {
    auto it = std::lower_bound(vertexFaces.begin(), vertexFaces.end(), std::make_pair(v, -1));
    for (; it != vertexFaces.end() && it->first == v; ++it)
      for (int u : (*faces)[it->second]) {
        const Vec3 e = x[u] - x[v];
        if (d.dot(e) < -slack * e.norm()) return false;
      }
    return true;
  }

  // the outward normals of the two faces of a ridge edge; false for flat, valley and boundary edges
  bool ridge(const EdgeId& e, Vec3& n1, Vec3& n2) const {
    auto lo = std::lower_bound(edgeFaces.begin(), edgeFaces.end(), std::make_tuple(e.first, e.second, -1));
    auto hi = std::lower_bound(edgeFaces.begin(), edgeFaces.end(), std::make_tuple(e.first, e.second + 1, -1));
    if (hi - lo != 2) return false;
    const int f = std::get<2>(*lo), g = std::get<2>(*(lo + 1));
    n1 = n[f];
    n2 = n[g];
    int far = (*faces)[g][0];
    for (int k : (*faces)[g])
      if (k != e.first && k != e.second) far = k;
    const double len = (x[e.second] - x[e.first]).norm();
    return n1.dot(x[far] - x[e.first]) < -1e-9 * len;  // g falls away behind f
  }
};

// a resting face keeps its corners while tilted by up to the patch angle
const double kRestingSlack = std::sin(kPatchAngleDegrees * M_PI / 180.0);
// a vertex touching an edge or a vertex must be a strict local minimum (up to rounding)
constexpr double kStrictSlack = 1e-9;

// is d (orthogonal to the edge) in the cone spanned by the edge's face normals n1, n2?
bool inNormalCone(const Vec3& d, const Vec3& n1, const Vec3& n2) {
  const Vec3 w = n1.cross(n2);
  const double w2 = w.squaredNorm();
  return (d.cross(n2)).dot(w) >= -1e-9 * w2 && (n1.cross(d)).dot(w) >= -1e-9 * w2;
}

// Vertices of `vs` over faces of `fs` (fs is A when faceIsA), for the face pairs (face of fs, face of vs).
// A vertex behind several faces keeps those within half the face depth of its shallowest touch (it
// entered through those; the deeper ones lie across the solid, as the far side of a block from a peg
// pressed into the floor of its hole).
void innerCornerContacts(const Side& fs, const Side& vs, const std::vector<std::pair<int, int>>& cand,
                         const std::vector<int>& suspects, const std::vector<int>& held, bool faceIsA,
                         std::vector<Contact>& out);

void vertexFaceContacts(const Side& fs, const Side& vs, const std::vector<std::pair<int, int>>& facePairs,
                        bool faceIsA, double margin, std::vector<Contact>& out) {
  // (face of fs, vertex of vs), sorted and unique: facePairs come sorted, so each face's vertices are
  // gathered once (a stamp per vertex) and only sorted within the face
  std::vector<std::pair<int, int>> cand;
  cand.reserve(3 * facePairs.size());
  std::vector<int> listedFor(vs.points->size(), -1);  // the face a vertex was last listed for
  for (std::size_t p = 0; p < facePairs.size();) {
    const int f = facePairs[p].first;
    const std::size_t from = cand.size();
    for (; p < facePairs.size() && facePairs[p].first == f; ++p)
      for (int v : (*vs.faces)[facePairs[p].second])
        if (listedFor[v] != f) {
          listedFor[v] = f;
          cand.emplace_back(f, v);
        }
    std::sort(cand.begin() + static_cast<std::ptrdiff_t>(from), cand.end());
  }
  struct Hit {
    int f, v;
    double h;
  };
  std::vector<Hit> hits;
  std::vector<int> suspects;  // corners behind a face's plane, shallow, that this face does not hold
  std::vector<int> crossing;  // the faces a way out may cross
  for (const auto& [f, v] : cand) {
    const Tri& F = (*fs.faces)[f];
    const Vec3& nf = fs.n[f];
    const Vec3 a = fs.x[F[0]], e1 = fs.x[F[1]] - a, e2 = fs.x[F[2]] - a, d = vs.x[v] - a;
    const double h = nf.dot(d);
    if (h >= margin || h <= -fs.depth) continue;
    const double d11 = e1.dot(e1), d12 = e1.dot(e2), d22 = e2.dot(e2), den = d11 * d22 - d12 * d12;
    const double u = (d22 * e1.dot(d) - d12 * e2.dot(d)) / den, w = (d11 * e2.dot(d) - d12 * e1.dot(d)) / den;
    const double tol = -1e-9;  // a projection onto a shared edge counts for both faces (duplicates go later)
    if (u < tol || w < tol || 1.0 - u - w < tol || !vs.lowestAlong(v, nf, kRestingSlack)) {
      if (h < 0.0 && h > -0.5 * fs.depth && vs.corner[v]) suspects.push_back(v);
      continue;
    }
    // behind the face, the vertex is in the solid only if its way out to the face crosses no other face
    // (else it lies across a part thinner than the prisms: above a shelf, behind its underside)
    if (fs.mesh && fs.mesh->acrossAnotherFace(f, fs.M.R.transpose() * (vs.x[v] - fs.M.p), crossing)) continue;
    hits.push_back({f, v, h});
  }
  std::vector<std::pair<int, double>> shallowest;  // (vertex, its least depth), sorted
  for (const Hit& hit : hits) shallowest.emplace_back(hit.v, std::max(0.0, -hit.h));
  std::sort(shallowest.begin(), shallowest.end());  // a vertex's least depth comes first
  std::vector<int> held;  // vertices some face holds
  for (const auto& entry : shallowest)
    if (held.empty() || held.back() != entry.first) held.push_back(entry.first);
  innerCornerContacts(fs, vs, cand, suspects, held, faceIsA, out);

  for (const Hit& hit : hits) {
    const auto least = std::lower_bound(shallowest.begin(), shallowest.end(), std::make_pair(hit.v, -1.0));
    if (-hit.h > least->second + 0.5 * fs.depth) continue;
    Feature face, point;
    face.kind = FeatureKind::Face;
    face.p = (*fs.points)[(*fs.faces)[hit.f][0]];
    face.d = (*fs.normals)[hit.f];
    point.p = (*vs.points)[hit.v];
    if (faceIsA)
      addContact(out, fs.geom, vs.geom, face, fs.M, point, vs.M, -fs.n[hit.f]);
    else
      addContact(out, vs.geom, fs.geom, point, vs.M, face, fs.M, fs.n[hit.f]);
  }
}

// Corners of `vs` inside the solid of `fs` that no face of fs holds (`held`: the vertices vertex-face
// contacts found, sorted): behind a valley edge, or a concave or saddle vertex, the projection onto every
// face misses them (a peg's corner pressed into the floor and a wall of a hole, where the two meet; a
// convex corner pressed onto the apex of the inner arc of a ring of the same tessellation: two rings
// hanging from each other rest so). Such a corner, less than half the face depth from its nearest point of
// fs, which lies on an edge that is not a ridge or on a vertex, touches the planes of the faces at that
// edge or vertex that it is behind and along whose normal it is the lowest of its neighbours: point-face
// contacts, each a face's plane extended past the valley (the solid there is the union of the faces'
// half-spaces). A saddle tilts those planes against the corner's neighbours; if none qualifies, the corner
// touches the plane through the nearest vertex (an edge's nearer end) with the surface's normal there.
// The nearest feature of fs to p among the faces `faces` (at most `reach` away): the inside of face `face`
// (i, j its two corners nearest p), an edge (i, j), or a vertex i (j < 0); i < 0 if nothing is that near.
struct NearestFeature {
  int i = -1, j = -1, face = -1;
  bool inside = false;
  Vec3 point = Vec3::Zero();  // the nearest point
  Vec3 normal = Vec3::Zero();  // the surface's outward normal there (a face's, an edge's faces' mean, a vertex's)
};

NearestFeature nearestFeature(const Side& fs, const Vec3& p, const std::pair<int, int>* faces, std::size_t n,
                              double reach) {
  NearestFeature best;
  double best2 = reach * reach;
  for (std::size_t q = 0; q < n; ++q) {
    const int f = faces[q].second;
    const Tri& F = (*fs.faces)[f];
    const Vec3 &t0 = fs.x[F[0]], &t1 = fs.x[F[1]], &t2 = fs.x[F[2]];
    const double plane = fs.n[f].dot(p - t0);
    if (!(plane * plane < best2)) continue;  // the face is no nearer than its plane
    const auto type = pointTriangleDistanceType(p, t0, t1, t2);
    const double d2 = pointTriangleDistance(p, t0, t1, t2, type);
    if (!(d2 < best2)) continue;
    best2 = d2;
    const int t = static_cast<int>(type);
    best.face = f;
    best.inside = type == PointTriangleDistanceType::P_T;
    if (best.inside) {
      std::array<int, 3> c = F;
      std::sort(c.begin(), c.end(),
                [&](int a, int b) { return (p - fs.x[a]).squaredNorm() < (p - fs.x[b]).squaredNorm(); });
      best.i = c[0];
      best.j = c[1];
    } else {
      best.i = t < 3 ? F[t] : F[(t - 3) % 3];
      best.j = t < 3 ? -1 : F[(t - 2) % 3];
    }
  }
  if (best.i < 0) return best;
  if (best.inside) {
    best.normal = fs.n[best.face];
    best.point = p - best.normal.dot(p - fs.x[(*fs.faces)[best.face][0]]) * best.normal;
  } else if (best.j >= 0) {
    const Vec3 e = fs.x[best.j] - fs.x[best.i];
    best.point = fs.x[best.i] + (e.dot(p - fs.x[best.i]) / e.squaredNorm()) * e;
    for (const int f : fs.facesAtEdge(best.i, best.j)) best.normal += fs.n[f];
  } else {
    best.point = fs.x[best.i];
    best.normal = fs.vertexNormal(best.i);
  }
  return best;
}

void innerCornerContacts(const Side& fs, const Side& vs, const std::vector<std::pair<int, int>>& cand,
                         const std::vector<int>& suspects, const std::vector<int>& held, bool faceIsA,
                         std::vector<Contact>& out) {
  if (suspects.empty()) return;
  std::vector<char> look(vs.points->size(), 0);  // the suspects no face holds
  for (const int v : suspects) look[v] = !std::binary_search(held.begin(), held.end(), v);
  std::vector<std::pair<int, int>> byVertex;  // (such a vertex of vs, its candidate face of fs)
  for (const auto& [f, v] : cand)
    if (look[v]) byVertex.emplace_back(v, f);
  std::sort(byVertex.begin(), byVertex.end());
  const double near = 0.5 * fs.depth;
  std::size_t end = 0;
  for (std::size_t k = 0; k < byVertex.size(); k = end) {
    const int v = byVertex[k].first;
    end = k;
    while (end < byVertex.size() && byVertex[end].first == v) ++end;
    const Vec3& p = vs.x[v];
    const NearestFeature nf = nearestFeature(fs, p, byVertex.data() + k, end - k, near);
    if (nf.i < 0) continue;
    Vec3 n1, n2;
    if (!nf.inside && nf.j >= 0 && fs.ridge({std::min(nf.i, nf.j), std::max(nf.i, nf.j)}, n1, n2)) continue;
    // inside fs: behind the surface's normal at the nearest point, which holds for a closed surface
    if (!(nf.normal.dot(p - nf.point) < 0.0)) continue;
    // a plane through the point o of fs with outward normal n (world; body frame: ob, nb)
    auto touch = [&](const Vec3& o, const Vec3& n, const Vec3& ob, const Vec3& nb) {
      const double h = n.dot(p - o);
      if (!(h < 0.0 && h > -near) || !vs.lowestAlong(v, n, kRestingSlack)) return false;
      Feature face, point;
      face.kind = FeatureKind::Face;
      face.p = ob;
      face.d = nb;
      point.p = (*vs.points)[v];
      if (faceIsA)
        addContact(out, fs.geom, vs.geom, face, fs.M, point, vs.M, -n);
      else
        addContact(out, vs.geom, fs.geom, point, vs.M, face, fs.M, n);
      return true;
    };
    const std::vector<int> planes = nf.inside ? std::vector<int>{nf.face}
                                    : nf.j >= 0 ? fs.facesAtEdge(nf.i, nf.j)
                                                : fs.facesAtVertex(nf.i);
    bool touched = false;
    for (const int f : planes) {
      const int corner = (*fs.faces)[f][0];
      touched = touch(fs.x[corner], fs.n[f], (*fs.points)[corner], (*fs.normals)[f]) || touched;
    }
    if (touched) continue;
    const int at = nf.j >= 0 && (p - fs.x[nf.j]).squaredNorm() < (p - fs.x[nf.i]).squaredNorm() ? nf.j : nf.i;
    const Vec3 N = fs.vertexNormal(at);
    if (N.squaredNorm() > 0.0) touch(fs.x[at], N, (*fs.points)[at], fs.M.R.transpose() * N);
  }
}

// ridge edges of A crossing ridge edges of B
void edgeEdgeContacts(const Side& A, const Side& B, const std::vector<std::pair<int, int>>& facePairs, double margin,
                      std::vector<Contact>& out) {
  std::vector<std::pair<EdgeId, EdgeId>> cand;
  for (const auto& [f, g] : facePairs)
    for (int k = 0; k < 3; ++k)
      for (int l = 0; l < 3; ++l)
        if (A.ridges[f][k] && B.ridges[g][l]) cand.emplace_back(edgeOf((*A.faces)[f], k), edgeOf((*B.faces)[g], l));
  std::sort(cand.begin(), cand.end());
  cand.erase(std::unique(cand.begin(), cand.end()), cand.end());
  const double deepest = std::min(A.depth, B.depth);
  for (const auto& [ea, eb] : cand) {
    Vec3 a1, a2, b1, b2;
    if (!A.ridge(ea, a1, a2) || !B.ridge(eb, b1, b2)) continue;
    const Vec3 pa = A.x[ea.first], ua = A.x[ea.second] - pa, pb = B.x[eb.first], ub = B.x[eb.second] - pb;
    const Vec3 w0 = pa - pb;
    const double aa = ua.dot(ua), ab = ua.dot(ub), bb = ub.dot(ub), d = ua.dot(w0), e = ub.dot(w0);
    const double den = aa * bb - ab * ab;
    if (den <= 1e-12 * aa * bb) continue;  // parallel: the faces beside them carry the touch
    const double s = (ab * e - bb * d) / den, t = (aa * e - ab * d) / den;
    if (s <= 1e-9 || s >= 1.0 - 1e-9 || t <= 1e-9 || t >= 1.0 - 1e-9) continue;
    const Vec3 axis = ua.cross(ub).normalized();
    Vec3 normal;  // from B to A: A's outward normals face -normal, B's face +normal
    if (inNormalCone(-axis, a1, a2) && inNormalCone(axis, b1, b2))
      normal = axis;
    else if (inNormalCone(axis, a1, a2) && inNormalCone(-axis, b1, b2))
      normal = -axis;
    else
      continue;
    const double dist = normal.dot(pa + s * ua - pb - t * ub);
    if (dist >= margin || dist <= -deepest) continue;
    Feature fa, fb;
    fa.kind = fb.kind = FeatureKind::Segment;
    fa.p = (*A.points)[ea.first];
    fa.d = ((*A.points)[ea.second] - fa.p).normalized();
    fb.p = (*B.points)[eb.first];
    fb.d = ((*B.points)[eb.second] - fb.p).normalized();
    addContact(out, A.geom, B.geom, fa, A.M, fb, B.M, normal);
  }
}

// Vertices of `vs` in front of the ridge edges of `es` (es is A when edgeIsA), where the direction from
// the edge to the vertex is in the edge's normal cone and the vertex is the lowest of its neighbours
// along it: the touches of a vertex on an edge, apart (inside, the faces and edges carry the contact).
void vertexEdgeContacts(const Side& es, const Side& vs, const std::vector<std::pair<int, int>>& facePairs,
                        bool edgeIsA, double margin, std::vector<Contact>& out) {
  std::vector<std::pair<EdgeId, int>> cand;
  for (const auto& [f, g] : facePairs)
    for (int k = 0; k < 3; ++k)
      if (es.ridges[f][k])
        for (int v : (*vs.faces)[g])
          if (vs.corner[v]) cand.emplace_back(edgeOf((*es.faces)[f], k), v);
  std::sort(cand.begin(), cand.end());
  cand.erase(std::unique(cand.begin(), cand.end()), cand.end());
  for (const auto& [e, v] : cand) {
    Vec3 n1, n2;
    const Vec3 p = es.x[e.first], u = es.x[e.second] - p;
    const double t = u.dot(vs.x[v] - p) / u.squaredNorm();
    if (t <= 1e-9 || t >= 1.0 - 1e-9) continue;
    const Vec3 gap = vs.x[v] - p - t * u;
    const double dist = gap.norm();
    if (dist >= margin || dist <= 1e-12 * u.norm() || !es.ridge(e, n1, n2)) continue;
    const Vec3 d = gap / dist;  // from the edge to the vertex
    if (!inNormalCone(d, n1, n2) || !vs.lowestAlong(v, d, kStrictSlack)) continue;
    Feature segment, point;
    segment.kind = FeatureKind::Segment;
    segment.p = (*es.points)[e.first];
    segment.d = ((*es.points)[e.second] - segment.p).normalized();
    point.p = (*vs.points)[v];
    if (edgeIsA)
      addContact(out, es.geom, vs.geom, segment, es.M, point, vs.M, -d);
    else
      addContact(out, vs.geom, es.geom, point, vs.M, segment, es.M, d);
  }
}

// two vertices apart, each the lowest of its neighbours along the line to the other
void vertexVertexContacts(const Side& A, const Side& B, const std::vector<std::pair<int, int>>& facePairs,
                          double margin, std::vector<Contact>& out) {
  std::vector<std::pair<int, int>> cand;
  for (const auto& [f, g] : facePairs)
    for (int va : (*A.faces)[f])
      for (int vb : (*B.faces)[g])
        if (A.corner[va] && B.corner[vb]) cand.emplace_back(va, vb);
  std::sort(cand.begin(), cand.end());
  cand.erase(std::unique(cand.begin(), cand.end()), cand.end());
  for (const auto& [va, vb] : cand) {
    const Vec3 gap = B.x[vb] - A.x[va];
    const double dist = gap.norm();
    if (dist >= margin || dist <= 0.0) continue;
    const Vec3 d = gap / dist;  // from A's vertex to B's
    if (!A.lowestAlong(va, -d, kStrictSlack) || !B.lowestAlong(vb, d, kStrictSlack)) continue;
    Feature pa, pb;
    pa.p = (*A.points)[va];
    pb.p = (*B.points)[vb];
    addContact(out, A.geom, B.geom, pa, A.M, pb, B.M, -d);
  }
}

}  // namespace

void meshPolytopePairs(const CollisionShape& a, const SE3& Ma, const CollisionShape& b, const SE3& Mb,
                       const std::vector<int>& faces, double margin, std::vector<std::pair<int, int>>& pairs) {
  pairs.clear();
  if (b.type == ShapeType::TriangleMesh) {
    PairSortBuffers buffers;
    bvhPairs(a.triangles->tree, b.triangles->tree, Ma.actInv(Mb), margin, pairs, &buffers);
    return;
  }
  // a face and a box triangle pair up when their prisms' boxes (the box's triangles reach its smallest half
  // extent inside) meet within the margin, in the box's frame: a mug on a shelf pairs its floor with the
  // shelf's top, not with its twelve triangles
  const BoxSurface box(b.half_extents);
  const double depth = b.half_extents.minCoeff();
  std::array<Vec3, 12> glo, ghi;
  for (int g = 0; g < 12; ++g) {
    glo[g] = ghi[g] = box.points[box.faces[g][0]];
    for (int k = 0; k < 3; ++k)
      for (const Vec3& x : {box.points[box.faces[g][k]], Vec3(box.points[box.faces[g][k]] - depth * box.normals[g])}) {
        glo[g] = glo[g].cwiseMin(x);
        ghi[g] = ghi[g].cwiseMax(x);
      }
  }
  const MeshTriangles& ma = *a.triangles;
  const SE3 M = Mb.actInv(Ma);  // the mesh's frame -> the box's
  for (int f : faces) {
    const Vec3 back = -ma.thickness * (M.R * ma.normals[f]);
    Vec3 lo = Vec3::Constant(INFINITY), hi = Vec3::Constant(-INFINITY);
    for (int k = 0; k < 3; ++k) {
      const Vec3 x = M.actPoint(ma.points[ma.faces[f][k]]);
      lo = lo.cwiseMin(x).cwiseMin(x + back);
      hi = hi.cwiseMax(x).cwiseMax(x + back);
    }
    lo.array() -= margin;
    hi.array() += margin;
    for (int g = 0; g < 12; ++g)
      if ((lo.array() <= ghi[g].array()).all() && (glo[g].array() <= hi.array()).all()) pairs.emplace_back(f, g);
  }
}

void meshPolytope(const CollisionShape& a, const SE3& Ma, int ga, const CollisionShape& b, const SE3& Mb, int gb,
                  const std::vector<std::pair<int, int>>& pairs, double margin, std::vector<Contact>& out) {
  if (pairs.empty()) return;
  const MeshTriangles& ma = *a.triangles;
  Side A, B;
  A.points = &ma.points;
  A.faces = &ma.faces;
  A.normals = &ma.normals;
  A.M = Ma;
  A.geom = ga;
  A.depth = ma.thickness;
  A.mesh = &ma;
  const BoxSurface box(b.type == ShapeType::Box ? b.half_extents : Vec3::Zero());
  if (b.type == ShapeType::TriangleMesh) {
    const MeshTriangles& mb = *b.triangles;
    B.points = &mb.points;
    B.faces = &mb.faces;
    B.normals = &mb.normals;
    B.depth = mb.thickness;
    B.mesh = &mb;
  } else {
    B.points = &box.points;
    B.faces = &box.faces;
    B.normals = &box.normals;
    B.depth = b.half_extents.minCoeff();
  }
  B.M = Mb;
  B.geom = gb;
  std::vector<int> fa, fb;
  for (const auto& [f, g] : pairs) {
    fa.push_back(f);
    fb.push_back(g);
  }
  PairSortBuffers buffers;
  A.prepare(fa, buffers);
  B.prepare(fb, buffers);
  std::vector<std::pair<int, int>> swapped;  // (face of B, face of A)
  for (const auto& [f, g] : pairs) swapped.emplace_back(g, f);
  sortPairs(swapped, static_cast<int>(B.faces->size()), static_cast<int>(A.faces->size()), &buffers);
  vertexFaceContacts(A, B, pairs, true, margin, out);
  vertexFaceContacts(B, A, swapped, false, margin, out);
  edgeEdgeContacts(A, B, pairs, margin, out);
  vertexEdgeContacts(A, B, pairs, true, margin, out);
  vertexEdgeContacts(B, A, swapped, false, margin, out);
  vertexVertexContacts(A, B, pairs, margin, out);
}

}  // namespace narrowphase
}  // namespace rigidiff
