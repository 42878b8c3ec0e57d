// GJK (Gilbert-Johnson-Keerthi) distance between two convex cores, with the closest-point sub-algorithm
// of Ericson (Real-Time Collision Detection, 5.1.5-5.1.6) on the simplex; EPA (epa.cpp) takes over when
// the cores overlap.
#include "rigidiff/collision/gjk.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "minkowski.hpp"
#include "rigidiff/macros.hpp"

namespace rigidiff {

using minkowski::SupportPoint;

namespace {

// A simplex of A - B (1 to 4 points) with the barycentric weights of its point nearest the origin.
struct Simplex {
  SupportPoint p[4];
  double lam[4] = {1.0, 0.0, 0.0, 0.0};
  int n = 0;
};

// to = from on the entries in use (the others are never read, and may never have been written)
void assignUsed(Simplex& to, const Simplex& from) {
  to.n = from.n;
  for (int i = 0; i < from.n; ++i) {
    to.p[i] = from.p[i];
    to.lam[i] = from.lam[i];
  }
}

// s becomes the vertex a; returns its point. Arguments by value: they may alias the entries of s.
Vec3 setVertex(Simplex& s, const SupportPoint a) {
  s.p[0] = a;
  s.lam[0] = 1.0;
  s.n = 1;
  return a.w;
}

// s becomes the edge ab; returns its point at parameter t
Vec3 setEdge(Simplex& s, const SupportPoint a, const SupportPoint b, double t) {
  s.p[0] = a;
  s.p[1] = b;
  s.lam[0] = 1.0 - t;
  s.lam[1] = t;
  s.n = 2;
  return a.w + t * (b.w - a.w);
}

// Closest point to the origin of segment ab; s becomes the feature holding it.
Vec3 closestOnSegment(const SupportPoint& a, const SupportPoint& b, Simplex& s) {
  const Vec3 ab = b.w - a.w;
  const double den = ab.squaredNorm();
  const double t = den > 0.0 ? -a.w.dot(ab) / den : 0.0;
  if (!(t > 0.0)) return setVertex(s, a);
  if (t >= 1.0) return setVertex(s, b);
  return setEdge(s, a, b, t);
}

// Closest point to the origin of triangle abc by its Voronoi regions (Ericson 5.1.5); s becomes the
// feature (vertex, edge or face) holding it. A flat (collinear) triangle falls back to its edges.
Vec3 closestOnTriangle(const SupportPoint& A, const SupportPoint& B, const SupportPoint& C, Simplex& s) {
  const Vec3 &a = A.w, &b = B.w, &c = C.w;
  const Vec3 ab = b - a, ac = c - a;
  const double d1 = -ab.dot(a), d2 = -ac.dot(a);
  if (d1 <= 0.0 && d2 <= 0.0) return setVertex(s, A);
  const double d3 = -ab.dot(b), d4 = -ac.dot(b);
  if (d3 >= 0.0 && d4 <= d3) return setVertex(s, B);
  const double vc = d1 * d4 - d3 * d2;
  if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) return setEdge(s, A, B, d1 / (d1 - d3));
  const double d5 = -ab.dot(c), d6 = -ac.dot(c);
  if (d6 >= 0.0 && d5 <= d6) return setVertex(s, C);
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) return setEdge(s, A, C, d2 / (d2 - d6));
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0) return setEdge(s, B, C, (d4 - d3) / ((d4 - d3) + (d5 - d6)));
  const double den = va + vb + vc;  // |ab x ac|^2
  if (!(den > 1e-24 * ab.squaredNorm() * ac.squaredNorm())) {
    // collinear: the nearest of the three edges
    Simplex e[3];
    const Vec3 p[3] = {closestOnSegment(A, B, e[0]), closestOnSegment(B, C, e[1]), closestOnSegment(C, A, e[2])};
    int k = 0;
    for (int i = 1; i < 3; ++i)
      if (p[i].squaredNorm() < p[k].squaredNorm()) k = i;
    s = e[k];
    return p[k];
  }
  // the projection on the plane, and its barycentric coordinates from signed areas (better conditioned
  // than va, vb, vc for thin triangles)
  const Vec3 nrm = ab.cross(ac);
  const double area = nrm.squaredNorm();
  const Vec3 p = nrm * (nrm.dot(a) / area);
  const double la = (b - p).cross(c - p).dot(nrm) / area, lb = (c - p).cross(a - p).dot(nrm) / area;
  s.p[0] = A;
  s.p[1] = B;
  s.p[2] = C;
  s.lam[0] = la;
  s.lam[1] = lb;
  s.lam[2] = 1.0 - la - lb;
  s.n = 3;
  return p;
}

