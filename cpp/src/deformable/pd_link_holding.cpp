// The complementarity contact's holds on links (pd_link_holding.hpp): the constraints E^T z = e of the coupled step
// (the obstacles' pairs of data.active and the links' of ad.holds), their projector, the inverse of the step's
// preconditioner on them, the active-set rule for the links' pairs, and the adjoint's chain through their planes.
//
// The preconditioner P = blockdiag(A, B) (A = I3 x L the PD matrix, B the joints' block) restricted to E^T u = 0 is
// P^-1 - P^-1 E S^-1 E^T P^-1, S = E^T P^-1 E: A^-1's columns cost a scalar back-substitution per pair (as in
// pd_complementarity.cpp) and B^-1's a small dense solve, so neither factor changes with the set.
#include "rigidiff/deformable/pd_link_holding.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "rigidiff/algorithm/jacobian.hpp"
#include "rigidiff/algorithm/kinematics.hpp"
#include "rigidiff/deformable/pd_complementarity.hpp"
#include "rigidiff/world/floating_base_chart.hpp"

namespace rigidiff {
namespace deformable {
namespace {

constexpr double kHoldFar = std::numeric_limits<double>::infinity();

void holdKinematics(const PdSkeletons& sk, Data& data, const VecX& s) {
  if (sk.model.nq == 0) return;
  forwardKinematics(sk.model, data, s.data());
  computeJointJacobians(sk.model, data, s.data());
}

// The plane of vertex q on shape k (the kinematics at s0 in data): n, G = J^T n, h = n . q - d; false (and nothing
// else set) when q is at least `reach` from the shape
bool holdStartPlane(const PdSkeletons& sk, const Data& data, int k, const Vec3& q, double reach, Vec3& n, VecX& G,
                double& h, double& d) {
  Mat3 C;
  d = linkShapeDistance(sk, data, k, q, &n, &C, reach);
  if (!(d < reach)) return false;
  MatX J, W;
  chainJacobians(sk.model, data, sk.shapes[k].joint, q, J, W);
  G = J.transpose() * n;
  h = n.dot(q) - d;
  return true;
}

void holdPush(PdLinkHolds& holds, int i, int k, const Vec3& n, const VecX& G, double h) {
  // a pair whose constraint repeats one of the vertex's (two shapes of a link sharing a face, as a mesh's convex
  // parts do): the same plane, held once
  for (int p = holds.size() - 1; p >= 0 && holds.vertex[p] == i; --p) {
    const double norms = std::sqrt((1.0 + G.squaredNorm()) * (1.0 + holds.coupling[p].squaredNorm()));
    if (n.dot(holds.normal[p]) + G.dot(holds.coupling[p]) > (1.0 - 1e-12) * norms &&
        std::abs(h - holds.offset[p]) <= kContactGap)
      return;
  }
  holds.vertex.push_back(i), holds.shape.push_back(k), holds.normal.push_back(n), holds.coupling.push_back(G);
  holds.offset.push_back(h);
}

Vec3 holdGather(const PdModel& model, const VecX& z, int i) {
  const int nf = model.free_count, r = model.free_index[i];
  return Vec3(z[r], z[nf + r], z[2 * nf + r]);
}

void holdAdd(const PdModel& model, const Vec3& value, int i, VecX& z) {
  const int nf = model.free_count, r = model.free_index[i];
  for (int c = 0; c < 3; ++c) z[c * nf + r] += value[c];
}

// The constraints' indices grouped by vertex
std::vector<std::vector<int>> holdGroups(const std::vector<int>& vertex) {
  std::vector<int> order(vertex.size());
  for (std::size_t p = 0; p < order.size(); ++p) order[p] = static_cast<int>(p);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return vertex[a] < vertex[b]; });
  std::vector<std::vector<int>> groups;
  for (std::size_t p = 0; p < order.size(); ++p) {
    if (p == 0 || vertex[order[p]] != vertex[order[p - 1]]) groups.emplace_back();
    groups.back().push_back(order[p]);
  }
  return groups;
}

// The multipliers of a vertex's rows r (N a = r in least squares) for the constraints of one group
Eigen::VectorXd holdMultipliers(const PdLinkHolds& H, const std::vector<int>& group, const Vec3& r) {
  Eigen::Matrix3Xd N(3, group.size());
  for (std::size_t p = 0; p < group.size(); ++p) N.col(p) = H.all_normal[group[p]];
  return (N.transpose() * N).ldlt().solve(N.transpose() * r);
}

std::vector<int> holdCode(const PdSkeletons& sk, const PdLinkHolds& H) {
  std::vector<int> out;
  for (int p = 0; p < H.size(); ++p) out.push_back(H.vertex[p] * static_cast<int>(sk.shapes.size()) + H.shape[p]);
  return out;
}

}  // namespace

