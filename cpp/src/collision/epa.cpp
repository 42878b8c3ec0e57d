// EPA (expanding polytope algorithm): the penetration depth of two overlapping cores. A convex polytope
// of support points of A - B around the origin grows towards its face nearest the origin until the
// support function confirms that face. Fixed-size storage (no heap); faces know their neighbours, and
// each new support point replaces the faces it sees by a fan over their boundary (the horizon), found by
// a depth-first walk in boundary order (as in Bullet's gjkepa2). An expansion that would break the
// polytope (a pinched horizon, a flat or inverted new face) ends the search at the current best face.
#include <algorithm>
#include <cmath>

#include "minkowski.hpp"

namespace rigidiff {
namespace minkowski {

namespace {

constexpr int kMaxVertices = 128;
constexpr int kMaxFaces = 2 * kMaxVertices;  // a closed triangulated sphere has 2 V - 4 faces
constexpr int kMaxIterations = 2 * kMaxVertices;

struct Face {
  int v[3];         // vertex indices, counter-clockwise seen from outside; edge k runs v[k] -> v[k+1]
  int adj[3];       // the face across edge k
  int adj_edge[3];  // the index of edge k in that face
  Vec3 n;           // unit outward normal
  double d;         // n . v: signed distance of the origin's projection, > 0 for the origin inside
  bool alive;
  int mark;  // the iteration that found it visible
};

// A horizon edge: edge `edge` of the (not visible) face `face`.
struct HorizonEdge {
  int face, edge;
};

struct Polytope {
  SupportPoint vert[kMaxVertices];
  Face face[kMaxFaces];
  int free_slots[kMaxFaces];
  HorizonEdge horizon[3 * kMaxFaces];  // each edge of a visible face at most once
  int visible[kMaxFaces];
  int nv = 0, nf = 0, nfree = 0, nh = 0, nvis = 0;

  int addFace(int a, int b, int c) {
    const int f = nfree > 0 ? free_slots[--nfree] : nf++;
    Face& F = face[f];
    F.v[0] = a;
    F.v[1] = b;
    F.v[2] = c;
    F.n = (vert[b].w - vert[a].w).cross(vert[c].w - vert[a].w).normalized();
    F.d = F.n.dot(vert[a].w);
    F.alive = true;
    F.mark = -1;
    return f;
  }

  void link(int f, int e, int g, int h) {
    face[f].adj[e] = g;
    face[f].adj_edge[e] = h;
    face[g].adj[h] = f;
    face[g].adj_edge[h] = e;
  }

  // Walks the faces seen from w, entering face f by its edge e: visible faces are marked, the edges
  // to faces not seen are recorded in boundary order.
  void silhouette(int f, int e, const Vec3& w, double tol, int mark) {
    Face& F = face[f];
    if (F.mark == mark) return;
    if (F.n.dot(w) - F.d < -tol) {  // not seen from w: e is a horizon edge (faces through w are removed)
      horizon[nh++] = {f, e};
      return;
    }
    F.mark = mark;
    visible[nvis++] = f;
    for (int k = 1; k < 3; ++k) silhouette(F.adj[(e + k) % 3], F.adj_edge[(e + k) % 3], w, tol, mark);
  }

  // The start and end vertices of horizon edge k, as seen from the visible side.
  int horizonStart(int k) const { return face[horizon[k].face].v[(horizon[k].edge + 1) % 3]; }
  int horizonEnd(int k) const { return face[horizon[k].face].v[horizon[k].edge]; }

  // True when the horizon is one simple loop and every new face (horizon edge, w) is well shaped and
  // no nearer the origin than the face being replaced (dmin): the polytope only grows.
  bool horizonValid(const Vec3& w, double dmin, double tol) const {
    if (nh < 3) return false;
    for (int k = 0; k < nh; ++k) {
      if (horizonEnd(k) != horizonStart((k + 1) % nh)) return false;
      for (int m = 0; m < k; ++m)
        if (horizonStart(m) == horizonStart(k)) return false;
      const Vec3 &p = vert[horizonStart(k)].w, &q = vert[horizonEnd(k)].w;
      const Vec3 n = (q - p).cross(w - p);
      const double len = n.norm();
      if (!(len > 1e-9 * (q - p).norm() * (w - p).norm())) return false;
      // with the origin inside, the faces only recede from it (a start that left the origin just outside
      // has negative distances that mean nothing yet)
      if (dmin >= 0.0 && n.dot(p) / len < dmin - tol) return false;
    }
    return true;
  }

