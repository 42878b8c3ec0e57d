// The contacts of deformable surface vertices with the links' shapes of a skeleton (pd_skeleton.hpp): the
// shapes' signed distances, the penalty k/2 d^2 and the lagged friction, with their exact Hessians over
// (x, s).
//
// For a vertex at x and a link posed by the joint coordinates s, the distance d(x, s) = phi(pose(s)^-1 x) has
// the gradient (n, -J^T n), J the velocity of the link's material point at x per joint velocity (columns
// v_j + w_j x x from the world-origin twists (v_j, w_j) of the chain's dofs), and the Hessian
//   xx: C,   x s_j: -C J_j + w_j x n,   s_i s_j (i an ancestor of j, or j itself): J_i^T C J_j + n . (w_j x J_i),
// C the distance field's Hessian, since a twist column moves with its ancestors: dS_j/ds_i = [S_i, S_j]. The
// material point p(s) = pose(s) p_local that friction follows has d^2 p / ds_i ds_j = w_i x J_j(p) (i an
// ancestor of j).
#include <cmath>

#include "rigidiff/algorithm/jacobian.hpp"
#include "rigidiff/algorithm/kinematics.hpp"
#include "rigidiff/algorithm/point_jacobian.hpp"
#include "rigidiff/deformable/pd_hull.hpp"
#include "rigidiff/deformable/pd_link_holding.hpp"
#include "rigidiff/deformable/pd_skeleton.hpp"
#include "rigidiff/macros.hpp"

