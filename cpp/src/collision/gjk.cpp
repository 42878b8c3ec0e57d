#include "rigidiff/collision/gjk.hpp"

#include <cmath>

namespace rigidiff {

namespace {

// A point of the Minkowski difference A - B with the two support points that made it.
struct SupportPoint {
  Vec3 w, a, b;
};

struct Placed {
  const CollisionShape& shape;
  const SE3& M;
  Vec3 support(const Vec3& d) const { return M.actPoint(shape.coreSupport(M.R.transpose() * d)); }
};

SupportPoint supportOf(const Placed& A, const Placed& B, const Vec3& d) {
  SupportPoint s;
  s.a = A.support(d);
  s.b = B.support(-d);
  s.w = s.a - s.b;
  return s;
}

// Closest point to the origin of the convex hull of up to 4 points: every subset's affine-hull closest
// point whose barycentric coordinates are all positive is a candidate, the nearest candidate wins (it
// lies in the relative interior of the face that holds the closest point). Writes the barycentric
// weights (0 outside the winning subset) and returns the winning subset as a bit mask.
int closestOnSimplex(const SupportPoint* s, int n, double* lambda_out, Vec3& closest) {
  double best = INFINITY;
  int best_mask = 0;
  for (int mask = 1; mask < (1 << n); ++mask) {
    int idx[4], k = 0;
    for (int i = 0; i < n; ++i)
      if (mask & (1 << i)) idx[k++] = i;
    double lam[4];
    if (k == 1) {
      lam[0] = 1.0;
    } else {
      // minimise |w0 + sum_j mu_j (w_j - w0)|: (D^T D) mu = -D^T w0
      Eigen::Matrix<double, 3, 3> D;
      for (int j = 1; j < k; ++j) D.col(j - 1) = s[idx[j]].w - s[idx[0]].w;
      const auto Dk = D.leftCols(k - 1);
      using Small = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, 3, 3>;
      using SmallVec = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 3, 1>;
      const Small G = Dk.transpose() * Dk;
      const SmallVec rhs = -Dk.transpose() * s[idx[0]].w;
      Eigen::LDLT<Small> ldlt(G);
      if (ldlt.info() != Eigen::Success || ldlt.rcond() < 1e-12) continue;  // a degenerate subset
      const SmallVec mu = ldlt.solve(rhs);
      lam[0] = 1.0 - mu.sum();
      for (int j = 1; j < k; ++j) lam[j] = mu[j - 1];
    }
    bool inside = true;
    for (int j = 0; j < k; ++j) inside = inside && lam[j] > 0.0;
    if (!inside) continue;
    Vec3 p = Vec3::Zero();
    for (int j = 0; j < k; ++j) p += lam[j] * s[idx[j]].w;
    const double d = p.squaredNorm();
    if (d < best) {
      best = d;
      best_mask = mask;
      closest = p;
      for (int i = 0; i < 4; ++i) lambda_out[i] = 0.0;
      for (int j = 0; j < k; ++j) lambda_out[idx[j]] = lam[j];
    }
  }
  return best_mask;
}

void witness(const SupportPoint* s, int n, const double* lambda, Vec3& pa, Vec3& pb) {
  pa.setZero();
  pb.setZero();
  for (int i = 0; i < n; ++i) {
    pa += lambda[i] * s[i].a;
    pb += lambda[i] * s[i].b;
  }
}

// The expanding polytope: a closed triangle mesh around the origin inside A - B.
struct Polytope {
  static constexpr int kMaxVertices = 128, kMaxFaces = 256;
  SupportPoint v[kMaxVertices];
  int nv = 0;
  struct Face {
    int i, j, k;
    Vec3 n;
    double d;
    bool alive;
  } f[kMaxFaces];
  int nf = 0;