bool linkHoldingEnabled(const PdModel& model, const PdSkeletons& sk) {
  return model.contact_model == PdContactModel::Complementarity && !sk.shapes.empty();
}

void linkHoldsStart(const PdModel& model, const PdSkeletons& sk, PdSkeletonData& ad, const Points& q, const VecX& s0,
                    const Points* guess_x, const VecX* guess_s) {
  PdLinkHolds& H = ad.holds;
  H.clear();
  H.enabled = linkHoldingEnabled(model, sk);
  if (!H.enabled) return;
  holdKinematics(sk, ad.data, s0);
  const bool guessed = guess_x && guess_x->rows() == model.n && guess_s && guess_s->size() == s0.size();
  VecX moved;  // the guess's displacement from s0
  if (guessed && sk.rotations) {
    moved.resize(sk.nv());
    stepDisplacement(sk.model, s0.data(), guess_s->data(), moved.data());
  } else if (guessed) {
    moved = *guess_s - s0;
  }
  for (int i = 0; i < model.n; ++i) {
    if (!model.surface[i] || model.free_index[i] < 0) continue;
    for (int k = 0; k < static_cast<int>(sk.shapes.size()); ++k) {
      if (sk.shapes[k].joint == 0) continue;
      Vec3 n;
      VecX G;
      double h, d;
      // (a far vertex holds only at a guess, which may put it on the plane of a link it met during the step)
      if (!holdStartPlane(sk, ad.data, k, q.row(i).transpose(), guessed ? kHoldFar : 1e-6, n, G, h, d)) continue;
      if (guessed) {
        const double gap = n.dot(guess_x->row(i).transpose()) - G.dot(moved) - h;
        if (std::abs(gap) <= kContactGap) holdPush(H, i, k, n, G, h);
      } else if (d <= kContactGap) {
        holdPush(H, i, k, n, G, h);
      }
    }
  }
}

void linkHoldsFactorise(const PdModel& model, const PdData& data, PdSkeletonData& ad) {
  PdLinkHolds& H = ad.holds;
  const PdActiveSet& active = data.active;
  const int a = active.size(), c = a + H.size(), nf = model.free_count, nv = static_cast<int>(ad.u0.size());
  H.all_vertex = active.vertex;
  H.all_vertex.insert(H.all_vertex.end(), H.vertex.begin(), H.vertex.end());
  H.all_normal = active.normal;
  H.all_normal.insert(H.all_normal.end(), H.normal.begin(), H.normal.end());
  H.all_coupling = MatX::Zero(nv, c);
  for (int p = 0; p < H.size(); ++p) H.all_coupling.col(a + p) = H.coupling[p];
  if (H.size() == 0) return;  // the obstacles' pairs alone: pd_complementarity.cpp's solves (the lists for forces)
  MatX gram = H.all_coupling.transpose() * H.all_coupling;
  for (int p = 0; p < c; ++p)
    for (int r = 0; r < c; ++r)
      if (H.all_vertex[p] == H.all_vertex[r]) gram(p, r) += H.all_normal[p].dot(H.all_normal[r]);
  H.gram.compute(gram);
  if (c && (H.gram.info() != Eigen::Success ||
            !(H.gram.vectorD().cwiseAbs().minCoeff() > 1e-12 * H.gram.vectorD().cwiseAbs().maxCoeff())))
    throw std::runtime_error("the complementarity contact's active set is degenerate: a vertex is held on two "
                             "planes (of obstacles or links) whose normals there are parallel");
  MatX unit = MatX::Zero(nf, c);
  for (int p = 0; p < c; ++p) unit(model.free_index[H.all_vertex[p]], p) = 1.0;
  H.columns = c ? MatX(data.factor.solve(unit)) : MatX(nf, 0);
  if (ad.hss.rows() == nv) linkHoldsSchur(model, ad);  // (the joints' block of the last build, until the next)
}

