// The links' shapes against the obstacles of a projective world (pd_skeleton.hpp): the ground planes, balls and
// boxes push and rub on the links with the vertices' penalty k/2 d^2 and lagged friction, as terms of the coupled
// potential over the joint coordinates s with exact gradients and Hessians.
//
// A pair is one or more probes:
// - a point probe: a material point p(s) = pose(s) l of the link with a radius r (a sphere's centre, a capsule's
//   end-spheres, a box's or a hull's corners with r = 0) in the distance field phi of a plane or a box obstacle:
//   d = phi(p(s)) - r, grad d = J^T n, hess d = J^T C J + n . (w_i x J_j) (i an ancestor of j);
// - a field probe: an obstacle's point c (a ball's centre with the ball's radius R, a box obstacle's corners with
//   R = 0) in the link shape's distance field (pd_link_contact.cpp's vertices): d = phi_link(c; s) - R,
//   grad d = -J(c)^T n, hess d = J^T C J + n . (w_j x J_i).
// A sphere link against a box is its centre's point probe, exact. A capsule, box or hull link against a box is its
// corners' point probes and the box's corners' field probes: exact wherever a corner of one is the deepest point
// in the other (resting, or a corner poking in); two edges crossing with no corner inside are the edge terms of
// pd_link_edges.cpp (a capsule's axis or a polytope's edges against the box's edges).
//
// Friction follows the link's surface point at the contact at the step's start, p0 (r along -n from a point
// probe, the link's surface point nearest a ball's centre), as a material point of the link, against the
// obstacle's material point there moved by the obstacle's velocity over the step (the reference): the vertex
// friction of pd_link_contact.cpp with the reference in the vertex's place. Its lagged quantities (lambda,
// normal, material point, reference) depend on the start's joints and the obstacle's pose; their derivatives
// along the link's twist and the obstacle's translation and rotation are taken forward when they are found.
#include <array>

#include "rigidiff/algorithm/jacobian.hpp"
#include "rigidiff/algorithm/kinematics.hpp"
#include "rigidiff/deformable/pd_hull.hpp"
#include "rigidiff/deformable/pd_skeleton.hpp"

