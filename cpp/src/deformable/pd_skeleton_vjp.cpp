// The adjoint of the coupled step (pd_skeleton.hpp). At the solution grad G(x, s; inputs) = 0, so with H the
// Hessian of G over the stacked (free vertices, joints) and b the cotangents of (x', s') (b = dL/dq' + dL/dv' / h
// for each), H w = b, and each input theta receives -w^T d(grad G)/d(theta). The joints' part of grad G is
//   rnea(s0, u0, (s - s0 - h u0) / h^2) - tau_c + D (s - s0) / h + K (s - s_r) + grad limits + grad_s C,
// so s0 and u0 receive their cotangents from the RNEA derivatives, tau w_s (inside the effort limits), and the
// skeletons' own parameters theirs from the regressor (pd_skeleton_parameters.cpp). The limits' penalty depends
// on s alone: it enters through the Hessian. With free, ball or planar joints the unknown is the displacement ds
// (pd_floating_base.cpp), and s0 reaches the contacts and the limits through s = s0 (+) ds
// (pd_floating_base_vjp.cpp).
#include <cmath>
#include <stdexcept>

#include "rigidiff/algorithm/configuration_derivatives.hpp"
#include "rigidiff/algorithm/rnea_derivatives.hpp"
#include "rigidiff/deformable/pd_complementarity.hpp"
#include "rigidiff/deformable/pd_lbfgs.hpp"
#include "rigidiff/deformable/pd_link_holding.hpp"
#include "rigidiff/deformable/pd_skeleton.hpp"
#include "rigidiff/world/floating_base_chart.hpp"
#include "rigidiff/world/free_joint_motion.hpp"