void linkHoldsSchur(const PdModel& model, PdSkeletonData& ad) {
  PdLinkHolds& H = ad.holds;
  const int c = static_cast<int>(H.all_vertex.size()), nv = static_cast<int>(H.all_coupling.rows());
  if (c == 0) return;
  H.joint_columns = nv > 0 ? MatX(ad.preconditioner.solve(H.all_coupling)) : MatX(0, c);
  MatX S = H.all_coupling.transpose() * H.joint_columns;
  for (int p = 0; p < c; ++p)
    for (int r = 0; r < c; ++r)
      S(p, r) += H.all_normal[p].dot(H.all_normal[r]) * H.columns(model.free_index[H.all_vertex[p]], r);
  H.schur.compute(S);
}

void linkHoldsProject(const PdModel& model, const PdSkeletonData& ad, VecX& z) {
  const PdLinkHolds& H = ad.holds;
  const int c = static_cast<int>(H.all_vertex.size()), nf = model.free_count;
  if (c == 0) return;
  const int nv = static_cast<int>(z.size()) - 3 * nf;
  VecX e = -H.all_coupling.transpose() * z.tail(nv);
  for (int p = 0; p < c; ++p) e[p] += H.all_normal[p].dot(holdGather(model, z, H.all_vertex[p]));
  const VecX a = H.gram.solve(e);
  for (int p = 0; p < c; ++p) holdAdd(model, -a[p] * H.all_normal[p], H.all_vertex[p], z);
  z.tail(nv) += H.all_coupling * a;
}

VecX linkHoldsPrecondition(const PdModel& model, const PdData& data, const PdSkeletonData& ad, const VecX& g) {
  const PdLinkHolds& H = ad.holds;
  const int c = static_cast<int>(H.all_vertex.size()), nf = model.free_count;
  const int nv = static_cast<int>(g.size()) - 3 * nf;
  VecX out(g.size());
  out.head(3 * nf) = pdSolve(model, data, g.head(3 * nf));
  if (nv > 0) out.tail(nv) = ad.preconditioner.solve(g.tail(nv));
  if (c == 0) return out;
  VecX e = -H.all_coupling.transpose() * out.tail(nv);
  for (int p = 0; p < c; ++p) e[p] += H.all_normal[p].dot(holdGather(model, out, H.all_vertex[p]));
  const VecX a = H.schur.solve(e);
  for (int k = 0; k < 3; ++k) {
    VecX weights(c);
    for (int p = 0; p < c; ++p) weights[p] = a[p] * H.all_normal[p][k];
    out.segment(k * nf, nf).noalias() -= H.columns * weights;
  }
  if (nv > 0) out.tail(nv).noalias() += H.joint_columns * a;
  // the subtraction leaves rounding along the constraints: remove it, so iterates stay exactly on them
  linkHoldsProject(model, ad, out);
  return out;
}