namespace rigidiff {
namespace deformable {
namespace {

struct Probe {
  int shape = 0, obstacle = 0;
  bool field = false;      // an obstacle's point in the link's field (else a link point in the obstacle's field)
  Vec3 local = Vec3::Zero();  // the link point in its joint's frame (point probes), or the box corner in the box's
  double radius = 0.0;     // the link's radius about the point, or the ball's
};

// the world point of a field probe: a ball's centre, or a box obstacle's corner
Vec3 obstaclePoint(const PdModel& model, const Probe& p) {
  const int n_planes = static_cast<int>(model.planes.size()), n_spheres = static_cast<int>(model.spheres.size());
  if (p.obstacle < n_planes + n_spheres) return model.spheres[p.obstacle - n_planes].centre;
  const PdBox& b = model.boxes[p.obstacle - n_planes - n_spheres];
  return b.rotation * p.local + b.position;
}

std::vector<Probe> linkObstacleProbes(const PdModel& model, const PdSkeletons& sk) {
  std::vector<Probe> out;
  const int n_planes = static_cast<int>(model.planes.size()), n_spheres = static_cast<int>(model.spheres.size());
  for (int k = 0; k < static_cast<int>(sk.shapes.size()); ++k) {
    const PdLinkShape& shape = sk.shapes[k];
    if (shape.joint == 0) continue;  // welded to the world: it touches links alone
    for (int o = 0; o < model.obstacleCount(); ++o) {
      Probe p;
      p.shape = k;
      p.obstacle = o;
      if (o >= n_planes && o < n_planes + n_spheres) {  // a ball: its centre in the link's field
        p.field = true;
        p.radius = model.spheres[o - n_planes].radius;
        out.push_back(p);
        continue;
      }
      if (o >= n_planes && shape.kind != PdShapeKind::Sphere) {  // a box obstacle: its corners in the link's field
        const Vec3& half = model.boxes[o - n_planes - n_spheres].half;
        Probe corner = p;
        corner.field = true;
        for (int c = 0; c < 8; ++c) {
          corner.local = boxCorner(half, c);
          out.push_back(corner);
        }
      }
      // and the link's probe points in the plane's or the box's field (a sphere's centre is exact against both; a
      // capsule's end-spheres and a box's or a hull's corners against a plane)
      for (const Vec3& local : linkProbePoints(shape, &p.radius)) {
        p.local = local;
        out.push_back(p);
      }
    }
  }
  return out;
}

// the edge crossings of the links' shapes and the box obstacles (pd_link_edges.cpp), at the kinematics in data; a
// shape whose bounding ball misses the box's is skipped
std::vector<PdEdgeTerm> linkBoxEdges(const PdModel& model, const PdSkeletons& sk, const Data& data) {
  std::vector<PdEdgeTerm> out;
  const int first = static_cast<int>(model.planes.size() + model.spheres.size());
  for (int k = 0; k < static_cast<int>(sk.shapes.size()); ++k) {
    const PdLinkShape& shape = sk.shapes[k];
    if (shape.joint == 0 || shape.kind == PdShapeKind::Sphere) continue;
    const Vec3 centre = data.oMi[shape.joint].actPoint(shape.placement.p);
    for (int b = 0; b < static_cast<int>(model.boxes.size()); ++b)
      if ((centre - model.boxes[b].position).norm() < linkShapeBoundingRadius(shape) + model.boxes[b].half.norm())
        boxEdgeCrossings(model, sk, data, k, first + b, out);
  }
  return out;
}

// the distance field of a plane or a box obstacle at x, with its normal and Hessian (world frame)
double obstacleField(const PdModel& model, int o, const Vec3& x, Vec3* n, Mat3* C) {
  const int n_planes = static_cast<int>(model.planes.size());
  if (o < n_planes) {
    *n = model.planes[o].normal;
    C->setZero();
    return n->dot(x) - model.planes[o].offset;
  }
  const PdBox& b = model.boxes[o - n_planes - static_cast<int>(model.spheres.size())];
  Vec3 nl;
  Mat3 Cl;
  const double d = boxDistance(b.half, b.rotation.transpose() * (x - b.position), &nl, &Cl);
  *n = b.rotation * nl;
  *C = b.rotation * Cl * b.rotation.transpose();
  return d;
}

// a probe at the kinematics in data: the probed point (the link point, or the ball's centre), the field's value
// phi there, d = phi - radius, the normal and the field's Hessian, and the chain's Jacobians at the point
struct ProbeState {
  Vec3 point, n;
  Mat3 C;
  double phi = 0.0, d = 0.0;
  MatX J, W;
};

ProbeState probeState(const PdModel& model, const PdSkeletons& sk, const Data& data, const Probe& p, bool jacobians) {
  ProbeState st;
  const int joint = sk.shapes[p.shape].joint;
  if (p.field) {
    st.point = obstaclePoint(model, p);
    st.phi = linkShapeDistance(sk, data, p.shape, st.point, &st.n, &st.C, p.radius);
  } else {
    st.point = data.oMi[joint].actPoint(p.local);
    st.phi = obstacleField(model, p.obstacle, st.point, &st.n, &st.C);
  }
  st.d = st.phi - p.radius;
  if (jacobians && st.d < 0.0) chainJacobians(sk.model, data, joint, st.point, st.J, st.W);
  return st;
}

// the lagged friction of a contact of link shape `shape` with an obstacle: depth d < 0, normal n, the link's surface
// point p0 and the obstacle's material point there at the step's end as the reference; its lagged rows from
// `derivative` along the link's twist and the obstacle's motion
PdLinkObstacleFriction obstacleFrictionAt(const PdModel& model, const PdSkeletons& sk, const Data& data, int shape,
                                          int obstacle, double d, const Vec3& n, const Vec3& p0,
                                          const ContactDerivative& derivative) {
  const int joint = sk.shapes[shape].joint;
  const SE3& pose = data.oMi[joint];
  Vec3 position, linear, angular;
  model.obstacleMotion(obstacle, &position, &linear, &angular);
  const double k = model.contact_stiffness, h = model.dt;
  PdLinkObstacleFriction f;
  f.shape = shape;
  f.obstacle = obstacle;
  f.lambda = -k * d;
  f.normal = n;
  f.local = pose.R.transpose() * (p0 - pose.p);
  f.reference = p0 + h * (linear + angular.cross(p0 - position));
  for (int e = 0; e < 12; ++e) {
    const auto [vl, wl, dc, dw] = twistBasis(e);
    double dd;
    Vec3 dn, dp0;
    derivative(e, &dd, &dn, &dp0);
    f.lagged(0, e) = -k * dd;
    f.lagged.block<3, 1>(1, e) = dn;
    f.lagged.block<3, 1>(4, e) = pose.R.transpose() * (dp0 - vl - wl.cross(p0));
    f.lagged.block<3, 1>(7, e) = dp0 + h * angular.cross(dp0 - dc);
  }
  chainJacobians(sk.model, data, joint, Vec3::Zero(), f.jv0, f.w0);
  return f;
}

void kinematics(const PdSkeletons& sk, Data& data, const VecX& s) {
  if (sk.model.nq == 0) return;
  forwardKinematics(sk.model, data, s.data());
  computeJointJacobians(sk.model, data, s.data());
}

}  // namespace

double linkObstacleCoupling(const PdModel& model, const PdSkeletons& sk, PdSkeletonData& ad, VecX* gs, MatX* hss,
                            int* contacts) {
  const double k = model.contact_stiffness;
  double energy = 0.0;
  int count = 0;
  for (const Probe& p : linkObstacleProbes(model, sk)) {
    const ProbeState st = probeState(model, sk, ad.data, p, gs || hss);
    if (!(st.d < 0.0)) continue;
    ++count;
    energy += 0.5 * k * st.d * st.d;
    if (!gs && !hss) continue;
    const VecX grad_d = (p.field ? -1.0 : 1.0) * (st.J.transpose() * st.n);
    if (gs) *gs += k * st.d * grad_d;
    if (!hss) continue;
    *hss += k * grad_d * grad_d.transpose() + k * st.d * (st.J.transpose() * st.C * st.J);
    addTurningTerms(st.J, st.W, st.n, k * st.d, !p.field, *hss);
  }
  const std::vector<PdEdgeTerm> edges = linkBoxEdges(model, sk, ad.data);
  for (const PdEdgeTerm& t : edges) {
    energy += 0.5 * k * t.d * t.d;
    addEdgeTerm(sk, ad.data, t, k, gs, hss);
  }
  count += static_cast<int>(edges.size());
  for (const PdLinkObstacleFriction& f : ad.obstacle_friction)
    energy += linkFrictionTerm(model, sk, ad.data, sk.shapes[f.shape].joint, f.local, f.normal, f.lambda,
                               f.reference, nullptr, gs, hss, nullptr);
  if (contacts) *contacts = count;
  return energy;
}

void linkObstacleFrictionContacts(const PdModel& model, const PdSkeletons& sk, PdSkeletonData& ad, const VecX& s0,
                                  bool always) {
  ad.obstacle_friction.clear();
  if ((!(model.friction > 0.0) && !always) || sk.shapes.empty() || model.obstacleCount() == 0) return;
  kinematics(sk, ad.data, s0);
  for (const Probe& p : linkObstacleProbes(model, sk)) {
    const ProbeState st = probeState(model, sk, ad.data, p, false);
    if (!(st.d < 0.0)) continue;
    Vec3 position, linear, angular;
    model.obstacleMotion(p.obstacle, &position, &linear, &angular);
    auto derivative = [&](int e, double* dd, Vec3* dn, Vec3* dp0) {
      const auto [vl, wl, dc, dw] = twistBasis(e);  // the link's twist, the obstacle's motion
      // the probed point's motion relative to the field's owner, and the field's turning
      Vec3 drel;
      if (p.field) {  // the obstacle's point moves with the obstacle (a box corner turns about its position)
        const Vec3 dpoint = dc + dw.cross(st.point - position);
        drel = dpoint - vl - wl.cross(st.point);
        *dn = wl.cross(st.n) + st.C * drel;
        *dp0 = dpoint - st.n.dot(drel) * st.n - st.phi * *dn;
      } else {
        const Vec3 dpoint = vl + wl.cross(st.point);
        drel = dpoint - dc - dw.cross(st.point - position);
        *dn = dw.cross(st.n) + st.C * drel;
        *dp0 = dpoint - p.radius * *dn;
      }
      *dd = st.n.dot(drel);
    };
    // the link's surface point at the contact
    const double along = p.field ? st.phi : p.radius;
    ad.obstacle_friction.push_back(
        obstacleFrictionAt(model, sk, ad.data, p.shape, p.obstacle, st.d, st.n, st.point - along * st.n, derivative));
  }
  for (const PdEdgeTerm& t : linkBoxEdges(model, sk, ad.data)) {
    Vec3 position, linear, angular;
    model.obstacleMotion(t.obstacle, &position, &linear, &angular);
    auto derivative = [&](int e, double* dd, Vec3* dn, Vec3* dp0) {
      const auto [vl, wl, dc, dw] = twistBasis(e);  // the link's twist, the obstacle's motion
      Eigen::Matrix<double, 12, 1> dx;
      for (int i = 0; i < 4; ++i)
        dx.segment<3>(3 * i) = i < 2 ? Vec3(vl + wl.cross(t.x[i])) : Vec3(dc + dw.cross(t.x[i] - position));
      const EdgeTermLagged l = edgeTermLagged(t, dx);
      *dd = l.d;
      *dn = l.n;
      *dp0 = l.p0;
    };
    ad.obstacle_friction.push_back(
        obstacleFrictionAt(model, sk, ad.data, t.shape_a, t.obstacle, t.d, t.n, edgeTermContact(t), derivative));
  }
}

std::pair<double, double> linkObstacleCotangents(const PdModel& model, const PdSkeletons& sk, const PdSkeletonData& ad,
                                                 const PdSkeletonData& lagged, const VecX& ws, VecX& gs0,
                                                 VecX& grad_obstacles) {
  const double k = model.contact_stiffness, mu = model.friction;
  const int n_planes = static_cast<int>(model.planes.size()), n_spheres = static_cast<int>(model.spheres.size());
  double grad_k = 0.0, per_mu = 0.0;
  // the penalty at the solution: -w^T d(k d grad_s d)/d(theta), a = J ws the probed point's motion under ws
  for (const Probe& p : linkObstacleProbes(model, sk)) {
    const ProbeState st = probeState(model, sk, ad.data, p, true);
    if (!(st.d < 0.0)) continue;
    const Vec3 a = st.J * ws;
    const double sign = p.field ? -1.0 : 1.0;
    grad_k -= sign * st.d * a.dot(st.n);
    if (p.obstacle < n_planes) continue;  // planes do not move
    Vec3 position, linear, angular;
    model.obstacleMotion(p.obstacle, &position, &linear, &angular);
    const bool ball = p.obstacle < n_planes + n_spheres;
    for (int e = 0; e < (ball ? 3 : 6); ++e) {
      const auto [vl, wl, dc, dw] = twistBasis(6 + e);
      double delta;
      if (p.field) {  // the obstacle's point moves in the link's field, and J(c) with it
        const Vec3 dpoint = dc + dw.cross(st.point - position);
        const Vec3 dn = st.C * dpoint, da = Vec3(st.W * ws).cross(dpoint);
        delta = -k * (st.n.dot(dpoint) * a.dot(st.n) + st.d * (da.dot(st.n) + a.dot(dn)));
      } else {  // the box moves under the link point
        const Vec3 drel = -dc - dw.cross(st.point - position), dn = dw.cross(st.n) + st.C * drel;
        delta = k * (st.n.dot(drel) * a.dot(st.n) + st.d * a.dot(dn));
      }
      grad_obstacles[6 * p.obstacle + e] -= delta;
    }
  }
  // the edge crossings: the box's edge moves under the link's, J_i ws's for a's points alone
  for (const PdEdgeTerm& t : linkBoxEdges(model, sk, ad.data)) {
    const Eigen::Matrix<double, 12, 1> a = edgeTermMotion(sk, ad.data, t, ws);
    const double slope = t.g.dot(a);
    grad_k -= t.d * slope;
    Vec3 position, linear, angular;
    model.obstacleMotion(t.obstacle, &position, &linear, &angular);
    for (int e = 0; e < 6; ++e) {
      const auto [vl, wl, dc, dw] = twistBasis(6 + e);
      Eigen::Matrix<double, 12, 1> dx = Eigen::Matrix<double, 12, 1>::Zero();
      for (int i = 2; i < 4; ++i) dx.segment<3>(3 * i) = dc + dw.cross(t.x[i] - position);
      grad_obstacles[6 * t.obstacle + e] -= k * (t.g.dot(dx) * slope + t.d * a.dot(t.H * dx));
    }
  }
  // the lagged friction: its normal forces, normals, material points and references, chained to the start's
  // link twist (then the joints) and the obstacle's pose
  for (const PdLinkObstacleFriction& f : lagged.obstacle_friction) {
    const LinkFrictionCotangent g = linkFrictionCotangent(model, sk, ad.data, sk.shapes[f.shape].joint, f.local,
                                                          f.normal, f.lambda, f.reference, Vec3::Zero(), ws);
    per_mu += g.per_mu;
    if (!(mu > 0.0)) continue;
    Eigen::Matrix<double, 10, 1> by_lagged;
    by_lagged << g.lambda, g.normal, g.local, g.point;
    const Eigen::Matrix<double, 12, 1> cot = -f.lagged.transpose() * by_lagged;
    gs0 += f.jv0.transpose() * cot.head<3>() + f.w0.transpose() * cot.segment<3>(3);
    if (f.obstacle >= n_planes) grad_obstacles.segment<6>(6 * f.obstacle) += cot.tail<6>();
  }
  grad_k += mu * per_mu / k;  // friction's normal forces are k times the start's depths
  return {grad_k, per_mu};
}

}  // namespace deformable
}  // namespace rigidiff
