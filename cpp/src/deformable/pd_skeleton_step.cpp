// The coupled step of deformable bodies and skeletons (pd_skeleton.hpp): Newton's method on G(x, s) over the
// stacked vector (free vertices, joint coordinates), each direction from conjugate gradients on the exact
// Hessian preconditioned by blockdiag(A^-1, the joints' block^-1). With free, ball or planar joints the joints'
// unknown is their displacement ds in the step's chart (pd_floating_base.cpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "rigidiff/algorithm/crba.hpp"
#include "rigidiff/algorithm/rnea.hpp"
#include "rigidiff/deformable/pd_complementarity.hpp"
#include "rigidiff/deformable/pd_lbfgs.hpp"
#include "rigidiff/deformable/pd_link_holding.hpp"
#include "rigidiff/deformable/pd_skeleton.hpp"
#include "rigidiff/macros.hpp"
#include "rigidiff/world/floating_base_chart.hpp"
#include "rigidiff/world/free_joint_motion.hpp"

namespace rigidiff {
namespace deformable {
namespace {

// S of pd_skeleton.hpp at the displacement ds (configuration s) and its gradient in ds into g (nv)
double jointPotential(const PdModel& model, const PdSkeletons& sk, const PdSkeletonData& ad, const VecX& ds,
                      const VecX& s, VecX& g) {
  const double h = model.dt, h2 = h * h;
  const VecX u = ds - h * ad.u_step, Mu = ad.M * u, stretch = ad.spring0 + ds;
  const VecX& D = sk.model.damping;
  const VecX& K = sk.model.stiffness;
  g = Mu / h2 - ad.tau_c + ad.bias + D.cwiseProduct(ds) / h + K.cwiseProduct(stretch);
  return 0.5 * u.dot(Mu) / h2 + (ad.bias - ad.tau_c).dot(ds) + 0.5 * ds.dot(D.cwiseProduct(ds)) / h +
         0.5 * stretch.dot(K.cwiseProduct(stretch)) + jointLimitPenaltyInStep(sk, s, ds, &g, nullptr);
}

// M / h^2 + D / h + K + the limits' penalty at s (displacement ds): the joints' own block of the Hessian
MatX jointBlock(const PdModel& model, const PdSkeletons& sk, const PdSkeletonData& ad, const VecX& s,
                const VecX& ds) {
  MatX H = ad.M / (model.dt * model.dt);
  H.diagonal() += sk.model.damping / model.dt + sk.model.stiffness;
  jointLimitPenaltyInStep(sk, s, ds, nullptr, &H);
  return H;
}

void checkFiniteVector(const VecX& a, const char* name) {
  for (int i = 0; i < a.size(); ++i)
    RD_CHECK_ARG(std::isfinite(a[i]), name << "[" << i << "] is not finite (" << a[i] << ")");
}

// Removes the components of v (stacked as pdSolve, then the joints) along the held constraints: the vertex part's
// along the obstacles' normals, or with links holding vertices, the whole along every constraint's column.
void projectVertices(const PdModel& model, const PdData& data, const PdSkeletonData& ad, VecX& v) {
  if (ad.holds.size()) return linkHoldsProject(model, ad, v);
  VecX head = v.head(3 * model.free_count);
  pdProjectOnActiveSet(model, data.active, head);
  v.head(3 * model.free_count) = head;
}

VecX gatherFree(const PdModel& model, const Points& X) {
  const int nf = model.free_count;
  VecX out(3 * nf);
  for (int i = 0; i < model.n; ++i)
    if (model.free_index[i] >= 0)
      for (int c = 0; c < 3; ++c) out[c * nf + model.free_index[i]] = X(i, c);
  return out;
}

}  // namespace

void pdSkeletonHessianBuild(const PdModel& model, PdData& data, const PdSkeletons& sk, PdSkeletonData& ad,
                            const Points& X, const VecX& t) {
  pdHessianBuild(model, X, data.hessian, nullptr, &data.sample_cache);  // (the gradient's SVDs, at the same X)
  const VecX s = pdSkeletonConfiguration(sk, ad.s0, t);
  const MatX own = jointBlock(model, sk, ad, s, pdSkeletonDisplacement(sk, ad.s0, t));
  ad.hss = own;
  if (!sk.rotations) {
    linkCoupling(model, sk, ad, X, s, nullptr, nullptr, &ad.hss, true);
  } else {
    // the contacts' terms come in the chain chart at s: carried into ds (the mixed blocks by first order alone)
    const int nv = sk.nv();
    MatX hc = MatX::Zero(nv, nv), A;
    VecX gc = VecX::Zero(nv);
    linkCoupling(model, sk, ad, X, s, nullptr, &gc, &hc, true);
    chainChartHessianToDisplacement(sk.model, t.data(), gc, hc);
    displacementInverseJacobian(sk.model, t.data(), A);
    for (PdCouplingBlock& b : ad.blocks) b.xs = (b.xs * A).eval();
    ad.hss += hc;
  }
  ad.preconditioner.compute(ad.hss);
  if (ad.preconditioner.info() != Eigen::Success) ad.preconditioner.compute(own);
  if (ad.holds.size()) linkHoldsSchur(model, ad);
}

VecX pdSkeletonHessianProduct(const PdModel& model, const PdData& data, const PdSkeletonData& ad, const VecX& zv,
                              Points& Z, bool project) {
  const int nf = model.free_count, nv = static_cast<int>(ad.hss.rows());
  VecX out(3 * nf + nv);
  out.head(3 * nf) = pdHessianFree(model, data, data.hessian, zv.head(3 * nf), Z);
  const auto zs = zv.tail(nv);
  out.tail(nv) = ad.hss * zs;
  for (const PdCouplingBlock& b : ad.blocks) {
    const int r = model.free_index[b.vertex];
    const Vec3 zx(zv[r], zv[nf + r], zv[2 * nf + r]);
    const Vec3 hx = b.xx * zx + b.xs * zs;
    for (int c = 0; c < 3; ++c) out[c * nf + r] += hx[c];
    out.tail(nv) += b.xs.transpose() * zx;
  }
  if (project && (data.active.size() || ad.holds.size())) projectVertices(model, data, ad, out);
  return out;
}

VecX pdSkeletonPrecondition(const PdModel& model, const PdData& data, const PdSkeletonData& ad, const VecX& g) {
  const int nf = model.free_count, nv = static_cast<int>(ad.hss.rows());
  if (ad.holds.size()) return linkHoldsPrecondition(model, data, ad, g);
  VecX out(3 * nf + nv);
  out.head(3 * nf) = pdConstrainedSolve(model, data, g.head(3 * nf));
  if (nv > 0) out.tail(nv) = ad.preconditioner.solve(g.tail(nv));
  return out;
}

void pdSkeletonStep(const PdModel& model, PdData& data, const PdSkeletons& sk, PdSkeletonData& ad, const Points& q,
                    const Points& v, const Points& f, const VecX& s0, const VecX& u0, const VecX& tau, Points& q_next,
                    Points& v_next, VecX& s_next, VecX& u_next) {
  RD_CHECK_ARG(!model.bodies.empty(), "the world has no deformable body");
  RD_CHECK_ARG(q.allFinite() && v.allFinite() && f.allFinite(), "q, v and f must be finite");
  checkFiniteVector(s0, "q (skeleton)");
  checkFiniteVector(u0, "v (skeleton)");
  checkFiniteVector(tau, "tau");
  const double h = model.dt, h2 = h * h;
  const int nf = model.free_count, nv = sk.nv(), N = 3 * nf + nv;
  data.q = q;
  data.v = v;
  data.f = f;
  data.y.resize(model.n, 3);
  for (int i = 0; i < model.n; ++i)
    data.y.row(i) = q.row(i) + h * v.row(i) + h2 * (model.gravity.transpose() + f.row(i) / model.mass[i]);
  ad.s0 = s0;
  ad.u0 = u0;
  pdSkeletonStart(model, sk, ad);
  ad.tau = tau;
  ad.tau_c = tau.cwiseMax(-sk.model.effort_limit).cwiseMin(sk.model.effort_limit);
  // dampers and springs on a free or planar joint's linear dofs give back what they take of the frame turn, as
  // in the barrier step (floating_base_chart.hpp): the step is then the lcp world's
  if (sk.rotations) addFrameTurnDampingForce(sk.model, ad.u0.data(), ad.u_step, h, ad.tau_c);
  ad.M = nv > 0 ? crba(sk.model, ad.data, s0.data()) : MatX(0, 0);
  ad.bias = nv > 0 ? VecX(nonLinearEffects(sk.model, ad.data, s0.data(), u0.data())) : VecX(0);
  // the PD matrix holds the penalty of vertices inside an obstacle or a link shape at the start or the guess
  std::vector<PdLinkContact> at_start, at_guess;
  linkContacts(model, sk, ad, q, s0, at_start);
  const VecX moved = h * ad.u_step;  // the joints' displacement of the motion continued
  linkContacts(model, sk, ad, data.y, pdSkeletonConfiguration(sk, s0, sk.rotations ? moved : VecX(s0 + moved)),
               at_guess);
  std::vector<char> contacts = pdContactCandidates(model, q, data.y), linked(model.n, 0);
  for (const auto* list : {&at_start, &at_guess})
    for (const PdLinkContact& c : *list) linked[c.vertex] = 1;
  for (int i = 0; i < model.n; ++i) contacts[i] += linked[i];
  if (!data.factor_valid || data.factor_dt != model.dt || contacts != data.factor_contacts)
    pdFactorise(model, data, contacts);
  const bool guessed = data.start_guess.rows() == model.n && ad.start_guess.size() == sk.model.nq;
  pdStartActiveSet(model, data);  // (the complementarity's vertices held on planes, balls and boxes)
  linkHoldsStart(model, sk, ad, q, s0, guessed ? &data.start_guess : nullptr, guessed ? &ad.start_guess : nullptr);
  if (ad.holds.enabled) linkHoldsFactorise(model, data, ad);
  pdFrictionContacts(model, data);
  linkFrictionContacts(model, sk, ad, q, s0, false);
  linkHoldsFriction(model, sk, ad, data, q, s0, false);
  linkObstacleFrictionContacts(model, sk, ad, s0, false);
  linkLinkFrictionContacts(model, sk, ad, s0, false);

  Points X = q, grad;
  VecX gs, gc;
  MatX A;
  bool raw = false;  // the gradient is projected on the active set's subspace unless set
  auto potential = [&](const VecX& z, VecX& g) {
    pdScatterFree(model, z.head(3 * nf), X);
    const VecX t = z.tail(nv), s = pdSkeletonConfiguration(sk, s0, t);
    double value = pdEnergy(model, X, &grad, -1, &data.sample_cache) + pdFrictionEnergy(model, data, X, &grad);
    value += jointPotential(model, sk, ad, pdSkeletonDisplacement(sk, s0, t), s, gs);
    if (!sk.rotations) {
      value += linkCoupling(model, sk, ad, X, s, &grad, &gs, nullptr, false);
    } else {  // the contacts' gradient in the tangent at s, into ds
      gc = VecX::Zero(nv);
      value += linkCoupling(model, sk, ad, X, s, &grad, &gc, nullptr, false);
      displacementInverseJacobian(sk.model, t.data(), A);
      gs += A.transpose() * gc;
    }
    g.resize(N);
    for (int i = 0; i < model.n; ++i) {
      const int r = model.free_index[i];
      if (r < 0) continue;
      const Eigen::RowVector3d dx = X.row(i) - data.y.row(i);
      value += 0.5 * model.mass[i] / h2 * dx.squaredNorm();
      for (int c = 0; c < 3; ++c) g[c * nf + r] = model.mass[i] / h2 * dx[c] + grad(i, c);
    }
    g.tail(nv) = gs;
    if (!raw && (data.active.size() || ad.holds.size())) projectVertices(model, data, ad, g);
    return value;
  };
  auto place = [&](VecX& z) {  // the held vertices on their planes
    if (ad.holds.size()) return linkHoldsPlace(model, data, sk, ad, s0, z);
    VecX xf = z.head(3 * nf);
    pdPlaceOnPlanes(model, data.active, xf);
    z.head(3 * nf) = xf;
  };
  // the start, the motion continued, and a caller's guess: the lowest of them
  VecX z(N), g0;
  z << gatherFree(model, q), (sk.rotations ? VecX(VecX::Zero(nv)) : s0);
  place(z);
  Evaluated best{potential(z, g0), g0};
  // the scale of the forces at play at the start (inertial, and internal with the joints' and contacts')
  double inertia = 0.0, internal = 0.0;
  for (int i = 0; i < model.n; ++i) {
    if (model.free_index[i] < 0) continue;
    inertia += (model.mass[i] / h2 * (q.row(i) - data.y.row(i))).squaredNorm();
    internal += grad.row(i).squaredNorm();
  }
  if (nv > 0) {
    const VecX inertial_s = ad.M * u0 / h;
    inertia += inertial_s.squaredNorm();
    internal += (gs + inertial_s).squaredNorm();
  }
  data.force_scale = std::sqrt(inertia) + std::sqrt(internal);
  pdCheckStartIsFinite(model, q, data.force_scale, best.value);
  bool neohookean = false;
  for (const PdBody& b : model.bodies) neohookean = neohookean || b.neohookean;
  Points X_d = q, D = Points::Zero(model.n, 3);
  StepLimit limit;
  if (neohookean)
    limit = [&](const VecX& at, const VecX& d) {
      pdScatterFree(model, at.head(3 * nf), X_d);
      pdScatterFree(model, d.head(3 * nf), D);
      return pdInversionFreeStep(model, X_d, D);
    };
  VecX guess(N), g_try;
  guess << gatherFree(model, q + h * v), (sk.rotations ? moved : VecX(s0 + moved));
  place(guess);
  if (limit) guess = z + limit(z, guess - z) * (guess - z);
  const double g_guess = potential(guess, g_try);
  if (g_guess < best.value) z.swap(guess), best = {g_guess, g_try};
  if (data.start_guess.rows() == model.n && ad.start_guess.size() == sk.model.nq) {
    VecX t = ad.start_guess;
    if (sk.rotations) {
      t.resize(nv);
      stepDisplacement(sk.model, s0.data(), ad.start_guess.data(), t.data());
    }
    guess << gatherFree(model, data.start_guess), t;
    place(guess);
    const double g_given = potential(guess, g_try);
    if (g_given < best.value) z.swap(guess), best = {g_given, g_try};
  }
  data.start_guess.resize(0, 3);
  ad.start_guess.resize(0);
  double inertial = 0.0;
  for (int i = 0; i < model.n; ++i)
    if (model.free_index[i] >= 0) inertial += (model.mass[i] / h2 * data.y.row(i)).squaredNorm();
  // the joints' share of the rounding (their unknown: s, or the displacement with free or ball joints)
  if (nv > 0) inertial += (ad.M * (sk.rotations ? moved : VecX(s0 + moved)) / h2).squaredNorm();
  // the limits' penalty k_l (s - limit) rounds at eps k_l |limit| (free and ball joints have no limits)
  for (int i = 0; sk.joint_limits && i < sk.model.nq; ++i)
    for (const double limit : {sk.model.lower_limit[i], sk.model.upper_limit[i]})
      if (std::isfinite(limit)) inertial += std::pow(sk.limit_stiffness * limit, 2);
  const double threshold = std::max(model.options.tolerance * data.force_scale,
                                    1e3 * std::numeric_limits<double>::epsilon() * std::sqrt(inertial));
  Points X_h = X, Z;
  auto direction = [&](const VecX& at, const VecX& g, double forcing) {
    pdScatterFree(model, at.head(3 * nf), X_h);
    pdSkeletonHessianBuild(model, data, sk, ad, X_h, at.tail(nv));
    auto product = [&](const VecX& w) { return pdSkeletonHessianProduct(model, data, ad, w, Z); };
    auto inverse = [&](const VecX& w) { return pdSkeletonPrecondition(model, data, ad, w); };
    VecX d;
    preconditionedCg(product, inverse, -g, d, forcing, 10 * static_cast<int>(g.size()));
    return d;
  };
  // the fallback of a direction that does not descend: the preconditioner of the start's Hessian
  pdSkeletonHessianBuild(model, data, sk, ad, X, z.tail(nv));
  auto fallback = [&](const VecX& w) { return pdSkeletonPrecondition(model, data, ad, w); };
  LbfgsResult r = newton(potential, direction, fallback, z, threshold, model.options.max_iterations, limit, &best);
  data.iterations = r.iterations;
  // the complementarity's active set, updated from each solution until it no longer changes
  std::vector<std::vector<int>> link_sets;
  const bool settled = pdSettleActiveSet(
      model, data, threshold, r.converged,
      [&](Points& at) {
        VecX g;
        raw = true;
        potential(z, g);
        raw = false;
        pdScatterFree(model, z.head(3 * nf), at);
        return VecX(g.head(3 * nf));
      },
      [&]() {
        if (ad.holds.enabled) linkHoldsFactorise(model, data, ad);
        place(z);
        r = newton(potential, direction, fallback, z, threshold, model.options.max_iterations - data.iterations,
                   limit, nullptr);
        data.iterations += r.iterations;
        return r.converged;
      },
      !ad.holds.enabled ? std::function<int(const VecX&, const Points&, bool)>()
                        : [&](const VecX& g, const Points& at, bool update) {
                            if (!update) {
                              VecX full = VecX::Zero(N);
                              full.head(3 * nf) = g;
                              linkHoldsForces(model, data, ad, full);
                              return 0;
                            }
                            return linkHoldsUpdate(model, sk, ad, q, s0, at, pdSkeletonConfiguration(sk, s0, z.tail(nv)),
                                                   threshold, link_sets);
                          });
  data.residual = data.force_scale > 0.0 ? r.gradient_norm / data.force_scale : 0.0;
  if (ad.holds.enabled && r.converged && !settled && model.options.raise_on_failure)
    throw std::runtime_error(pdUnsettledMessage(data, std::to_string(data.active.size()) +
                                                          " vertices held on planes, balls or boxes, " +
                                                          std::to_string(ad.holds.size()) + " on links"));
  pdCheckConverged(model, data, r, settled);
  pdScatterFree(model, z.head(3 * nf), X);
  data.x = X;
  ad.s = pdSkeletonConfiguration(sk, s0, z.tail(nv));
  ad.ds = pdSkeletonDisplacement(sk, s0, z.tail(nv));
  q_next = X;
  v_next = (X - q) / h;
  s_next = ad.s;
  u_next = ad.ds / h;
  // a free or planar joint's linear velocity in its new frame, as the lcp and barrier steps have it
  if (sk.rotations) reexpressStepVelocities(sk.model, h, VecX(ad.ds / h).data(), u_next.data());
  std::vector<PdLinkContact> final_contacts;
  linkContacts(model, sk, ad, X, ad.s, final_contacts);
  int obstacle_contacts = 0, link_contacts = 0;
  data.link_energy = linkObstacleCoupling(model, sk, ad, nullptr, nullptr, &obstacle_contacts) +
                     linkLinkCoupling(model, sk, ad, nullptr, nullptr, &link_contacts);
  ad.contacts = static_cast<int>(final_contacts.size()) + obstacle_contacts + link_contacts;
  data.contacts = ad.contacts + pdObstacleContactCount(model, X) + data.active.size() + ad.holds.size();
}

}  // namespace deformable
}  // namespace rigidiff