void linkHoldsPlace(const PdModel& model, const PdData& data, const PdSkeletons& sk, const PdSkeletonData& ad,
                    const VecX& s0, VecX& z) {
  const PdLinkHolds& H = ad.holds;
  const int a = data.active.size(), nf = model.free_count;
  const VecX ds = pdSkeletonDisplacement(sk, s0, z.tail(z.size() - 3 * nf));
  for (const std::vector<int>& group : holdGroups(H.all_vertex)) {
    const int i = H.all_vertex[group[0]], m = static_cast<int>(group.size());
    Eigen::Matrix3Xd N(3, m);
    Eigen::VectorXd target(m);
    for (int p = 0; p < m; ++p) {
      const int e = group[p];
      N.col(p) = H.all_normal[e];
      target[p] = e < a ? data.active.offset[e] : H.offset[e - a] + H.coupling[e - a].dot(ds);
    }
    const Vec3 x = holdGather(model, z, i);
    holdAdd(model, N * (N.transpose() * N).ldlt().solve(target - N.transpose() * x), i, z);
  }
}

void linkHoldsForces(const PdModel& model, PdData& data, PdSkeletonData& ad, const VecX& g) {
  PdLinkHolds& H = ad.holds;
  const int a = data.active.size();
  data.active_forces.resize(a);
  H.forces.resize(H.size());
  for (const std::vector<int>& group : holdGroups(H.all_vertex)) {
    const Eigen::VectorXd lambda = holdMultipliers(H, group, holdGather(model, g, H.all_vertex[group[0]]));
    for (std::size_t p = 0; p < group.size(); ++p)
      (group[p] < a ? data.active_forces[group[p]] : H.forces[group[p] - a]) = lambda[p];
  }
}

int linkHoldsUpdate(const PdModel& model, const PdSkeletons& sk, PdSkeletonData& ad, const Points& q, const VecX& s0,
                    const Points& x, const VecX& s, double force_tolerance, std::vector<std::vector<int>>& seen) {
  PdLinkHolds& H = ad.holds;
  const int shapes = static_cast<int>(sk.shapes.size());
  if (seen.empty()) seen.push_back(holdCode(sk, H));
  // (vertex, shape, the kept pair's index or -1 for a new one)
  std::vector<std::array<int, 3>> kept, added;
  std::vector<char> held(static_cast<std::size_t>(model.n) * shapes, 0);
  for (int p = 0; p < H.size(); ++p) {
    held[static_cast<std::size_t>(H.vertex[p]) * shapes + H.shape[p]] = 1;
    kept.push_back({H.vertex[p], H.shape[p], p});
  }
  holdKinematics(sk, ad.data, s);
  for (int i = 0; i < model.n; ++i) {
    if (!model.surface[i] || model.free_index[i] < 0) continue;
    for (int k = 0; k < shapes; ++k) {
      if (sk.shapes[k].joint == 0 || held[static_cast<std::size_t>(i) * shapes + k]) continue;
      Vec3 n;
      Mat3 C;
      if (linkShapeDistance(sk, ad.data, k, x.row(i).transpose(), &n, &C, 0.0) < -kContactGap)
        added.push_back({i, k, -1});
    }
  }
  auto build = [&](bool remove_pulling, int drop) {
    std::vector<std::array<int, 3>> pairs;
    for (const auto& e : kept)
      if (e[2] != drop && (!remove_pulling || H.forces[e[2]] >= -force_tolerance)) pairs.push_back(e);
    pairs.insert(pairs.end(), added.begin(), added.end());
    std::sort(pairs.begin(), pairs.end());
    return pairs;
  };
  auto code = [&](const std::vector<std::array<int, 3>>& pairs) {
    std::vector<int> out;
    for (const auto& e : pairs) out.push_back(e[0] * shapes + e[1]);
    return out;
  };
  std::vector<std::array<int, 3>> next = build(true, -2);
  if (code(next) == holdCode(sk, H)) return 0;
  if (std::find(seen.begin(), seen.end(), code(next)) != seen.end()) {
    // a cycle: add the new pairs and remove none, or if that changes nothing, remove only the most pulling pair
    next = build(false, -2);
    if (code(next) == holdCode(sk, H) && H.size()) {
      int worst = 0;
      H.forces.minCoeff(&worst);
      next = build(false, worst);
    }
    if (std::find(seen.begin(), seen.end(), code(next)) != seen.end()) return -1;
  }
  seen.push_back(code(next));
  PdLinkHolds previous = H;
  H.clear();
  holdKinematics(sk, ad.data, s0);
  for (const auto& [i, k, p] : next) {
    if (p >= 0) {
      holdPush(H, i, k, previous.normal[p], previous.coupling[p], previous.offset[p]);
      continue;
    }
    Vec3 n;  // a new pair: its plane from the start
    VecX G;
    double h, d;
    holdStartPlane(sk, ad.data, k, q.row(i).transpose(), kHoldFar, n, G, h, d);
    holdPush(H, i, k, n, G, h);
  }
  return 1;
}