namespace rigidiff {
namespace deformable {

void pdSkeletonStepVjp(const PdModel& model, PdData& data, const PdSkeletons& sk, PdSkeletonData& ad,
                       const Points& gq_next, const Points& gv_next, const VecX& gs_next, const VecX& gu_next,
                       Points& gq, Points& gv, Points& gf, VecX& gs, VecX& gu, VecX& gE, VecX& gnu) {
  const int nf = model.free_count, nv = sk.nv();
  if (data.x.rows() != model.n || ad.s.size() != sk.model.nq) throw std::logic_error("step_vjp needs a step first");
  if (!gq_next.allFinite() || !gv_next.allFinite() || !gs_next.allFinite() || !gu_next.allFinite())
    throw std::invalid_argument("dL_dq_next and dL_dv_next must be finite");
  const double h = model.dt, h2 = h * h;
  pdSkeletonHessianBuild(model, data, sk, ad, data.x, sk.rotations ? ad.ds : ad.s);
  const Points b = gq_next + gv_next / h;
  MatX A;  // d delta / d ds: the joints' adjoint into the tangent at s (the identity without free, ball or planar
           // joints)
  displacementInverseJacobian(sk.model, ad.ds.data(), A);
  VecX bs = gs_next + gu_next / h;
  if (sk.rotations) {  // s' = s0 (+) ds, u' = ds / h re-expressed in the free and planar joints' new frames
    VecX gu_step(nv);
    reexpressStepCotangent(sk.model, h, VecX(ad.ds / h).data(), gu_next.data(), gu_step.data());
    bs = A.transpose() * gs_next + gu_step / h;
  }
  VecX bv(3 * nf + nv);
  for (int i = 0; i < model.n; ++i)
    if (model.free_index[i] >= 0)
      for (int c = 0; c < 3; ++c) bv[c * nf + model.free_index[i]] = b(i, c);
  bv.tail(nv) = bs;
  // the complementarity's held vertices: the adjoint on the active set's subspace, as in pdStepVjp
  const VecX b_held = bv.head(3 * nf), b_all = bv;
  if (ad.holds.size()) {  // (and on the links' holds: the whole on every constraint)
    linkHoldsProject(model, ad, bv);
  } else {
    VecX head = b_held;
    pdProjectOnActiveSet(model, data.active, head);
    bv.head(3 * nf) = head;
  }
  Points Z = Points::Zero(model.n, 3);
  auto product = [&](const VecX& w) { return pdSkeletonHessianProduct(model, data, ad, w, Z); };
  auto inverse = [&](const VecX& w) { return pdSkeletonPrecondition(model, data, ad, w); };
  VecX w = VecX::Zero(bv.size());
  solveAdjoint(product, inverse, bv, w, model.options.tolerance, model.options.max_iterations, model.options.history);
  const bool held = pdHoldsOnObstacles(model, data);
  const VecX residual_all =
      held || ad.holds.size() ? VecX(b_all - pdSkeletonHessianProduct(model, data, ad, w, Z, false)) : VecX();
  const VecX residual = !held              ? VecX()
                        : ad.holds.size() ? linkHoldsObstacleResidual(model, data, ad, residual_all)
                                          : VecX(residual_all.head(3 * nf));
  Z.setZero(model.n, 3);
  pdScatterFree(model, w.head(3 * nf), Z);
  const VecX ws = w.tail(nv), wd = A * ws;
  pdStepCotangents(model, data, Z, b, gv_next, gq, gv, gf, gE, gnu);
  if (held) pdHeldCotangents(model, data, w.head(3 * nf), residual, gq, gv);

  // the link contacts at the solution: the contact stiffness through the penalty's k d grad d
  std::vector<PdLinkContact> contacts;
  linkContacts(model, sk, ad, data.x, ad.s, contacts);
  for (const PdLinkContact& c : contacts)
    data.grad_contact_stiffness -=
        c.d * (c.normal.dot(Z.row(c.vertex).transpose()) - wd.dot(c.J.transpose() * c.normal));
  // friction on the links: its lagged normal forces, normals and material points, and mu (every contact, so that
  // the gradient of switching friction on exists at mu = 0)
  gs = VecX::Zero(nv);
  // the links' holds: their planes from the start's vertices and joints
  linkHoldsCotangents(model, data, sk, ad, w, residual_all, gq, gs);
  data.grad_friction += linkHoldsFrictionCotangents(model, data, sk, ad, Z, wd, gq, gv, gf, gs, gE, gnu);
  PdSkeletonData lagged(sk.model);
  linkFrictionContacts(model, sk, lagged, data.q, ad.s0, true);
  linkObstacleFrictionContacts(model, sk, lagged, ad.s0, true);
  linkLinkFrictionContacts(model, sk, lagged, ad.s0, true);
  std::vector<PdLinkContact> again;  // (the kinematics at the solution, which linkFrictionCotangents reads)
  linkContacts(model, sk, lagged, data.x, ad.s, again);
  const double per_mu = linkFrictionCotangents(model, sk, lagged, data.x, Z, wd, gq, gs);
  data.grad_friction += per_mu;
  data.grad_contact_stiffness += model.friction * per_mu / model.contact_stiffness;
  // the links against the obstacles (the kinematics at the solution are in ad.data)
  const auto [grad_k, obstacle_per_mu] = linkObstacleCotangents(model, sk, ad, lagged, wd, gs, data.grad_obstacles);
  data.grad_contact_stiffness += grad_k;
  data.grad_friction += obstacle_per_mu;
  // the links against each other
  const auto [link_k, link_per_mu] = linkLinkCotangents(model, sk, ad, lagged, wd, gs);
  data.grad_contact_stiffness += link_k;
  data.grad_friction += link_per_mu;

  // the joints: s' = s, u' = (s - s0) / h
  gu = VecX::Zero(nv);
  ad.grad_tau = VecX::Zero(nv);
  if (nv == 0) return;
  if (sk.rotations) pdFloatingStartCotangents(model, sk, ad, data.x, Z, ws, gs_next, gs);
  const VecX a = (ad.ds - h * ad.u_step) / h2;
  computeRNEADerivatives(sk.model, ad.data, ad.s0.data(), ad.u0.data(), a.data());
  gs -= ad.data.dtau_dq.transpose() * ws;
  gu = -ad.data.dtau_dv.transpose() * ws;
  if (!sk.rotations) {  // ds = s - s0, u' = ds / h
    gs += ad.M * ws / h2 + sk.model.damping.cwiseProduct(ws) / h - gu_next / h;
    gu += ad.M * ws / h;
  } else {  // the springs' offset difference(s_r, s0), and u_step = u0 + h s(u0)
    MatX D_rest(nv, nv), S = MatX::Identity(nv, nv);
    dDifference(sk.model, sk.model.rest_position.data(), ad.s0.data(), 1, D_rest.data());
    gs -= D_rest.transpose() * sk.model.stiffness.cwiseProduct(ws);
    addFrameTurnJacobian(sk.model, ad.u0.data(), h, S);
    addPlanarFrameTurnJacobian(sk.model, ad.u0.data(), h, S);
    gu += S.transpose() * (ad.M * ws) / h;
    // the frame turn's damping force (D + h K)(u_step - u0) in tau_c
    const VecX dk = (sk.model.damping + h * sk.model.stiffness).cwiseProduct(ws);
    gu += S.transpose() * dk - dk;
  }
  for (int i = 0; i < nv; ++i)
    ad.grad_tau[i] = std::abs(ad.tau[i]) < sk.model.effort_limit[i] ? ws[i] : 0.0;
  pdSkeletonParameterCotangents(model, sk, ad, ws);
}

}  // namespace deformable
}  // namespace rigidiff