// Closest point to the origin of tetrahedron abcd (Ericson 5.1.6): the nearest of the faces whose plane
// separates the origin from the opposite vertex. Returns false (s unchanged) when the origin is inside.
// For a flat tetrahedron every face counts, which covers the flat hull.
bool closestOnTetrahedron(Simplex& s, Vec3& closest) {
  static const int faces[4][4] = {{0, 1, 2, 3}, {0, 2, 3, 1}, {0, 3, 1, 2}, {1, 3, 2, 0}};
  bool outside_any = false;
  double best = INFINITY;
  Simplex best_s;
  for (const auto& f : faces) {
    const Vec3 &a = s.p[f[0]].w, &b = s.p[f[1]].w, &c = s.p[f[2]].w, &d = s.p[f[3]].w;
    const Vec3 n = (b - a).cross(c - a);
    const double side_origin = -n.dot(a), side_d = n.dot(d - a);
    if (side_origin * side_d > 0.0) continue;  // the origin is on the tetrahedron's side of this face
    outside_any = true;
    Simplex t;
    const Vec3 p = closestOnTriangle(s.p[f[0]], s.p[f[1]], s.p[f[2]], t);
    if (p.squaredNorm() < best) {
      best = p.squaredNorm();
      assignUsed(best_s, t);
      closest = p;
    }
  }
  if (!outside_any) return false;
  assignUsed(s, best_s);
  return true;
}

// Bounding radius of a core about its frame origin (sets the scale of the tolerances).
double coreRadius(const CollisionShape& s) {
  switch (s.type) {
    case ShapeType::Capsule: return s.half_length;
    case ShapeType::Box: return s.half_extents.norm();
    case ShapeType::Cylinder: return std::hypot(s.radius, s.half_length);
    case ShapeType::ConvexMesh: {
      double r = 0.0;
      for (const Vec3& v : s.vertices) r = std::max(r, v.squaredNorm());
      return std::sqrt(r);
    }
    default: return 0.0;
  }
}

void witness(const Simplex& s, Vec3& pa, Vec3& pb) {
  pa.setZero();
  pb.setZero();
  for (int i = 0; i < s.n; ++i) {
    pa += s.lam[i] * s.p[i].a;
    pb += s.lam[i] * s.p[i].b;
  }
}

// A simplex handed to EPA must span space well: a vertex nearer than kThin times the cores' size to the
// span of the others is dropped (EPA recovers an origin left just outside), and a new one must stand
// kFlat times the size away from that span.
constexpr double kThin = 1e-3, kFlat = 1e-9;

// Height of the last vertex of s over the span of the others (the length of a segment).
double lastHeight(const Simplex& s) {
  const Vec3 e1 = s.p[1].w - s.p[0].w;
  if (s.n == 2) return e1.norm();
  const Vec3 e2 = s.p[2].w - s.p[0].w;
  if (s.n == 3) return e1.cross(e2).norm() / e1.norm();  // NaN for a point: not well shaped
  const Vec3 n = e1.cross(e2);
  return std::abs(n.dot(s.p[3].w - s.p[0].w)) / n.norm();
}

// True when every vertex stands well away from the span of the others.
bool wellShaped(Simplex s, double size) {
  for (int k = 0; k < s.n && s.n > 1; ++k) {
    if (!(lastHeight(s) > kThin * size)) return false;
    std::rotate(s.p, s.p + 1, s.p + s.n);  // the next vertex last
  }
  return true;
}

// Replaces a thin simplex by its facet nearest the origin (which lies within the thinness of it).
void dropVertex(Simplex& s) {
  Simplex best;
  double best_d = INFINITY;
  for (int skip = 0; skip < s.n; ++skip) {
    Simplex f;
    for (int i = 0; i < s.n; ++i)
      if (i != skip) f.p[f.n++] = s.p[i];
    Vec3 p = f.p[0].w;
    if (f.n == 2) p = closestOnSegment(f.p[0], f.p[1], f);
    if (f.n == 3) p = closestOnTriangle(f.p[0], f.p[1], f.p[2], f);
    if (p.norm() < best_d) {
      best_d = p.norm();
      assignUsed(best, f);
    }
  }
  assignUsed(s, best);
}