namespace rigidiff {
namespace deformable {
namespace {

// the signed distance of p to a shape centred at its frame's origin, with the normal and Hessian (local frame);
// a hull may report a distance of at least reach as a bound without them
double localDistance(const PdLinkShape& shape, const Vec3& p, double reach, Vec3* n, Mat3* C) {
  if (shape.kind == PdShapeKind::Box) return boxDistance(shape.size, p, n, C);
  if (shape.kind == PdShapeKind::Hull) return hullDistance(*shape.hull, p, reach, n, C);
  C->setZero();
  // a sphere, or a capsule: the distance to its axis segment [-half, half] along z minus the radius
  Vec3 r = p;
  bool on_axis = false;
  if (shape.kind == PdShapeKind::Capsule) {
    const double t = std::max(-shape.size[1], std::min(shape.size[1], p[2]));
    on_axis = t == p[2];
    r[2] -= t;
  }
  const double len = r.norm();
  if (!(len > 0.0)) {
    *n = on_axis ? Vec3::UnitX() : Vec3::UnitZ();
    return -shape.size[0];
  }
  *n = r / len;
  *C = (Mat3::Identity() - *n * n->transpose()) / len;
  if (on_axis) C->row(2).setZero(), C->col(2).setZero();  // straight along the axis
  return len - shape.size[0];
}

SE3 shapePose(const PdSkeletons& sk, const Data& data, int k) {
  return data.oMi[sk.shapes[k].joint] * sk.shapes[k].placement;
}

}  // namespace

LinkSlip linkSlip(const PdModel& model, const Vec3& normal, const Vec3& local, const SE3& pose, const Vec3& x) {
  LinkSlip s;
  const double eps = model.friction_velocity * model.dt;
  s.phi = pose.actPoint(local);
  s.r = x - s.phi;
  s.u = s.r - normal * normal.dot(s.r);
  s.y = s.u.norm();
  if (s.y < eps) {
    s.f0 = -s.y * s.y * s.y / (3.0 * eps * eps) + s.y * s.y / eps + eps / 3.0;
    s.f1_y = -s.y / (eps * eps) + 2.0 / eps;
    // c2 u u^T has the size |u| / eps^2: zero at u = 0 (where 1 / |u| would make it inf times 0)
    s.c2 = s.y > 0.0 ? -1.0 / (eps * eps * s.y) : 0.0;
  } else {
    s.f0 = s.y;
    s.f1_y = 1.0 / s.y;
    s.c2 = -1.0 / (s.y * s.y * s.y);
  }
  return s;
}

double boxDistance(const Vec3& half, const Vec3& p, Vec3* n, Mat3* C) {
  C->setZero();
  const Vec3 excess = p.cwiseAbs() - half;
  const Vec3 sign(p[0] < 0.0 ? -1.0 : 1.0, p[1] < 0.0 ? -1.0 : 1.0, p[2] < 0.0 ? -1.0 : 1.0);
  if ((excess.array() <= 0.0).all()) {  // inside or on the surface: the nearest face's plane
    int j = 0;
    excess.maxCoeff(&j);
    *n = sign[j] * Vec3::Unit(j);
    return excess[j];
  }
  // outside: the distance to the nearest face, edge or corner, curved across the axes it sticks out along
  const Vec3 out = excess.cwiseMax(0.0).cwiseProduct(sign);
  const double d = out.norm();
  *n = out / d;
  for (int a = 0; a < 3; ++a) (*C)(a, a) = excess[a] > 0.0 ? 1.0 / d : 0.0;
  *C -= *n * n->transpose() / d;
  return d;
}

void chainJacobians(const Model& model, const Data& data, int j, const Vec3& x, MatX& J, MatX& W) {
  J.setZero(3, model.nv);
  W.setZero(3, model.nv);
  forChainDofs(model, j, [&](int c) {
    const Vec3 w = data.J.col(c).tail<3>();
    J.col(c) = data.J.col(c).head<3>() + w.cross(x);
    W.col(c) = w;
  });
}

void addTurningTerms(const MatX& A, const MatX& W, const Vec3& n, double scale, bool ancestor_turns, MatX& out) {
  const int nv = static_cast<int>(A.cols());
  for (int i = 0; i < nv; ++i)
    for (int j = i; j < nv; ++j) {
      const int a = ancestor_turns ? j : i, t_col = ancestor_turns ? i : j;
      const double t = scale * n.dot(Vec3(W.col(t_col)).cross(Vec3(A.col(a))));
      out(i, j) += t;
      if (j != i) out(j, i) += t;
    }
}

double linkFrictionTerm(const PdModel& model, const PdSkeletons& sk, const Data& data, int j, const Vec3& local,
                        const Vec3& normal, double lambda, const Vec3& x, Vec3* gx, VecX* gs, MatX* hss,
                        PdCouplingBlock* block) {
  const LinkSlip sl = linkSlip(model, normal, local, data.oMi[j], x);
  const double w = model.friction * lambda;
  if (!(w > 0.0)) return w * sl.f0;
  const Vec3 psi = sl.f1_y * sl.u;
  MatX J, W;
  chainJacobians(sk.model, data, j, sl.phi, J, W);
  if (gx) *gx += w * psi;
  if (gs) *gs -= w * J.transpose() * psi;
  if (!hss) return w * sl.f0;
  const Mat3 P = Mat3::Identity() - normal * normal.transpose();
  const Mat3 Hu = w * (sl.f1_y * P + sl.c2 * sl.u * sl.u.transpose());
  *hss += J.transpose() * Hu * J;
  // dD/dp . d^2 p / ds_i ds_j = -w psi . (w_i x J_j) for i an ancestor of j
  addTurningTerms(J, W, psi, -w, true, *hss);
  if (block) {
    block->xx = Hu;
    block->xs = -Hu * J;
  }
  return w * sl.f0;
}

LinkFrictionCotangent linkFrictionCotangent(const PdModel& model, const PdSkeletons& sk, const Data& data, int j,
                                            const Vec3& local, const Vec3& normal, double lambda, const Vec3& x,
                                            const Vec3& zx, const VecX& ws) {
  const double mu = model.friction;
  const SE3& pose = data.oMi[j];
  const LinkSlip sl = linkSlip(model, normal, local, pose, x);
  MatX J, W;
  chainJacobians(sk.model, data, j, sl.phi, J, W);
  // w^T grad C_c = mu lambda (z_x - J ws) . psi =: mu lambda rel . psi
  const Vec3 psi = sl.f1_y * sl.u, rel = zx - J * ws, omega = W * ws;
  LinkFrictionCotangent g;
  g.per_mu = -lambda * rel.dot(psi);
  if (!(mu > 0.0)) return g;
  const Mat3 Hpsi = sl.f1_y * Mat3::Identity() + sl.c2 * sl.u * sl.u.transpose();  // d psi / d u
  const Mat3 P = Mat3::Identity() - normal * normal.transpose();
  const Vec3 hr = Hpsi * rel;
  // its derivatives with respect to the lagged lambda, material point p (through phi = pose p), normal and x
  g.lambda = mu * rel.dot(psi);
  g.local = pose.R.transpose() * (mu * lambda * (-psi.cross(omega) - P * hr));
  g.normal = -mu * lambda * (normal.dot(sl.r) * hr + hr.dot(normal) * sl.r);
  g.point = mu * lambda * P * hr;
  return g;
}

void checkSkeletonJoints(const Model& model) {
  for (int j = 1; j < model.njoints; ++j) {
    const JointType t = model.joints[j].type;
    RD_CHECK_ARG(t == JointType::Revolute || t == JointType::Prismatic || t == JointType::Translational ||
                     t == JointType::Free || t == JointType::Ball || t == JointType::Planar,
                 "joint '" << model.names[j] << "': projective worlds support revolute, prismatic, universal, "
                           << "translational, free, ball and planar joints only");
  }
}

double linkShapeDistance(const PdSkeletons& sk, const Data& data, int k, const Vec3& x, Vec3* normal, Mat3* curvature,
                         double reach) {
  const SE3 pose = shapePose(sk, data, k);
  Vec3 n = Vec3::Zero();
  Mat3 C = Mat3::Zero();
  const double d = localDistance(sk.shapes[k], pose.R.transpose() * (x - pose.p), reach, &n, &C);
  *normal = pose.R * n;
  *curvature = pose.R * C * pose.R.transpose();
  return d;
}

void linkContacts(const PdModel& model, const PdSkeletons& sk, PdSkeletonData& ad, const Points& X, const VecX& s,
                  std::vector<PdLinkContact>& out) {
  out.clear();
  if (sk.model.nq > 0) {
    forwardKinematics(sk.model, ad.data, s.data());
    computeJointJacobians(sk.model, ad.data, s.data());
  }
  if (linkHoldingEnabled(model, sk)) return;  // the complementarity holds the vertices (pd_link_holding.hpp)
  for (int i = 0; i < model.n; ++i) {
    if (!model.surface[i] || model.free_index[i] < 0) continue;
    const Vec3 x = X.row(i).transpose();
    for (int k = 0; k < static_cast<int>(sk.shapes.size()); ++k) {
      if (sk.shapes[k].joint == 0) continue;  // welded to the world: it touches links alone
      PdLinkContact c;
      c.d = linkShapeDistance(sk, ad.data, k, x, &c.normal, &c.curvature, 0.0);
      if (!(c.d < 0.0)) continue;
      c.vertex = i;
      c.shape = k;
      chainJacobians(sk.model, ad.data, sk.shapes[k].joint, x, c.J, c.W);
      out.push_back(std::move(c));
    }
  }
}

void linkFrictionContacts(const PdModel& model, const PdSkeletons& sk, PdSkeletonData& ad, const Points& q,
                          const VecX& s0, bool always) {
  ad.friction.clear();
  if (!(model.friction > 0.0) && !always) return;
  std::vector<PdLinkContact> contacts;
  linkContacts(model, sk, ad, q, s0, contacts);
  for (const PdLinkContact& c : contacts) {
    const SE3& pose = ad.data.oMi[sk.shapes[c.shape].joint];
    PdLinkFriction f;
    f.vertex = c.vertex;
    f.shape = c.shape;
    f.lambda = -model.contact_stiffness * c.d;
    f.normal = c.normal;
    f.curvature = c.curvature;
    f.local = pose.R.transpose() * (q.row(c.vertex).transpose() - pose.p);
    f.rotation0 = pose.R;
    f.J0 = c.J;
    f.W0 = c.W;
    ad.friction.push_back(std::move(f));
  }
}

double linkCoupling(const PdModel& model, const PdSkeletons& sk, PdSkeletonData& ad, const Points& X, const VecX& s,
                    Points* gx, VecX* gs, MatX* hss, bool hessian) {
  std::vector<PdLinkContact> contacts;
  linkContacts(model, sk, ad, X, s, contacts);
  const double k = model.contact_stiffness;
  const int nv = sk.nv();
  double energy = 0.0;
  if (hessian) ad.blocks.clear();
  for (const PdLinkContact& c : contacts) {
    const Vec3& n = c.normal;
    const VecX Jn = c.J.transpose() * n;
    energy += 0.5 * k * c.d * c.d;
    if (gx) gx->row(c.vertex) += k * c.d * n.transpose();
    if (gs) *gs -= k * c.d * Jn;
    if (!hessian) continue;
    // k (grad d grad d^T + d hess d), grad d = (n, -J^T n)
    PdCouplingBlock b;
    b.vertex = c.vertex;
    b.xx = k * (n * n.transpose() + c.d * c.curvature);
    b.xs = -k * n * Jn.transpose();
    MatX turn = c.W;  // columns w_j x n
    for (int j = 0; j < nv; ++j) turn.col(j) = Vec3(c.W.col(j)).cross(n);
    b.xs += k * c.d * (turn - c.curvature * c.J);
    *hss += k * Jn * Jn.transpose() + k * c.d * (c.J.transpose() * c.curvature * c.J);
    addTurningTerms(c.J, c.W, n, k * c.d, false, *hss);
    ad.blocks.push_back(std::move(b));
  }
  // friction: mu lambda f0(|P (x - p(s))|), p the link's material point under the vertex at the start
  for (const PdLinkFriction& c : ad.friction) {
    const Vec3 x = X.row(c.vertex).transpose();
    Vec3 g = Vec3::Zero();
    PdCouplingBlock b;
    b.vertex = c.vertex;
    energy += linkFrictionTerm(model, sk, ad.data, sk.shapes[c.shape].joint, c.local, c.normal, c.lambda, x,
                               gx ? &g : nullptr, gs, hessian ? hss : nullptr, &b);
    if (gx) gx->row(c.vertex) += g.transpose();
    if (hessian && b.xs.size() > 0) ad.blocks.push_back(std::move(b));
  }
  energy += linkObstacleCoupling(model, sk, ad, gs, hessian ? hss : nullptr);
  energy += linkLinkCoupling(model, sk, ad, gs, hessian ? hss : nullptr);
  return energy;
}

double linkFrictionCotangents(const PdModel& model, const PdSkeletons& sk, const PdSkeletonData& ad, const Points& X,
                              const Points& Z, const VecX& ws, Points& gq, VecX& gs0) {
  const double k = model.contact_stiffness, mu = model.friction;
  double per_mu = 0.0;
  for (const PdLinkFriction& c : ad.friction) {
    const LinkFrictionCotangent g = linkFrictionCotangent(model, sk, ad.data, sk.shapes[c.shape].joint, c.local,
                                                          c.normal, c.lambda, X.row(c.vertex).transpose(),
                                                          Z.row(c.vertex).transpose(), ws);
    per_mu += g.per_mu;
    if (!(mu > 0.0)) continue;
    // chained to the start: lambda = -k d(x0, s0), n = grad_x d, local = R0^T (x0 - p0)
    const Vec3 gx = -k * g.lambda * c.normal + c.curvature * g.normal + c.rotation0 * g.local;
    gq.row(c.vertex) -= gx.transpose();
    gs0 -= k * g.lambda * (c.J0.transpose() * c.normal) - c.J0.transpose() * (c.curvature * g.normal) +
           c.W0.transpose() * c.normal.cross(g.normal) - c.J0.transpose() * (c.rotation0 * g.local);
  }
  return per_mu;
}

}  // namespace deformable
}  // namespace rigidiff
