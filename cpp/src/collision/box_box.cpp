// Box against box by the separating-axis test: 3 + 3 face axes and 9 edge-edge axes. A face axis
// clips the incident face against the reference face (point-face contacts); an edge axis gives one
// edge-edge contact. Face axes win ties, which keeps resting stacks on face contacts.
#include <array>
#include <cmath>

#include "rigidiff/collision/manifold.hpp"
#include "rigidiff/collision/narrowphase.hpp"

namespace rigidiff {
namespace narrowphase {

namespace {

// separation of two boxes along the unit axis L (> 0: a gap); d = centre of A - centre of B
double separation(const Vec3& L, const Vec3& d, const SE3& Ma, const Vec3& ha, const SE3& Mb, const Vec3& hb) {
  double ra = 0.0, rb = 0.0;
  for (int k = 0; k < 3; ++k) {
    ra += ha[k] * std::abs(L.dot(Ma.R.col(k)));
    rb += hb[k] * std::abs(L.dot(Mb.R.col(k)));
  }
  return std::abs(L.dot(d)) - ra - rb;
}

// corners of the face of a box with outward local normal sign*e_axis (local frame)
std::array<Vec3, 4> faceCorners(const Vec3& h, int axis, double sign) {
  const int u = (axis + 1) % 3, v = (axis + 2) % 3;
  std::array<Vec3, 4> pts;
  for (int k = 0; k < 4; ++k) {
    Vec3& p = pts[k];
    p[axis] = sign * h[axis];
    p[u] = ((k == 1 || k == 2) ? 1.0 : -1.0) * h[u];
    p[v] = (k >= 2 ? 1.0 : -1.0) * h[v];
  }
  return pts;
}

// contacts of the reference face of R (normal axis `axis` of R, facing I) clipping I's incident face;
// R is A of the contacts (I is B)
void faceContacts(const CollisionShape& R, const SE3& Mr, int gr, const CollisionShape& I, const SE3& Mi, int gi,
                  int axis, double margin, std::vector<Contact>& out) {
  const Vec3 d = Mi.p - Mr.p;
  const double sr = Mr.R.col(axis).dot(d) >= 0.0 ? 1.0 : -1.0;
  const Vec3 n_ref = sr * Mr.R.col(axis);  // outward normal of the reference face, towards I
  int inc = 0;
  double best = -1.0;
  for (int k = 0; k < 3; ++k)
    if (std::abs(Mi.R.col(k).dot(n_ref)) > best) {
      best = std::abs(Mi.R.col(k).dot(n_ref));
      inc = k;
    }
  const double si = Mi.R.col(inc).dot(n_ref) > 0.0 ? -1.0 : 1.0;  // incident face looks back at R
  std::array<Vec3, 4> ref = faceCorners(R.half_extents, axis, sr), incident = faceCorners(I.half_extents, inc, si);
  for (Vec3& p : ref) p = Mr.actPoint(p);
  for (Vec3& p : incident) p = Mi.actPoint(p);
  manifold::orderAround(ref.data(), ref.size(), n_ref);
  Feature face;
  face.kind = FeatureKind::Face;
  face.d = sr * Vec3::Unit(axis);
  face.p = R.half_extents[axis] * face.d;
  clippedPatchContacts(face, ref, n_ref, Mr, gr, incident, 0.0, Mi, gi, margin, out);
}

// the edge of a box along `axis` that is extreme along the world direction L (local frame)
Feature supportEdge(const SE3& M, const Vec3& h, int axis, const Vec3& L) {
  Feature f;
  f.kind = FeatureKind::Segment;
  f.d = Vec3::Unit(axis);
  for (int k = 0; k < 3; ++k) f.p[k] = k == axis ? 0.0 : (L.dot(M.R.col(k)) >= 0.0 ? h[k] : -h[k]);
  return f;
}

}  // namespace

void boxBox(const CollisionShape& a, const SE3& Ma, int ga, const CollisionShape& b, const SE3& Mb, int gb,
            double margin, std::vector<Contact>& out) {
  const Vec3& ha = a.half_extents;
  const Vec3& hb = b.half_extents;
  const Vec3 d = Ma.p - Mb.p;
  double face_sep = -INFINITY;
  int face_axis = -1;  // 0..2: A's axes, 3..5: B's
  for (int k = 0; k < 6; ++k) {
    const Vec3 L = k < 3 ? Vec3(Ma.R.col(k)) : Vec3(Mb.R.col(k - 3));
    const double s = separation(L, d, Ma, ha, Mb, hb);
    if (s >= margin) return;
    if (s > face_sep) {
      face_sep = s;
      face_axis = k;
    }
  }
  double edge_sep = -INFINITY;
  int ei = -1, ej = -1;
  Vec3 edge_L = Vec3::Zero();
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      Vec3 L = Ma.R.col(i).cross(Mb.R.col(j));
      const double len = L.norm();
      if (len < 1e-6) continue;  // parallel edges: the face axes cover them
      L /= len;
      const double s = separation(L, d, Ma, ha, Mb, hb);
      if (s >= margin) return;
      if (s > edge_sep) {
        edge_sep = s;
        ei = i;
        ej = j;
        edge_L = L.dot(d) >= 0.0 ? L : Vec3(-L);
      }
    }
  const double tol = 1e-5 * std::min(ha.minCoeff(), hb.minCoeff());  // faces win near-ties
  if (ei >= 0 && edge_sep > face_sep + tol) {
    const Feature fa = supportEdge(Ma, ha, ei, -edge_L), fb = supportEdge(Mb, hb, ej, edge_L);
    // the closest points must lie inside both edges, else a face axis describes the contact better
    const FeatureGeometry g = evaluateFeatures(fa, Ma, fb, Mb, edge_L);
    const Vec3 la = Ma.R.transpose() * (g.point_a - Ma.p), lb = Mb.R.transpose() * (g.point_b - Mb.p);
    if (std::abs(la[ei]) <= ha[ei] && std::abs(lb[ej]) <= hb[ej]) {
      addContact(out, ga, gb, fa, Ma, fb, Mb, edge_L);
      return;
    }
  }
  if (face_axis < 3) {
    faceContacts(a, Ma, ga, b, Mb, gb, face_axis, margin, out);
  } else {
    const std::size_t first = out.size();
    faceContacts(b, Mb, gb, a, Ma, ga, face_axis - 3, margin, out);
    swapRoles(out, first);
  }
}

}  // namespace narrowphase
}  // namespace rigidiff