VecX linkHoldsObstacleResidual(const PdModel& model, const PdData& data, const PdSkeletonData& ad,
                               const VecX& residual) {
  const PdLinkHolds& H = ad.holds;
  const int a = data.active.size();
  VecX out = residual.head(3 * model.free_count);
  for (const std::vector<int>& group : holdGroups(H.all_vertex)) {
    const int i = H.all_vertex[group[0]];
    const Eigen::VectorXd m = holdMultipliers(H, group, holdGather(model, residual, i));
    for (std::size_t p = 0; p < group.size(); ++p)
      if (group[p] >= a) holdAdd(model, -m[p] * H.all_normal[group[p]], i, out);
  }
  return out;
}

void linkHoldsCotangents(const PdModel& model, const PdData& data, const PdSkeletons& sk, PdSkeletonData& ad,
                         const VecX& w, const VecX& residual, Points& gq, VecX& gs0) {
  PdLinkHolds& H = ad.holds;
  if (H.size() == 0) return;
  if (H.forces.size() != H.size()) throw std::logic_error("step_vjp needs the normal forces of a converged step");
  const int a = data.active.size(), nv = sk.nv();
  VecX mu(H.all_vertex.size());
  for (const std::vector<int>& group : holdGroups(H.all_vertex)) {
    const Eigen::VectorXd m = holdMultipliers(H, group, holdGather(model, residual, H.all_vertex[group[0]]));
    for (std::size_t p = 0; p < group.size(); ++p) mu[group[p]] = m[p];
  }
  // each pair's terms lambda w . E_p - mu z . E_p + mu e_p as phi(q_i, s0) = n . a - n . J(q_i) b + mu h, with
  // a = lambda w_i - mu x_i and b = lambda w_s - mu ds: n and d move with q_i (C, n) and with each joint's twist
  // (the shape turning, w_j x n, and the point sliding back over it, -J_j), and J's column j with an ancestor's
  // twist j' (or another dof of j's joint) by w_j' x J_j - w_j x J_j' (the fixed point's velocity)
  const VecX ws = w.tail(nv), ds = ad.ds;
  Data kin(sk.model);  // (ad.data keeps the solution's kinematics)
  holdKinematics(sk, kin, ad.s0);
  for (int p = 0; p < H.size(); ++p) {
    const int i = H.vertex[p];
    const double lambda = H.forces[p], m = mu[a + p];
    const Vec3 q = data.q.row(i).transpose(), x = data.x.row(i).transpose();
    Vec3 n;
    Mat3 C;
    linkShapeDistance(sk, kin, H.shape[p], q, &n, &C);
    MatX J, W;
    chainJacobians(sk.model, kin, sk.shapes[H.shape[p]].joint, q, J, W);
    const Vec3 av = lambda * holdGather(model, w, i) - m * x;
    const VecX b = lambda * ws - m * ds;
    const Vec3 V = J * b, omega = W * b, r = av - V + m * q, Cr = C * r, nr = n.cross(r);
    gq.row(i) += (Cr - n.cross(omega)).transpose();
    // (with free, ball or planar joints the unknown is ds itself: h's -d(s0) keeps its G, which s - s0 cancels else)
    if (sk.rotations) gs0 += m * (J.transpose() * n);
    for (int j = 0; j < nv; ++j) {
      gs0[j] += Vec3(W.col(j)).dot(nr) - Vec3(J.col(j)).dot(Cr);
      for (int l = 0; l < nv; ++l)  // (a joint's own dofs move each other's columns: a free joint's frame turns)
        if (l > j || (l < j && sk.model.dof_joint[l] == sk.model.dof_joint[j]))
          gs0[j] -= b[l] * (n.dot(Vec3(W.col(j)).cross(Vec3(J.col(l)))) - n.dot(Vec3(W.col(l)).cross(Vec3(J.col(j)))));
    }
  }
}

