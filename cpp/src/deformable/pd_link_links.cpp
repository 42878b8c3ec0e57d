// The links' shapes against each other in a projective world (pd_skeleton.hpp): links of different skeletons, and
// of one skeleton with self-collision on, push apart with the vertices' penalty k/2 d^2 and rub with their lagged
// friction, as terms of the coupled potential over the joint coordinates s with exact gradients and Hessians.
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
// columns; the formula holds as it is, and a shape welded to the world (joint 0) has J = W = 0. A pair is skipped
// when the shapes' bounding spheres are apart. Two edges crossing with no corner inside either add the edge terms of
// pd_link_edges.cpp.
//
// Friction is the lagged friction of pd_link_obstacles.cpp with both sides moving: the probe's contact point at
// the step's start, p0 = x - r n (link a's surface point there), is a material point of each link, and the slip
// is the tangential part of p_a(s) - p_b(s), zero at the start: mu lambda f0(|P (p_a - p_b)|) with lambda, n and
// the two material points frozen at the start. Its gradient is mu lambda (J_a(p_a) - J_b(p_b))^T psi and its
// Hessian (J_a - J_b)^T H_u (J_a - J_b) plus psi . (w_ai x J_aj) for p_a and minus that of p_b (i an ancestor of
// j). The lagged quantities' derivatives along both links' start twists are taken when the contacts are found.
#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "rigidiff/algorithm/jacobian.hpp"
#include "rigidiff/algorithm/kinematics.hpp"
#include "rigidiff/deformable/pd_hull.hpp"
#include "rigidiff/deformable/pd_skeleton.hpp"