  bool addFace(int i, int j, int k) {
    if (nf >= kMaxFaces) return false;
    Vec3 n = (v[j].w - v[i].w).cross(v[k].w - v[i].w);
    const double len = n.norm();
    if (!(len > 1e-14)) return false;
    n /= len;
    f[nf++] = {i, j, k, n, n.dot(v[i].w), true};
    return true;
  }
};

// The projection of the origin on a face of the polytope, with its witness points.
void closestOnFace(const Polytope& P, const Polytope::Face& face, CoreDistance& out) {
  const Vec3 p = face.d * face.n;
  const Vec3 &a = P.v[face.i].w, &b = P.v[face.j].w, &c = P.v[face.k].w;
  const Vec3 n = (b - a).cross(c - a);
  const double area = n.squaredNorm();
  const double la = (b - p).cross(c - p).dot(n) / area, lb = (c - p).cross(a - p).dot(n) / area;
  const double lc = 1.0 - la - lb;
  out.pa = la * P.v[face.i].a + lb * P.v[face.j].a + lc * P.v[face.k].a;
  out.pb = la * P.v[face.i].b + lb * P.v[face.j].b + lc * P.v[face.k].b;
  out.depth = std::max(face.d, 0.0);
  out.normal = -face.n;  // moving A against the face normal of A - B separates the cores
}

// EPA from a tetrahedron of support points that contains the origin.
bool epa(const Placed& A, const Placed& B, SupportPoint tet[4], CoreDistance& out) {
  Polytope P;
  for (int i = 0; i < 4; ++i) P.v[P.nv++] = tet[i];
  // orient the faces outwards
  const int faces[4][3] = {{0, 1, 2}, {0, 3, 1}, {0, 2, 3}, {1, 3, 2}};
  const Vec3 centroid = 0.25 * (tet[0].w + tet[1].w + tet[2].w + tet[3].w);
  for (const auto& fc : faces) {
    int i = fc[0], j = fc[1], k = fc[2];
    const Vec3 n = (P.v[j].w - P.v[i].w).cross(P.v[k].w - P.v[i].w);
    if (n.dot(P.v[i].w - centroid) < 0.0) std::swap(j, k);
    if (!P.addFace(i, j, k)) return false;
  }
  for (int iter = 0; iter < 100; ++iter) {
    int best = -1;
    for (int q = 0; q < P.nf; ++q)
      if (P.f[q].alive && (best < 0 || P.f[q].d < P.f[best].d)) best = q;
    if (best < 0) return false;
    const auto face = P.f[best];
    const SupportPoint s = supportOf(A, B, face.n);
    const double gain = face.n.dot(s.w) - face.d;
    bool known = false;
    for (int q = 0; q < P.nv; ++q) known = known || (P.v[q].w - s.w).squaredNorm() < 1e-24 * (1.0 + s.w.squaredNorm());
    // converged; or no room, or a support point the polytope already has (curved shapes repeat them):
    // the closest face is then the best estimate
    const bool done = gain < 1e-10 * (1.0 + std::abs(face.d)) || known || P.nv >= Polytope::kMaxVertices;
    if (done || iter == 99) {
      closestOnFace(P, face, out);
      return true;
    }
    const int nvtx = P.nv;
    P.v[P.nv++] = s;
    // remove the faces the new point sees, keep the horizon edges (those with one removed side)
    int edges[3 * Polytope::kMaxFaces][2];
    int ne = 0;
    for (int q = 0; q < P.nf; ++q) {
      auto& fq = P.f[q];
      if (!fq.alive || fq.n.dot(s.w - P.v[fq.i].w) <= 0.0) continue;
      fq.alive = false;
      const int e[3][2] = {{fq.i, fq.j}, {fq.j, fq.k}, {fq.k, fq.i}};
      for (const auto& ed : e) {
        int found = -1;
        for (int m = 0; m < ne; ++m)
          if (edges[m][0] == ed[1] && edges[m][1] == ed[0]) found = m;
        if (found >= 0) {
          edges[found][0] = edges[ne - 1][0];
          edges[found][1] = edges[ne - 1][1];
          --ne;
        } else {
          edges[ne][0] = ed[0];
          edges[ne][1] = ed[1];
          ++ne;
        }
      }
    }
    // a sliver face (the new point on the line of a horizon edge) adds nothing to the boundary: skip it
    for (int m = 0; m < ne; ++m) P.addFace(edges[m][0], edges[m][1], nvtx);
  }
  return false;
}

// Grows a simplex that contains the origin (on its boundary or inside) into a tetrahedron.
bool completeTetrahedron(const Placed& A, const Placed& B, SupportPoint* s, int& n) {
  static const Vec3 axes[6] = {Vec3::UnitX(),  -Vec3::UnitX(), Vec3::UnitY(),
                               -Vec3::UnitY(), Vec3::UnitZ(),  -Vec3::UnitZ()};
  if (n == 1) {
    for (const Vec3& d : axes) {
      const SupportPoint p = supportOf(A, B, d);
      if ((p.w - s[0].w).squaredNorm() > 1e-20) {
        s[n++] = p;
        break;
      }
    }
  }
  if (n == 2) {
    const Vec3 e = (s[1].w - s[0].w).normalized();
    Vec3 t = e.cross(Vec3::UnitX());
    if (t.squaredNorm() < 0.1) t = e.cross(Vec3::UnitY());
    t.normalize();
    for (int k = 0; k < 6 && n == 2; ++k) {
      const Vec3 d = Eigen::AngleAxisd(k * M_PI / 3.0, e) * t;
      const SupportPoint p = supportOf(A, B, d);
      if ((p.w - s[0].w).cross(e).squaredNorm() > 1e-20) s[n++] = p;
    }
  }
  if (n == 3) {
    const Vec3 nrm = (s[1].w - s[0].w).cross(s[2].w - s[0].w).normalized();
    const SupportPoint p1 = supportOf(A, B, nrm), p2 = supportOf(A, B, -nrm);
    const double d1 = std::abs(nrm.dot(p1.w - s[0].w)), d2 = std::abs(nrm.dot(p2.w - s[0].w));
    const SupportPoint& p = d1 >= d2 ? p1 : p2;
    if (std::max(d1, d2) > 1e-12) s[n++] = p;
  }
  return n == 4;
}

}  // namespace

CoreDistance coreDistance(const CollisionShape& a, const SE3& Ma, const CollisionShape& b, const SE3& Mb) {
  const Placed A{a, Ma}, B{b, Mb};
  CoreDistance out;
  SupportPoint s[4];
  int n = 0;
  Vec3 v = Ma.p - Mb.p;
  if (v.squaredNorm() < 1e-20) v = Vec3::UnitX();
  s[n++] = supportOf(A, B, -v);
  v = s[0].w;
  double lambda[4] = {1.0, 0.0, 0.0, 0.0};
  const double scale = 1.0 + v.norm();
  for (int iter = 0; iter < 128; ++iter) {
    const double vv = v.squaredNorm();
    if (vv < 1e-24 * scale * scale) break;  // the origin is on the simplex: the cores touch or overlap
    const SupportPoint w = supportOf(A, B, -v);
    // no point of A - B lies beyond v in the direction of the origin: v is the closest point
    if (vv - v.dot(w.w) <= 1e-12 * vv || n == 4) break;
    bool repeated = false;
    for (int i = 0; i < n; ++i) repeated = repeated || (s[i].w - w.w).squaredNorm() < 1e-24 * scale * scale;
    if (repeated) break;
    s[n++] = w;
    Vec3 closest;
    const int mask = closestOnSimplex(s, n, lambda, closest);
    if (mask == 0) break;
    // keep the supporting subset only
    int k = 0;
    double lam2[4] = {0.0, 0.0, 0.0, 0.0};
    for (int i = 0; i < n; ++i)
      if (mask & (1 << i)) {
        lam2[k] = lambda[i];
        s[k++] = s[i];
      }
    n = k;
    for (int i = 0; i < 4; ++i) lambda[i] = lam2[i];
    v = closest;
    if (n == 4) break;  // the origin is inside the tetrahedron
  }
  const double dist = v.norm();
  if (dist > 1e-12 * scale && n < 4) {
    witness(s, n, lambda, out.pa, out.pb);
    out.distance = dist;
    out.normal = v / dist;
    return out;
  }
  // the cores touch or overlap
  out.overlap = true;
  out.distance = 0.0;
  witness(s, n, lambda, out.pa, out.pb);
  if (!(a.solidCore() || b.solidCore())) return out;
  SupportPoint tet[4];
  for (int i = 0; i < n; ++i) tet[i] = s[i];
  int m = n;
  if (!completeTetrahedron(A, B, tet, m)) return out;
  CoreDistance pen;
  if (epa(A, B, tet, pen)) {
    out.depth = pen.depth;
    out.pa = pen.pa;
    out.pb = pen.pb;
    out.normal = pen.normal;
  }
  return out;
}

}  // namespace rigidiff