  // Replaces the visible faces by the fan from the new vertex w to the horizon.
  void expand(const SupportPoint& w) {
    for (int k = 0; k < nvis; ++k) {
      face[visible[k]].alive = false;
      free_slots[nfree++] = visible[k];
    }
    const int iw = nv;
    vert[nv++] = w;
    int first = -1, prev = -1;
    for (int k = 0; k < nh; ++k) {
      const int f = addFace(horizonStart(k), horizonEnd(k), iw);
      link(f, 0, horizon[k].face, horizon[k].edge);
      if (prev >= 0)
        link(prev, 1, f, 2);
      else
        first = f;
      prev = f;
    }
    link(prev, 1, first, 2);
  }

  int nearestFace() const {
    int best = -1;
    for (int f = 0; f < nf; ++f)
      if (face[f].alive && (best < 0 || face[f].d < face[best].d)) best = f;
    return best;
  }
};

// Golden-section steps of the normal refinement, and its descent steps.
constexpr int kLineSteps = 40, kDescentSteps = 8;

// The unit direction n - t g: the normal moved along the great circle of the descent direction g.
Vec3 along(const Vec3& n, const Vec3& g, double t) { return (n - t * g).normalized(); }

// Lowers the support h(n) = max_{w in A - B} n . w over unit n, from the face normal n (h: the depth of
// the cores along n), when EPA stopped short of its tolerance: in coaxial poses of a cylinder a circle of
// directions is equally deep and 128 vertices resolve it to 1e-3 only. Steepest descent on the sphere
// (the gradient of h is the support point) with a golden-section line search; h only decreases.
void refineNormal(const Pair& pair, Vec3& n, double& h, double tol) {
  for (int step = 0; step < kDescentSteps; ++step) {
    const Vec3 s = pair.support(n).w;
    Vec3 g = s - s.dot(n) * n;  // tangential gradient
    const double gn = g.norm();
    if (!(gn > tol)) return;
    g /= gn;
    // h along the great circle n(t) = normalize(n - t g), t in [0, 1] (up to 45 degrees)
    double lo = 0.0, hi = 1.0;
    const double r = 0.5 * (std::sqrt(5.0) - 1.0);
    double t1 = hi - r * (hi - lo), t2 = lo + r * (hi - lo);
    double h1 = pair.support(along(n, g, t1)).w.dot(along(n, g, t1));
    double h2 = pair.support(along(n, g, t2)).w.dot(along(n, g, t2));
    for (int k = 0; k < kLineSteps; ++k) {
      if (h1 < h2) {
        hi = t2;
        t2 = t1;
        h2 = h1;
        t1 = hi - r * (hi - lo);
        h1 = pair.support(along(n, g, t1)).w.dot(along(n, g, t1));
      } else {
        lo = t1;
        t1 = t2;
        h1 = h2;
        t2 = lo + r * (hi - lo);
        h2 = pair.support(along(n, g, t2)).w.dot(along(n, g, t2));
      }
    }
    const Vec3 m = along(n, g, 0.5 * (lo + hi));
    const double hm = pair.support(m).w.dot(m);
    if (!(hm < h - 1e-3 * tol)) return;
    n = m;
    h = hm;
  }
}

// Barycentric coordinates in face F of the point p of its plane, from signed areas.
void barycentric(const Polytope& P, const Face& F, const Vec3& p, double lam[3]) {
  const Vec3 &a = P.vert[F.v[0]].w, &b = P.vert[F.v[1]].w, &c = P.vert[F.v[2]].w;
  const Vec3 n = (b - a).cross(c - a);
  const double area = n.squaredNorm();
  lam[0] = (b - p).cross(c - p).dot(n) / area;
  lam[1] = (c - p).cross(a - p).dot(n) / area;
  lam[2] = 1.0 - lam[0] - lam[1];
}

// Depth, witness points and normal from the face of A - B nearest the origin. The witness points come
// from the face holding the origin's projection: the nearest face itself, or a face in the same plane
// (a flat face of A - B is split into triangles, and the projection may fall in another one). The depth
// is the support of A - B along the normal: exact for that direction, so translating A by it along the
// normal separates the cores exactly. The witness point on A moves along the normal onto A's support
// plane; the one on B lies depth behind it, on B's support plane.
void fromFace(const Pair& pair, const Polytope& P, int best, bool converged, double tol, CoreDistance& out) {
  const Face& F = P.face[best];
  const Vec3 p = F.d * F.n;
  double lam[3];
  barycentric(P, F, p, lam);
  int holder = best;
  double inside = std::min({lam[0], lam[1], lam[2]});
  for (int f = 0; f < P.nf && inside < 0.0; ++f) {
    const Face& G = P.face[f];
    if (!G.alive || f == best || G.n.dot(F.n) < 1.0 - 1e-12 || std::abs(G.d - F.d) > tol) continue;
    double mu[3];
    barycentric(P, G, p, mu);
    if (std::min({mu[0], mu[1], mu[2]}) > inside) {
      inside = std::min({mu[0], mu[1], mu[2]});
      holder = f;
      std::copy(mu, mu + 3, lam);
    }
  }
  const Face& H = P.face[holder];
  Vec3 dir = F.n;
  double depth = pair.support(dir).w.dot(dir);
  if (!converged) refineNormal(pair, dir, depth, tol);
  const Vec3 pa = lam[0] * P.vert[H.v[0]].a + lam[1] * P.vert[H.v[1]].a + lam[2] * P.vert[H.v[2]].a;
  out.pa = pa + (pair.support(dir).a.dot(dir) - pa.dot(dir)) * dir;
  out.depth = std::max(depth, 0.0);
  out.pb = out.pa - out.depth * dir;
  out.distance = 0.0;
  out.normal = -dir;  // A - B reaches out to dir: moving A by -depth dir separates the cores
}

}  // namespace

bool expandPolytope(const Pair& pair, const SupportPoint tet[4], double tol, CoreDistance& out) {
  // the Polytope is large (tens of kB): thread-local storage keeps it off the stack and off the heap
  thread_local Polytope P;
  P.nv = P.nf = P.nfree = 0;
  for (int i = 0; i < 4; ++i) P.vert[P.nv++] = tet[i];
  // orient: vertex 3 behind face (0, 1, 2)
  const Vec3 e1 = P.vert[1].w - P.vert[0].w, e2 = P.vert[2].w - P.vert[0].w, e3 = P.vert[3].w - P.vert[0].w;
  const double vol = e1.cross(e2).dot(e3);
  const double edge = std::max({e1.norm(), e2.norm(), e3.norm()});
  if (!(std::abs(vol) > 1e-12 * edge * edge * edge)) return false;
  if (vol > 0.0) std::swap(P.vert[0], P.vert[1]);
  const int f0 = P.addFace(0, 1, 2), f1 = P.addFace(0, 3, 1), f2 = P.addFace(1, 3, 2), f3 = P.addFace(2, 3, 0);
  P.link(f0, 0, f1, 2);
  P.link(f0, 1, f2, 2);
  P.link(f0, 2, f3, 2);
  P.link(f1, 0, f3, 1);
  P.link(f1, 1, f2, 0);
  P.link(f2, 1, f3, 0);
  int best = P.nearestFace();
  bool converged = false;
  for (int iter = 0; iter < kMaxIterations; ++iter) {
    const Face& F = P.face[best];
    const SupportPoint w = pair.support(F.n);
    // converged: the support plane in direction n is (within tol) the face itself
    converged = !(F.n.dot(w.w) - F.d > tol);
    if (converged || P.nv == kMaxVertices) break;
    P.nh = P.nvis = 0;
    P.face[best].mark = iter;
    P.visible[P.nvis++] = best;
    for (int k = 0; k < 3; ++k) P.silhouette(F.adj[k], F.adj_edge[k], w.w, tol, iter);
    if (!P.horizonValid(w.w, F.d, tol)) break;
    P.expand(w);
    best = P.nearestFace();
  }
  fromFace(pair, P, best, converged, tol, out);
  return true;
}

}  // namespace minkowski
}  // namespace rigidiff