namespace rigidiff {
namespace deformable {
namespace {

// one probe in contact: link `probed`'s point x (radius r about it) inside link `field`'s shape
struct LinkLinkContact {
  int probed_joint = 0, field_joint = 0;
  double d = 0.0, radius = 0.0;
  Vec3 x, n;
  Mat3 C;
  MatX Ja, Wa, Jb, Wb;  // the probed link's and the field's link's point and angular Jacobians at x
};

// the probes of shape `from`'s points in shape `into`'s field that are inside it, at the kinematics in data. A box
// also probes the midpoint of each edge whose ends are both on or inside the field and which is deeper than both
// ends: the edge passes where the field's nearest face changes, which its corners miss (two boxes of one thickness
// side by side: every corner lies in the other's top or bottom plane, at depth 0, while the edges joining them cut
// into its side). Where the field is one face's along an edge its depth is linear there and the midpoint is never
// deeper than both ends (a box resting flat keeps its four corners); an edge with an end outside is the edge
// crossings' case (pd_link_edges.cpp). A face's centre probes likewise when none of its edges does.
void probeInto(const PdSkeletons& sk, const Data& data, int from, int into, bool jacobians,
               std::vector<LinkLinkContact>& out) {
  const PdLinkShape& a = sk.shapes[from];
  double radius = 0.0;
  const std::vector<Vec3> probes = linkProbePoints(a, &radius);
  // the probe at `local` (a point of link a's frame), its depth d = phi - radius
  auto probe = [&](const Vec3& local) {
    LinkLinkContact c;
    c.x = data.oMi[a.joint].actPoint(local);
    c.d = linkShapeDistance(sk, data, into, c.x, &c.n, &c.C, radius) - radius;
    return c;
  };
  auto keep = [&](LinkLinkContact&& c) {
    c.probed_joint = a.joint;
    c.radius = radius;
    c.field_joint = sk.shapes[into].joint;
    if (jacobians) {
      chainJacobians(sk.model, data, c.probed_joint, c.x, c.Ja, c.Wa);
      chainJacobians(sk.model, data, c.field_joint, c.x, c.Jb, c.Wb);
    }
    out.push_back(std::move(c));
  };
  std::vector<double> depth;
  depth.reserve(probes.size());
  for (const Vec3& local : probes) {
    LinkLinkContact c = probe(local);
    depth.push_back(c.d);
    if (c.d < 0.0) keep(std::move(c));
  }
  if (a.kind != PdShapeKind::Box) return;
  const double tol = 1e-9 * linkShapeBoundingRadius(a);  // round-off of a depth that is linear along the edge
  bool edgeProbed[8][3] = {};  // [corner c0][axis]: the edge from c0 along axis probed at its midpoint
  for (int c0 = 0; c0 < 8; ++c0)
    for (int axis = 0; axis < 3; ++axis) {
      const int c1 = c0 | (1 << axis);  // the edge from corner c0 to c1 along `axis` (probes in boxCorner order)
      if (c1 == c0 || depth[c0] > tol || depth[c1] > tol) continue;
      LinkLinkContact c = probe(0.5 * (probes[c0] + probes[c1]));
      if (c.d < 0.0 && c.d < std::min(depth[c0], depth[c1]) - tol) {
        edgeProbed[c0][axis] = true;
        keep(std::move(c));
      }
    }
  // likewise a face's centre, deeper than its four corners, none of its edges probed (two boxes of one thickness
  // and one width side by side: their edges too lie in each other's faces)
  for (int normal = 0; normal < 3; ++normal)
    for (int side = 0; side < 2; ++side) {
      const int u = (normal + 1) % 3, w = (normal + 2) % 3, base = side << normal;
      const int k[4] = {base, base | (1 << u), base | (1 << w), base | (1 << u) | (1 << w)};
      double deepest = depth[k[0]];
      bool skip = false;
      for (int i = 0; i < 4; ++i) {
        deepest = std::min(deepest, depth[k[i]]);
        skip = skip || depth[k[i]] > tol;
      }
      skip = skip || edgeProbed[k[0]][u] || edgeProbed[k[0]][w] || edgeProbed[k[1]][w] || edgeProbed[k[2]][u];
      if (skip) continue;
      LinkLinkContact c = probe(0.25 * (probes[k[0]] + probes[k[1]] + probes[k[2]] + probes[k[3]]));
      if (c.d < 0.0 && c.d < deepest - tol) keep(std::move(c));
    }
}

// every penetrating probe between the shapes that pair, at the kinematics in data, and (if edges is given) their
// edges' crossings (pd_link_edges.cpp)
std::vector<LinkLinkContact> linkLinkContacts(const PdSkeletons& sk, const Data& data, bool jacobians,
                                              std::vector<PdEdgeTerm>* edges = nullptr) {
  std::vector<LinkLinkContact> out;
  const int n = static_cast<int>(sk.shapes.size());
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) {
      const PdLinkShape &sa = sk.shapes[a], &sb = sk.shapes[b];
      if (!linkShapesPair(sa, sb) || (sa.joint == 0 && sb.joint == 0)) continue;  // (two welded: static)
      const Vec3 ca = data.oMi[sa.joint].actPoint(sa.placement.p), cb = data.oMi[sb.joint].actPoint(sb.placement.p);
      if ((ca - cb).norm() >= linkShapeBoundingRadius(sa) + linkShapeBoundingRadius(sb)) continue;
      const bool sphere_a = sa.kind == PdShapeKind::Sphere, sphere_b = sb.kind == PdShapeKind::Sphere;
      // a sphere's centre in the other's field is the whole pair; two spheres are probed once
      if (sphere_a || !sphere_b) probeInto(sk, data, a, b, jacobians, out);
      if (!sphere_a) probeInto(sk, data, b, a, jacobians, out);
      if (edges) linkEdgeCrossings(sk, data, a, b, *edges);
    }
  return out;
}

// the lagged friction term of f at the kinematics in data: its energy, gradient into gs and Hessian into hss
double linkPairFriction(const PdModel& model, const PdSkeletons& sk, const Data& data, const PdLinkLinkFriction& f,
                        VecX* gs, MatX* hss) {
  const Vec3 xa = data.oMi[f.joint_a].actPoint(f.local_a);
  const LinkSlip sl = linkSlip(model, f.normal, f.local_b, data.oMi[f.joint_b], xa);
  const double w = model.friction * f.lambda;
  if (!(w > 0.0) || (!gs && !hss)) return w * sl.f0;
  const Vec3 psi = sl.f1_y * sl.u;
  MatX Ja, Wa, Jb, Wb;
  chainJacobians(sk.model, data, f.joint_a, xa, Ja, Wa);
  chainJacobians(sk.model, data, f.joint_b, sl.phi, Jb, Wb);
  const MatX rel = Ja - Jb;
  if (gs) *gs += w * rel.transpose() * psi;
  if (hss) {
    const Mat3 P = Mat3::Identity() - f.normal * f.normal.transpose();
    const Mat3 Hu = w * (sl.f1_y * P + sl.c2 * sl.u * sl.u.transpose());
    *hss += rel.transpose() * Hu * rel;
    addTurningTerms(Ja, Wa, psi, w, true, *hss);
    addTurningTerms(Jb, Wb, psi, -w, true, *hss);
  }
  return w * sl.f0;
}

}  // namespace

std::array<Vec3, 4> twistBasis(int e) {
  std::array<Vec3, 4> out{Vec3::Zero(), Vec3::Zero(), Vec3::Zero(), Vec3::Zero()};
  out[e / 3][e % 3] = 1.0;
  return out;
}

double linkShapeBoundingRadius(const PdLinkShape& shape) {
  switch (shape.kind) {
    case PdShapeKind::Sphere: return shape.size[0];
    case PdShapeKind::Box: return shape.size.norm();
    case PdShapeKind::Capsule: return shape.size[0] + shape.size[1];
    case PdShapeKind::Hull: return shape.hull->radius;
  }
  return 0.0;
}

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

double linkLinkCoupling(const PdModel& model, const PdSkeletons& sk, const PdSkeletonData& ad, VecX* gs, MatX* hss,
                        int* contacts) {
  const double k = model.contact_stiffness;
  const int nv = sk.nv();
  double energy = 0.0;
  std::vector<PdEdgeTerm> edges;
  const std::vector<LinkLinkContact> found = linkLinkContacts(sk, ad.data, gs || hss, &edges);
  for (const PdEdgeTerm& t : edges) {
    energy += 0.5 * k * t.d * t.d;
    addEdgeTerm(sk, ad.data, t, k, gs, hss);
  }
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
  for (const PdLinkLinkFriction& f : ad.link_friction) energy += linkPairFriction(model, sk, ad.data, f, gs, hss);
  if (contacts) *contacts = static_cast<int>(found.size() + edges.size());
  return energy;
}

void linkLinkFrictionContacts(const PdModel& model, const PdSkeletons& sk, PdSkeletonData& ad, const VecX& s0,
                              bool always) {
  ad.link_friction.clear();
  if ((!(model.friction > 0.0) && !always) || sk.shapes.size() < 2 || sk.model.nq == 0) return;
  forwardKinematics(sk.model, ad.data, s0.data());
  computeJointJacobians(sk.model, ad.data, s0.data());
  const double k = model.contact_stiffness;
  std::vector<PdEdgeTerm> edges;
  for (const LinkLinkContact& c : linkLinkContacts(sk, ad.data, false, &edges)) {
    auto derivative = [&](int e, double* dd, Vec3* dn, Vec3* dp0) {
      const auto [va, wa, vb, wb] = twistBasis(e);  // link a's twist, then link b's
      const Vec3 dx = va + wa.cross(c.x), drel = dx - vb - wb.cross(c.x);  // x's motion in b's field
      *dd = c.n.dot(drel);
      *dn = wb.cross(c.n) + c.C * drel;
      *dp0 = dx - c.radius * *dn;
    };
    // link a's surface point at the contact
    ad.link_friction.push_back(linkLinkFrictionAt(sk, ad.data, c.probed_joint, c.field_joint, k, c.d, c.n,
                                                  c.x - c.radius * c.n, derivative));
  }
  for (const PdEdgeTerm& t : edges) ad.link_friction.push_back(edgeTermFriction(sk, ad.data, t, k));
}

PdLinkLinkFriction linkLinkFrictionAt(const PdSkeletons& sk, const Data& data, int joint_a, int joint_b, double k,
                                      double d, const Vec3& n, const Vec3& p0, const ContactDerivative& derivative) {
  const SE3 &pa = data.oMi[joint_a], &pb = data.oMi[joint_b];
  PdLinkLinkFriction f;
  f.joint_a = joint_a;
  f.joint_b = joint_b;
  f.lambda = -k * d;
  f.normal = n;
  f.local_a = pa.R.transpose() * (p0 - pa.p);
  f.local_b = pb.R.transpose() * (p0 - pb.p);
  for (int e = 0; e < 12; ++e) {
    const auto [va, wa, vb, wb] = twistBasis(e);
    double dd;
    Vec3 dn, dp0;
    derivative(e, &dd, &dn, &dp0);
    f.lagged(0, e) = -k * dd;
    f.lagged.block<3, 1>(1, e) = dn;
    f.lagged.block<3, 1>(4, e) = pa.R.transpose() * (dp0 - va - wa.cross(p0));
    f.lagged.block<3, 1>(7, e) = pb.R.transpose() * (dp0 - vb - wb.cross(p0));
  }
  chainJacobians(sk.model, data, joint_a, Vec3::Zero(), f.jv_a, f.w_a);
  chainJacobians(sk.model, data, joint_b, Vec3::Zero(), f.jv_b, f.w_b);
  return f;
}

std::pair<double, double> linkLinkCotangents(const PdModel& model, const PdSkeletons& sk, const PdSkeletonData& ad,
                                             const PdSkeletonData& lagged, const VecX& ws, VecX& gs0) {
  const double k = model.contact_stiffness, mu = model.friction;
  double grad_k = 0.0, per_mu = 0.0;
  std::vector<PdEdgeTerm> edges;
  for (const LinkLinkContact& c : linkLinkContacts(sk, ad.data, true, &edges))
    grad_k -= c.d * c.n.dot((c.Ja - c.Jb) * ws);  // -w^T d(k d grad d)/dk
  for (const PdEdgeTerm& t : edges) grad_k -= t.d * t.g.dot(edgeTermMotion(sk, ad.data, t, ws));
  // the friction: w^T grad = mu lambda psi . rel, rel = (J_a - J_b) ws, through its lagged quantities
  for (const PdLinkLinkFriction& f : lagged.link_friction) {
    const SE3 &pa = ad.data.oMi[f.joint_a], &pb = ad.data.oMi[f.joint_b];
    const Vec3 xa = pa.actPoint(f.local_a);
    const LinkSlip sl = linkSlip(model, f.normal, f.local_b, pb, xa);
    MatX Ja, Wa, Jb, Wb;
    chainJacobians(sk.model, ad.data, f.joint_a, xa, Ja, Wa);
    chainJacobians(sk.model, ad.data, f.joint_b, sl.phi, Jb, Wb);
    const Vec3 psi = sl.f1_y * sl.u, rel = (Ja - Jb) * ws, omega_a = Wa * ws, omega_b = Wb * ws;
    per_mu -= f.lambda * rel.dot(psi);
    if (!(mu > 0.0)) continue;
    const Vec3 hr = (sl.f1_y * Mat3::Identity() + sl.c2 * sl.u * sl.u.transpose()) * rel;  // d psi / d u rel
    const Vec3 Phr = hr - f.normal * f.normal.dot(hr);
    Eigen::Matrix<double, 10, 1> by_lagged;
    by_lagged << mu * rel.dot(psi), -mu * f.lambda * (f.normal.dot(sl.r) * hr + hr.dot(f.normal) * sl.r),
        pa.R.transpose() * (mu * f.lambda * (Phr + psi.cross(omega_a))),
        pb.R.transpose() * (-mu * f.lambda * (Phr + psi.cross(omega_b)));
    const Eigen::Matrix<double, 12, 1> cot = -f.lagged.transpose() * by_lagged;
    gs0 += f.jv_a.transpose() * cot.segment<3>(0) + f.w_a.transpose() * cot.segment<3>(3) +
           f.jv_b.transpose() * cot.segment<3>(6) + f.w_b.transpose() * cot.segment<3>(9);
  }
  grad_k += mu * per_mu / k;  // friction's normal forces are k times the start's depths
  return {grad_k, per_mu};
}

}  // namespace deformable
}  // namespace rigidiff
