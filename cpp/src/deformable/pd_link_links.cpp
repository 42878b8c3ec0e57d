// The links' shapes against each other in a projective world (pd_skeleton.hpp): links of different skeletons, and
// of one skeleton with self-collision on, push apart with the vertices' penalty k/2 d^2, frictionless, as a term
// of the coupled potential over the joint coordinates s with its exact gradient and Hessian.
//
// A pair of shapes (a, b) is the probes of pd_link_obstacles.cpp with the obstacle now a link: a material point
// p(s) = pose_a(s) l of link a with a radius r (a sphere's centre, a capsule's end-spheres, a box's or a hull's
// corners with r = 0) in the distance field phi_b(x; s) of link b, d = phi_b(p(s); s) - r. A sphere is probed
// by its centre alone (exact against any shape); two other shapes probe each other's corners both ways. With
// J_a, J_b the point Jacobians of links a and b at p (W_a, W_b their angular ones) and n, C the field's normal
// and Hessian at p:
//   grad d = (J_a - J_b)^T n,
//   hess d = (J_a - J_b)^T C (J_a - J_b) + J_a^T N_b + N_b^T J_a + n . (w_bj x J_bi) + n . (w_ai x J_aj),
// N_b's columns w_bj x n (the field turning with b at a fixed point), the last two for i an ancestor of j (each
// link's columns moving with its ancestors, pd_link_contact.cpp). Links that share a chain (self-collision) share
// columns; the formula holds as it is. A pair is skipped when the shapes' bounding spheres are apart.
#include <cmath>

#include "rigidiff/algorithm/jacobian.hpp"
#include "rigidiff/deformable/pd_hull.hpp"
#include "rigidiff/deformable/pd_skeleton.hpp"