void linkHoldsFriction(const PdModel& model, const PdSkeletons& sk, PdSkeletonData& ad, const PdData& data,
                       const Points& q, const VecX& s0, bool always) {
  if (!linkHoldingEnabled(model, sk) || (!(model.friction > 0.0) && !always)) return;
  holdKinematics(sk, ad.data, s0);
  for (int i = 0; i < model.n; ++i) {
    if (!model.surface[i] || model.free_index[i] < 0) continue;
    const Vec3 x0 = q.row(i).transpose();
    for (int k = 0; k < static_cast<int>(sk.shapes.size()); ++k) {
      const int j = sk.shapes[k].joint;
      if (j == 0) continue;
      PdLinkFriction f;
      if (!(linkShapeDistance(sk, ad.data, k, x0, &f.normal, &f.curvature, 1e-6) <= kContactGap)) continue;
      f.lambda = f.normal.dot(data.start_gradient.row(i).transpose());
      if (!(f.lambda > 0.0)) continue;
      const SE3& pose = ad.data.oMi[j];
      f.vertex = i;
      f.shape = k;
      f.held = true;
      f.local = pose.R.transpose() * (x0 - pose.p);
      f.rotation0 = pose.R;
      chainJacobians(sk.model, ad.data, j, x0, f.J0, f.W0);
      ad.friction.push_back(std::move(f));
    }
  }
}

double linkHoldsFrictionCotangents(const PdModel& model, PdData& data, const PdSkeletons& sk, const PdSkeletonData& ad,
                                   const Points& Z, const VecX& ws, Points& gq, Points& gv, Points& gf, VecX& gs0,
                                   VecX& gE, VecX& gnu) {
  PdSkeletonData start(sk.model);
  linkHoldsFriction(model, sk, start, data, data.q, ad.s0, true);
  if (start.friction.empty()) return 0.0;
  holdKinematics(sk, start.data, ad.s);  // (linkFrictionCotangent reads the solution's kinematics)
  double per_mu = 0.0;
  Points W = Points::Zero(model.n, 3);  // the start gradient's cotangent, through the normal forces
  for (const PdLinkFriction& c : start.friction) {
    const int i = c.vertex;
    const LinkFrictionCotangent g =
        linkFrictionCotangent(model, sk, start.data, sk.shapes[c.shape].joint, c.local, c.normal, c.lambda,
                              data.x.row(i).transpose(), Z.row(i).transpose(), ws);
    per_mu += g.per_mu;
    if (!(model.friction > 0.0)) continue;
    // (g holds derivatives of w^T grad C, minus the cotangents) chained to the start: lambda = n . grad g_i(q),
    // n = grad_x d(q, s0) (turning with each joint's twist and sliding by -J_j), local = R0^T (q - p0)
    W.row(i) -= g.lambda * c.normal.transpose();
    const Vec3 gn = g.normal + g.lambda * data.start_gradient.row(i).transpose(), gl = c.rotation0 * g.local;
    gq.row(i) -= (c.curvature * gn + gl).transpose();
    gs0 -= c.W0.transpose() * c.normal.cross(gn) - c.J0.transpose() * (c.curvature * gn + gl);
  }
  if (model.friction > 0.0) pdStartGradientCotangents(model, data, W, gq, gv, gf, gE, gnu);
  return per_mu;
}

}  // namespace deformable
}  // namespace rigidiff