// Grows a simplex that holds the origin (within tolerance) into a well-shaped tetrahedron of A - B, each
// new vertex the support point farthest from the span of the others; false when A - B is too flat.
bool initialTetrahedron(const minkowski::Pair& pair, Simplex& s, double size) {
  while (s.n > 1 && !wellShaped(s, size)) dropVertex(s);
  static const Vec3 axes[6] = {Vec3::UnitX(),  -Vec3::UnitX(), Vec3::UnitY(),
                               -Vec3::UnitY(), Vec3::UnitZ(),  -Vec3::UnitZ()};
  SupportPoint best{Vec3::Zero(), Vec3::Zero(), Vec3::Zero()};
  double best_h = 0.0;
  auto consider = [&](const Vec3& d, auto height) {
    const SupportPoint p = pair.support(d);
    const double h = height(p.w);
    if (h > best_h) {
      best_h = h;
      best = p;
    }
  };
  if (s.n == 1) {
    for (const Vec3& d : axes) consider(d, [&](const Vec3& w) { return (w - s.p[0].w).norm(); });
    if (!(best_h > kFlat * size)) return false;
    s.p[s.n++] = best;
  }
  if (s.n == 2) {
    const Vec3 e = (s.p[1].w - s.p[0].w).normalized();
    int i = 0;
    e.cwiseAbs().minCoeff(&i);  // the axis most orthogonal to e
    const Vec3 t1 = e.cross(axes[2 * i]).normalized(), t2 = e.cross(t1);
    best_h = 0.0;
    for (int k = 0; k < 6; ++k)
      consider(std::cos(k * M_PI / 3.0) * t1 + std::sin(k * M_PI / 3.0) * t2,
               [&](const Vec3& w) { return (w - s.p[0].w).cross(e).norm(); });
    if (!(best_h > kFlat * size)) return false;
    s.p[s.n++] = best;
  }
  if (s.n == 3) {
    const Vec3 nrm = (s.p[1].w - s.p[0].w).cross(s.p[2].w - s.p[0].w).normalized();
    best_h = 0.0;
    for (const double sign : {1.0, -1.0})
      consider(sign * nrm, [&](const Vec3& w) { return std::abs(nrm.dot(w - s.p[0].w)); });
    if (!(best_h > kFlat * size)) return false;
    s.p[s.n++] = best;
  }
  return std::isfinite(s.p[3].w.sum());
}

constexpr int kMaxIterations = 128;

}  // namespace

CoreDistance coreDistance(const CollisionShape& a, const SE3& Ma, const CollisionShape& b, const SE3& Mb) {
  const minkowski::Pair pair{a, Ma, b, Mb};
  // distances below tol count as contact; the scale is the size of the cores (or of a point core's
  // partner), never 0 for the pairs that reach GJK
  const double size = std::max(coreRadius(a) + coreRadius(b), 1e-300);
  const double tol = 1e-12 * size;
  CoreDistance out;
  Simplex s;
  Vec3 v = Ma.p - Mb.p;
  if (!(v.squaredNorm() > tol * tol)) v = Vec3::UnitX();
  setVertex(s, pair.support(-v));
  v = s.p[0].w;
  double vv = v.squaredNorm();
  bool inside = false;
  for (int iter = 0; iter < kMaxIterations; ++iter) {
    if (vv <= tol * tol) break;  // the origin is on the simplex: the cores touch or overlap
    const SupportPoint w = pair.support(-v);
    // |v| bounds the distance from above, v.w / |v| from below: stop when they agree
    const double vnorm = std::sqrt(vv);
    if (vv - v.dot(w.w) <= vnorm * (1e-11 * vnorm + tol)) break;
    bool repeated = false;
    for (int i = 0; i < s.n; ++i) repeated = repeated || (s.p[i].w - w.w).squaredNorm() <= tol * tol;
    if (repeated) break;  // no new support point: v is as close as the arithmetic allows
    Simplex next = s;
    next.p[next.n++] = w;
    Vec3 closest;
    if (next.n == 2)
      closest = closestOnSegment(next.p[0], next.p[1], next);
    else if (next.n == 3)
      closest = closestOnTriangle(next.p[0], next.p[1], next.p[2], next);
    else if (!closestOnTetrahedron(next, closest)) {
      s = next;
      inside = true;
      break;
    }
    const double next_vv = closest.squaredNorm();
    if (!(next_vv < vv)) break;  // no progress: rounding has the last word
    s = next;
    v = closest;
    vv = next_vv;
  }
  RD_CHECK_ARG(std::isfinite(vv), "the shapes' sizes or poses overflow double precision");
  if (!inside && vv > tol * tol) {
    witness(s, out.pa, out.pb);
    out.distance = std::sqrt(vv);
    out.normal = v / out.distance;
    return out;
  }
  // the cores touch or overlap
  out.overlap = true;
  witness(s, out.pa, out.pb);
  if (!(a.solidCore() || b.solidCore())) return out;
  // EPA converges to 1e-10 of the size: exact for polyhedra, whose support planes are faces; for curved
  // cores each step divides the error by about four, so the last digits would cost many vertices
  if (!initialTetrahedron(pair, s, size) || !minkowski::expandPolytope(pair, s.p, 100.0 * tol, out))
    RD_THROW(std::runtime_error, "penetration depth: the shapes overlap but their Minkowski difference is too flat "
                                     << "for EPA (a shape thinner than 1e-9 of its size?)");
  return out;
}

}  // namespace rigidiff