namespace rigidiff {
namespace deformable {
namespace {

// the radius of a ball about the shape frame's origin that holds the shape
double boundingRadius(const PdLinkShape& shape) {
  switch (shape.kind) {
    case PdShapeKind::Sphere: return shape.size[0];
    case PdShapeKind::Box: return shape.size.norm();
    case PdShapeKind::Capsule: return shape.size[0] + shape.size[1];
    case PdShapeKind::Hull: return shape.hull->radius;
  }
  return 0.0;
}

// one probe in contact: link `probed`'s point x (radius r about it) inside link `field`'s shape
struct LinkLinkContact {
  int probed_joint = 0, field_joint = 0;
  double d = 0.0;
  Vec3 n;
  Mat3 C;
  MatX Ja, Wa, Jb, Wb;  // the probed link's and the field's link's point and angular Jacobians at x
};

// the probes of shape `from`'s points in shape `into`'s field that are inside it, at the kinematics in data
void probeInto(const PdSkeletons& sk, const Data& data, int from, int into, bool jacobians,
               std::vector<LinkLinkContact>& out) {
  const PdLinkShape& a = sk.shapes[from];
  double radius = 0.0;
  for (const Vec3& local : linkProbePoints(a, &radius)) {
    const Vec3 x = data.oMi[a.joint].actPoint(local);
    LinkLinkContact c;
    const double phi = linkShapeDistance(sk, data, into, x, &c.n, &c.C, radius);
    c.d = phi - radius;
    if (!(c.d < 0.0)) continue;
    c.probed_joint = a.joint;
    c.field_joint = sk.shapes[into].joint;
    if (jacobians) {
      chainJacobians(sk.model, data, c.probed_joint, x, c.Ja, c.Wa);
      chainJacobians(sk.model, data, c.field_joint, x, c.Jb, c.Wb);
    }
    out.push_back(std::move(c));
  }
}

// every penetrating probe between the shapes that pair, at the kinematics in data
std::vector<LinkLinkContact> linkLinkContacts(const PdSkeletons& sk, const Data& data, bool jacobians) {
  std::vector<LinkLinkContact> out;
  const int n = static_cast<int>(sk.shapes.size());
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) {
      const PdLinkShape &sa = sk.shapes[a], &sb = sk.shapes[b];
      if (!linkShapesPair(sa, sb)) continue;
      const Vec3 ca = data.oMi[sa.joint].actPoint(sa.placement.p), cb = data.oMi[sb.joint].actPoint(sb.placement.p);
      if ((ca - cb).norm() >= boundingRadius(sa) + boundingRadius(sb)) continue;
      const bool sphere_a = sa.kind == PdShapeKind::Sphere, sphere_b = sb.kind == PdShapeKind::Sphere;
      // a sphere's centre in the other's field is the whole pair; two spheres are probed once
      if (sphere_a || !sphere_b) probeInto(sk, data, a, b, jacobians, out);
      if (!sphere_a) probeInto(sk, data, b, a, jacobians, out);
    }
  return out;
}

}  // namespace

bool linkShapesPair(const PdLinkShape& a, const PdLinkShape& b) {
  if (a.group != b.group) return true;
  if (!a.self_collision) return false;
  return a.joint != b.joint && a.parent_joint != b.joint && b.parent_joint != a.joint;  // adjacent links overlap
}

std::vector<Vec3> linkProbePoints(const PdLinkShape& shape, double* radius) {
  std::vector<Vec3> out;
  *radius = 0.0;
  if (shape.kind == PdShapeKind::Sphere) {
    *radius = shape.size[0];
    out.push_back(shape.placement.p);
  } else if (shape.kind == PdShapeKind::Hull) {
    for (const Vec3& v : shape.hull->vertices) out.push_back(shape.placement.actPoint(v));
  } else if (shape.kind == PdShapeKind::Capsule) {
    *radius = shape.size[0];
    for (double end : {-1.0, 1.0}) out.push_back(shape.placement.actPoint(Vec3(0.0, 0.0, end * shape.size[1])));
  } else {
    for (int c = 0; c < 8; ++c) out.push_back(shape.placement.actPoint(boxCorner(shape.size, c)));
  }
  return out;
}

Vec3 boxCorner(const Vec3& half, int c) {
  return Vec3((c & 1 ? 1.0 : -1.0) * half[0], (c & 2 ? 1.0 : -1.0) * half[1], (c & 4 ? 1.0 : -1.0) * half[2]);
}

double linkLinkCoupling(const PdModel& model, const PdSkeletons& sk, const Data& data, VecX* gs, MatX* hss,
                        int* contacts) {
  const double k = model.contact_stiffness;
  const int nv = sk.nv();
  double energy = 0.0;
  const std::vector<LinkLinkContact> found = linkLinkContacts(sk, data, gs || hss);
  for (const LinkLinkContact& c : found) {
    energy += 0.5 * k * c.d * c.d;
    if (!gs && !hss) continue;
    const MatX rel = c.Ja - c.Jb;
    const VecX grad_d = rel.transpose() * c.n;
    if (gs) *gs += k * c.d * grad_d;
    if (!hss) continue;
    MatX turn(3, nv);  // N_b: b's field turning at a fixed point
    for (int j = 0; j < nv; ++j) turn.col(j) = Vec3(c.Wb.col(j)).cross(c.n);
    const MatX cross = c.Ja.transpose() * turn;
    *hss += k * grad_d * grad_d.transpose() + k * c.d * (rel.transpose() * c.C * rel + cross + cross.transpose());
    addTurningTerms(c.Jb, c.Wb, c.n, k * c.d, false, *hss);
    addTurningTerms(c.Ja, c.Wa, c.n, k * c.d, true, *hss);
  }
  if (contacts) *contacts = static_cast<int>(found.size());
  return energy;
}

double linkLinkStiffnessCotangent(const PdSkeletons& sk, const Data& data, const VecX& ws) {
  double out = 0.0;
  for (const LinkLinkContact& c : linkLinkContacts(sk, data, true))
    out -= c.d * c.n.dot((c.Ja - c.Jb) * ws);  // -w^T d(k d grad d)/dk
  return out;
}

}  // namespace deformable
}  // namespace rigidiff
