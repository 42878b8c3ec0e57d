// Edges crossing in a projective world (pd_skeleton.hpp). The point probes of pd_link_obstacles.cpp and
// pd_link_links.cpp see a corner (an end-sphere, a box's or a hull's vertex) inside the other shape, not two edges
// crossing with no corner inside either: two capsules crossing side by side, a capsule lying across a box's edge,
// a beam lying across another, two boxes edge on edge. A pair of edges whose lines' closest points p_a, p_b are
// interior to both edge segments adds one term k/2 d^2 on those points:
// - two capsules' axes: d = |p_a - p_b| - r_a - r_b;
// - a capsule's axis and a polytope's edge (a box's, a hull's sharp edge, a box obstacle's): d = |p_a - p_b| - r_a
//   when p_a lies in the edge's outer region (outside both its faces' planes, where the edge is the polytope's
//   nearest feature);
// - two polytopes' edges crossed into each other: d = -|p_a - p_b|, the depth along the edges' common normal n,
//   when along n (out of b's edge's faces, into a's) a's edge is past b's and each crossing point is deeper than
//   |d| behind the other shape's other faces (else another face is the nearer way out: the separating axis rule,
//   kept local to the pair). A beam lying across another rests on its 4 crossings.
// Each d is the signed distance of the two edges' lines, smooth while the pair is active: exact for the pair. A
// term starts at zero where two edges first touch; it ends with its own energy k/2 d^2 where a closest point
// reaches an edge's end or comes within |d| of the other faces, or a capsule's axis leaves the edge's outer region,
// and a corner's probe takes over from its depth to the nearest face (docs/deformable.md, "Edges crossing").
// Nearly parallel edges (sin^2 of their angle below 1e-10) are left to the corners: a capsule lying along another
// rests on its end-spheres, and a box flat on a wider one on its 4 corners (its edges' lines cross the wider
// one's beyond its own edges).
//
// The term is a function of four material points (the two edges' ends), so its gradient over the joints is
// sum_i J_i^T g_i and its Hessian sum_ij J_i^T H_ij J_j + sum_i g_i . (w_a x J_b) (each point's turning, a an
// ancestor of b), g and H the line distance's over the points (collision/distance/line_line.hpp): exact.
#include <algorithm>
#include <cmath>
#include <limits>

#include "rigidiff/collision/distance/line_line.hpp"
#include "rigidiff/deformable/pd_hull.hpp"
#include "rigidiff/deformable/pd_skeleton.hpp"

