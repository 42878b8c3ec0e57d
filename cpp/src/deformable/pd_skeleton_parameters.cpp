// The cotangents of a projective world's skeleton parameters (pd_skeleton.hpp). The joints' part of grad G is
//   rnea(s0, u0, a) - tau_c + D ds / h + K (s - s_r) + grad limits,   a = (s - s0 - h u0) / h^2,
// with rnea = Y(s0, u0, a) theta + armature a linear in the bodies' inertial parameters theta, so each parameter
// receives -ws^T of its column. ws^T Y theta_i is the power of body i's regressor force A(v_i, a_i) theta_i
// (with free or ball joints ds is the displacement, a = (ds - h u_step) / h^2 and the spring K (d_r + ds),
// pd_skeleton.hpp) along the body twist xi_i = J_i ws that ws gives it, so Y^T ws is assembled body by body from one
// forward pass (no dense regressor, and universal joints, whose motion subspace turns with q, work as rnea does).
#include "rigidiff/algorithm/regressor.hpp"
#include "rigidiff/algorithm/rnea.hpp"
#include "rigidiff/deformable/pd_skeleton.hpp"

namespace rigidiff {
namespace deformable {

void pdSkeletonParameterCotangents(const PdModel& model, const PdSkeletons& sk, PdSkeletonData& ad, const VecX& ws) {
  const Model& m = sk.model;
  const int nv = m.nv;
  const double h = model.dt;
  const VecX& ds = ad.ds;
  const VecX a = (ds - h * ad.u_step) / (h * h);
  rnea(m, ad.data, ad.s0.data(), ad.u0.data(), a.data(), false);  // the bodies' twists v_i and accelerations a_gf_i
  ad.grad_inertia = VecX::Zero(10 * (m.njoints - 1));
  std::vector<Vec6> xi(m.njoints, Vec6::Zero());
  for (int i = 1; i < m.njoints; ++i) {
    const JointModel& jm = m.joints[i];
    xi[i] = ad.data.liMi[i].actInv(xi[m.parents[i]]);
    xi[i] += ad.data.S.middleCols(jm.idx_v, jm.nv) * ws.segment(jm.idx_v, jm.nv);
    ad.grad_inertia.segment<10>(10 * (i - 1)) = -bodyRegressor(ad.data.v[i], ad.data.a_gf[i]).transpose() * xi[i];
  }
  ad.grad_damping = -ws.cwiseProduct(ds) / h;
  ad.grad_stiffness = -ws.cwiseProduct(ad.spring0 + ds);
  // the frame turn's damping force (D + h K)(u_step - u0) in tau_c (zero without free or planar joints)
  ad.grad_damping += ws.cwiseProduct(ad.u_step - ad.u0);
  ad.grad_stiffness += h * ws.cwiseProduct(ad.u_step - ad.u0);
  ad.grad_armature = -ws.cwiseProduct(a);
  // the penalty is linear in its stiffness: d(grad)/d(k_l) = grad / k_l
  VecX limits = VecX::Zero(nv);
  jointLimitPenaltyInStep(sk, ad.s, ds, &limits, nullptr);
  ad.grad_limit_stiffness = sk.joint_limits ? -ws.dot(limits) / sk.limit_stiffness : 0.0;
}

}  // namespace deformable
}  // namespace rigidiff