namespace rigidiff {
namespace deformable {
namespace {

// the parameters of the closest points of the lines through the two edges, if not nearly parallel and interior
// to both segments
bool interiorClosest(const std::array<Vec3, 4>& x, double* ta, double* tb) {
  const Vec3 u = x[1] - x[0], v = x[3] - x[2], w = x[0] - x[2];
  const double A = u.dot(u), B = u.dot(v), C = v.dot(v), D = u.dot(w), E = v.dot(w);
  const double den = A * C - B * B;
  if (!(den > 1e-10 * A * C)) return false;
  *ta = (B * E - C * D) / den;
  *tb = (A * E - B * D) / den;
  return *ta > 0.0 && *ta < 1.0 && *tb > 0.0 && *tb < 1.0;
}

// the term on the edges' ends x with d = sign |p_a - p_b| - radius, if d < 0 (radius_a: a's own, for its surface)
bool edgeTerm(const std::array<Vec3, 4>& x, double ta, double sign, double radius, double radius_a,
              PdEdgeTerm* t) {
  const double squared = lineLineDistance(x[0], x[1], x[2], x[3]);
  const double gap = std::sqrt(std::max(squared, 0.0));
  const double d = sign * gap - radius;
  if (!(d < 0.0) || !(gap > 1e-12 * ((x[1] - x[0]).norm() + (x[3] - x[2]).norm()))) return false;  // no normal
  const Vec12 gs = lineLineDistanceGradient(x[0], x[1], x[2], x[3]);
  t->x = x;
  t->d = d;
  t->g = sign * gs / (2.0 * gap);
  t->H = sign * (lineLineDistanceHessian(x[0], x[1], x[2], x[3]) / (2.0 * gap) -
                 gs * gs.transpose() / (4.0 * gap * gap * gap));
  t->t_a = ta;
  t->radius_a = radius_a;
  t->n = t->g.segment<3>(0) + t->g.segment<3>(3);  // a moved rigidly along v changes d by n . v
  return true;
}

// the edges of a shape in world axes (a capsule's axis, with no faces)
std::vector<PdShapeEdge> worldEdges(const std::vector<PdShapeEdge>& local, const SE3& pose) {
  std::vector<PdShapeEdge> out = local;
  for (PdShapeEdge& e : out) {
    e.p0 = pose.actPoint(e.p0);
    e.p1 = pose.actPoint(e.p1);
    e.f0 = pose.R * e.f0;
    e.f1 = pose.R * e.f1;
  }
  return out;
}

// how deep p (the polytope's frame) is inside every face plane of a box or a hull but those of the normals f0, f1
// (an edge's faces, and any coplanar with them: where the other edge crosses in); negative outside
double depthExcept(const PdLinkShape* hull_shape, const Vec3& half, const Vec3& p, const Vec3& f0, const Vec3& f1) {
  auto skipped = [&](const Vec3& n) { return n.dot(f0) > 1.0 - 1e-9 || n.dot(f1) > 1.0 - 1e-9; };
  double depth = std::numeric_limits<double>::infinity();
  if (hull_shape) {
    const PdHull& h = *hull_shape->hull;
    for (std::size_t f = 0; f < h.normals.size(); ++f)
      if (!skipped(h.normals[f])) depth = std::min(depth, h.offsets[f] - h.normals[f].dot(p));
    return depth;
  }
  for (int i = 0; i < 3; ++i)
    for (double side : {-1.0, 1.0})
      if (!skipped(side * Vec3::Unit(i))) depth = std::min(depth, half[i] - side * p[i]);
  return depth;
}

// a polytope in world axes for depthExcept: a link's box or hull, or a box obstacle
struct Polytope {
  const PdLinkShape* hull = nullptr;
  Vec3 half = Vec3::Zero();
  SE3 pose;  // its frame in the world
  double depth(const Vec3& p, const Vec3& f0, const Vec3& f1) const {
    return depthExcept(hull, half, pose.R.transpose() * (p - pose.p), pose.R.transpose() * f0,
                       pose.R.transpose() * f1);
  }
  // whether one face's plane has the ball (world) wholly outside: then no edge of a shape in it crosses in
  bool separates(const Vec3& centre, double radius) const {
    const Vec3 c = pose.R.transpose() * (centre - pose.p);
    if (hull) {
      const PdHull& h = *hull->hull;
      for (std::size_t f = 0; f < h.normals.size(); ++f)
        if (h.normals[f].dot(c) - h.offsets[f] > radius) return true;
      return false;
    }
    return ((c.cwiseAbs() - half).array() > radius).any();
  }
  // whether the segment (world) meets the polytope closed by `margin`: a crossing's point on an edge is inside the
  // other shape or on its faces, so edges that miss it are dropped before their pairs are tried
  bool meets(const Vec3& p0, const Vec3& p1, double margin) const {
    const Vec3 a = pose.R.transpose() * (p0 - pose.p), b = pose.R.transpose() * (p1 - pose.p);
    double t0 = 0.0, t1 = 1.0;
    auto clip = [&](double sa, double sb) {  // keep where the plane's value s <= margin
      if (sa > margin && sb > margin) return false;
      if (sa > margin) t0 = std::max(t0, (sa - margin) / (sa - sb));
      if (sb > margin) t1 = std::min(t1, (sa - margin) / (sa - sb));
      return t0 <= t1;
    };
    if (hull) {
      const PdHull& h = *hull->hull;
      for (std::size_t f = 0; f < h.normals.size(); ++f)
        if (!clip(h.normals[f].dot(a) - h.offsets[f], h.normals[f].dot(b) - h.offsets[f])) return false;
      return true;
    }
    for (int i = 0; i < 3; ++i)
      for (double side : {-1.0, 1.0})
        if (!clip(side * a[i] - half[i], side * b[i] - half[i])) return false;
    return true;
  }
};

// the edges that meet the polytope
std::vector<PdShapeEdge> meeting(const std::vector<PdShapeEdge>& edges, const Polytope& other) {
  std::vector<PdShapeEdge> out;
  for (const PdShapeEdge& e : edges)
    if (other.meets(e.p0, e.p1, 1e-9)) out.push_back(e);
  return out;
}

Polytope linkPolytope(const PdLinkShape& s, const Data& data) {
  Polytope out;
  out.hull = s.kind == PdShapeKind::Hull ? &s : nullptr;
  out.half = s.kind == PdShapeKind::Box ? s.size : Vec3::Zero();
  out.pose = data.oMi[s.joint] * s.placement;
  return out;
}

// the crossing terms of edges ea of shape a (a capsule's axis of radius radius_a if axis_a, else polytope pa's) and
// eb of b (likewise), with base's joints and indices
void crossings(const std::vector<PdShapeEdge>& all_a, const std::vector<PdShapeEdge>& all_b, bool axis_a,
               double radius_a, bool axis_b, double radius_b, const Polytope& pa, const Polytope& pb,
               const PdEdgeTerm& base, std::vector<PdEdgeTerm>& out) {
  const bool polytopes = !axis_a && !axis_b;
  const std::vector<PdShapeEdge>& ea = polytopes ? meeting(all_a, pb) : all_a;
  const std::vector<PdShapeEdge>& eb = polytopes ? meeting(all_b, pa) : all_b;
  for (const PdShapeEdge& a : ea)
    for (const PdShapeEdge& b : eb) {
      const std::array<Vec3, 4> x{a.p0, a.p1, b.p0, b.p1};
      double ta, tb;
      if (!interiorClosest(x, &ta, &tb)) continue;
      const Vec3 xa = a.p0 + ta * (a.p1 - a.p0), xb = b.p0 + tb * (b.p1 - b.p0), gap = xa - xb;
      PdEdgeTerm t = base;
      bool found;
      if (axis_a && axis_b) {
        found = gap.squaredNorm() < (radius_a + radius_b) * (radius_a + radius_b) &&
                edgeTerm(x, ta, 1.0, radius_a + radius_b, radius_a, &t);
      } else if (axis_a) {  // a capsule's axis outside the polytope b, over b's edge (its faces' outer region)
        const double tol = -1e-9 * gap.norm();
        found = gap.squaredNorm() < radius_a * radius_a && gap.dot(b.f0) >= tol && gap.dot(b.f1) >= tol &&
                edgeTerm(x, ta, 1.0, radius_a, radius_a, &t);
      } else {  // two polytopes' edges crossed: along their common normal n (out of b's edge, into a's) a's edge
                // is past b's by |gap|, and each crossing point is deeper than that behind the other shape's
                // other faces (else another face is the nearer way out: the pair is not the contact's feature)
        Vec3 n = (a.p1 - a.p0).cross(b.p1 - b.p0);
        const Vec3 out_b = b.f0 + b.f1, out_a = a.f0 + a.f1;
        if (n.dot(out_b) < 0.0) n = -n;
        const double depth = gap.norm();
        found = n.dot(out_b) > 1e-9 * n.norm() && -n.dot(out_a) > 1e-9 * n.norm() && n.dot(gap) < 0.0 &&
                pb.depth(xa, b.f0, b.f1) > depth && pa.depth(xb, a.f0, a.f1) > depth &&
                edgeTerm(x, ta, -1.0, 0.0, 0.0, &t);
      }
      if (found) out.push_back(t);
    }
}

}  // namespace

std::vector<PdShapeEdge> boxEdges(const Vec3& half) {
  std::vector<PdShapeEdge> out;
  for (int i = 0; i < 3; ++i) {
    const int j = (i + 1) % 3, k = (i + 2) % 3;
    for (double sj : {-1.0, 1.0})
      for (double sk : {-1.0, 1.0}) {
        PdShapeEdge e;
        e.p0 = Vec3::Zero();
        e.p0[i] = -half[i];
        e.p0[j] = sj * half[j];
        e.p0[k] = sk * half[k];
        e.p1 = e.p0;
        e.p1[i] = half[i];
        e.f0 = sj * Vec3::Unit(j);
        e.f1 = sk * Vec3::Unit(k);
        out.push_back(e);
      }
  }
  return out;
}

std::vector<PdShapeEdge> linkShapeEdges(const PdLinkShape& shape) {
  std::vector<PdShapeEdge> out;
  if (shape.kind == PdShapeKind::Box) {
    out = boxEdges(shape.size);
  } else if (shape.kind == PdShapeKind::Capsule) {
    PdShapeEdge e;
    e.p0 = Vec3(0.0, 0.0, -shape.size[1]);
    e.p1 = Vec3(0.0, 0.0, shape.size[1]);
    e.f0 = e.f1 = Vec3::Zero();
    out.push_back(e);
  } else if (shape.kind == PdShapeKind::Hull) {
    const PdHull& h = *shape.hull;
    for (std::size_t i = 0; i < h.edges.size(); ++i) {
      const auto [v0, v1] = h.edges[i];
      const auto [t0, t1] = h.edge_faces[i];
      out.push_back({h.vertices[v0], h.vertices[v1], h.normals[t0], h.normals[t1]});
    }
  }
  for (PdShapeEdge& e : out) {  // into the joint's frame
    e.p0 = shape.placement.actPoint(e.p0);
    e.p1 = shape.placement.actPoint(e.p1);
    e.f0 = shape.placement.R * e.f0;
    e.f1 = shape.placement.R * e.f1;
  }
  return out;
}

void linkEdgeCrossings(const PdSkeletons& sk, const Data& data, int a, int b, std::vector<PdEdgeTerm>& out) {
  if (sk.shapes[b].kind == PdShapeKind::Capsule && sk.shapes[a].kind != PdShapeKind::Capsule) std::swap(a, b);
  const PdLinkShape &sa = sk.shapes[a], &sb = sk.shapes[b];  // a capsule first
  if (sa.kind == PdShapeKind::Sphere || sb.kind == PdShapeKind::Sphere) return;
  const bool axis_a = sa.kind == PdShapeKind::Capsule, axis_b = sb.kind == PdShapeKind::Capsule;
  const Polytope pa = linkPolytope(sa, data), pb = linkPolytope(sb, data);
  // a face of a polytope with the other's bounding ball outside
  if (!axis_b && pb.separates(pa.pose.p, linkShapeBoundingRadius(sa))) return;
  if (!axis_a && pa.separates(pb.pose.p, linkShapeBoundingRadius(sb))) return;
  PdEdgeTerm base;
  base.joints = {sa.joint, sa.joint, sb.joint, sb.joint};
  base.shape_a = a;
  crossings(worldEdges(linkShapeEdges(sa), data.oMi[sa.joint]), worldEdges(linkShapeEdges(sb), data.oMi[sb.joint]),
            axis_a, axis_a ? sa.size[0] : 0.0, axis_b, axis_b ? sb.size[0] : 0.0, pa, pb, base, out);
}

void boxEdgeCrossings(const PdModel& model, const PdSkeletons& sk, const Data& data, int shape, int obstacle,
                      std::vector<PdEdgeTerm>& out) {
  const PdLinkShape& s = sk.shapes[shape];
  if (s.kind == PdShapeKind::Sphere) return;
  const PdBox& box = model.boxes[obstacle - model.planes.size() - model.spheres.size()];
  const bool axis = s.kind == PdShapeKind::Capsule;
  PdEdgeTerm base;
  base.joints = {s.joint, s.joint, 0, 0};
  base.shape_a = shape;
  base.obstacle = obstacle;
  Polytope pb;
  pb.half = box.half;
  pb.pose.R = box.rotation;
  pb.pose.p = box.position;
  const Polytope pa = linkPolytope(s, data);
  // a face of either with the other's bounding ball outside
  if (pb.separates(pa.pose.p, linkShapeBoundingRadius(s)) || (!axis && pa.separates(box.position, box.half.norm())))
    return;
  crossings(worldEdges(linkShapeEdges(s), data.oMi[s.joint]), worldEdges(boxEdges(box.half), pb.pose), axis,
            axis ? s.size[0] : 0.0, false, 0.0, pa, pb, base, out);
}

void addEdgeTerm(const PdSkeletons& sk, const Data& data, const PdEdgeTerm& t, double k, VecX* gs, MatX* hss) {
  std::array<MatX, 4> J, W;
  for (int i = 0; i < 4; ++i) chainJacobians(sk.model, data, t.joints[i], t.x[i], J[i], W[i]);
  VecX grad = VecX::Zero(sk.nv());
  for (int i = 0; i < 4; ++i) grad += J[i].transpose() * t.g.segment<3>(3 * i);
  if (gs) *gs += k * t.d * grad;
  if (!hss) return;
  *hss += k * grad * grad.transpose();
  for (int i = 0; i < 4; ++i) {
    MatX HJ = MatX::Zero(3, sk.nv());
    for (int j = 0; j < 4; ++j) HJ += t.H.block<3, 3>(3 * i, 3 * j) * J[j];
    *hss += k * t.d * (J[i].transpose() * HJ);
    addTurningTerms(J[i], W[i], t.g.segment<3>(3 * i), k * t.d, true, *hss);
  }
}

Vec12 edgeTermMotion(const PdSkeletons& sk, const Data& data, const PdEdgeTerm& t, const VecX& ws) {
  Vec12 out;
  MatX J, W;
  for (int i = 0; i < 4; ++i) {
    chainJacobians(sk.model, data, t.joints[i], t.x[i], J, W);
    out.segment<3>(3 * i) = J * ws;
  }
  return out;
}

EdgeTermLagged edgeTermLagged(const PdEdgeTerm& t, const Vec12& dx) {
  const Vec12 Hdx = t.H * dx;
  EdgeTermLagged out;
  out.d = t.g.dot(dx);
  // n = g_a0 + g_a1 and, on the lines, g_a1 = t_a n: their derivatives through H
  out.n = Hdx.segment<3>(0) + Hdx.segment<3>(3);
  const double dt = out.n.dot(t.g.segment<3>(3)) + t.n.dot(Hdx.segment<3>(3));
  out.p0 = dx.segment<3>(0) + dt * (t.x[1] - t.x[0]) + t.t_a * (dx.segment<3>(3) - dx.segment<3>(0)) -
           t.radius_a * out.n;
  return out;
}

Vec3 edgeTermContact(const PdEdgeTerm& t) { return t.x[0] + t.t_a * (t.x[1] - t.x[0]) - t.radius_a * t.n; }

PdLinkLinkFriction edgeTermFriction(const PdSkeletons& sk, const Data& data, const PdEdgeTerm& t, double k) {
  auto derivative = [&](int e, double* dd, Vec3* dn, Vec3* dp0) {
    const auto [va, wa, vb, wb] = twistBasis(e);  // link a's twist, then link b's
    Vec12 dx;
    for (int i = 0; i < 4; ++i)
      dx.segment<3>(3 * i) = i < 2 ? Vec3(va + wa.cross(t.x[i])) : Vec3(vb + wb.cross(t.x[i]));
    const EdgeTermLagged l = edgeTermLagged(t, dx);
    *dd = l.d;
    *dn = l.n;
    *dp0 = l.p0;
  };
  return linkLinkFrictionAt(sk, data, t.joints[0], t.joints[2], k, t.d, t.n, edgeTermContact(t), derivative);
}

}  // namespace deformable
}  // namespace rigidiff
