// The joint-limit penalty of a projective world's skeletons (pd_skeleton.hpp): each coordinate beyond its lower
// or upper position limit adds k_l/2 (gap)^2, a term of the step's potential like the contacts' penalty, so that
// Newton's method and the exact adjoint carry it as they carry those. Vector-space joints have position limits on
// each coordinate (idx_q + k moves with dof idx_v + k), planar joints on x, y (parent frame) and theta, which the
// step moves in the child frame's axes (x, y by R(theta) delta_xy); free and ball joints have none.
#include <cmath>

#include "rigidiff/deformable/pd_skeleton.hpp"
#include "rigidiff/world/floating_base_chart.hpp"

namespace rigidiff {
namespace deformable {

double jointLimitPenalty(const PdSkeletons& sk, const VecX& s, VecX* g, MatX* hss) {
  if (!sk.joint_limits) return 0.0;
  const double k = sk.limit_stiffness;
  double energy = 0.0;
  for (int j = 1; j < sk.model.njoints; ++j) {
    const JointModel& jm = sk.model.joints[j];
    if (jm.type == JointType::Free || jm.type == JointType::Ball) continue;
    double force[3] = {0.0, 0.0, 0.0};  // d(energy)/d(s_q) per coordinate (nv <= 3 for these joints)
    int active[3] = {0, 0, 0};
    for (int c = 0; c < jm.nv; ++c) {
      const int iq = jm.idx_q + c;
      // gap < 0 beyond a limit; an infinite limit is never reached
      const double below = s[iq] - sk.model.lower_limit[iq], above = sk.model.upper_limit[iq] - s[iq];
      if (std::isfinite(below) && below < 0.0) energy += 0.5 * k * below * below, force[c] += k * below, ++active[c];
      if (std::isfinite(above) && above < 0.0) energy += 0.5 * k * above * above, force[c] -= k * above, ++active[c];
    }
    const int o = jm.idx_v;
    if (jm.type == JointType::Planar) {  // x and y in the child frame's axes: R^T f, R^T diag(k active) R
      const double c = std::cos(s[jm.idx_q + 2]), sn = std::sin(s[jm.idx_q + 2]);
      Eigen::Matrix2d R;
      R << c, -sn, sn, c;
      if (g != nullptr) {
        g->segment<2>(o) += R.transpose() * Eigen::Vector2d(force[0], force[1]);
        (*g)[o + 2] += force[2];
      }
      if (hss != nullptr) {
        hss->block<2, 2>(o, o) += k * R.transpose() * Eigen::Vector2d(active[0], active[1]).asDiagonal() * R;
        (*hss)(o + 2, o + 2) += k * active[2];
      }
      continue;
    }
    for (int c = 0; c < jm.nv; ++c) {
      if (g != nullptr) (*g)[o + c] += force[c];
      if (hss != nullptr) (*hss)(o + c, o + c) += k * active[c];
    }
  }
  return energy;
}

double jointLimitPenaltyInStep(const PdSkeletons& sk, const VecX& s, const VecX& ds, VecX* g, MatX* hss) {
  if (!sk.joint_limits) return 0.0;
  if (!sk.rotations) return jointLimitPenalty(sk, s, g, hss);
  const int nv = sk.nv();
  VecX gt = VecX::Zero(nv);
  MatX ht = MatX::Zero(nv, nv), A;
  const double energy = jointLimitPenalty(sk, s, &gt, hss != nullptr ? &ht : nullptr);
  displacementInverseJacobian(sk.model, ds.data(), A);
  if (g != nullptr) *g += A.transpose() * gt;
  if (hss != nullptr) *hss += A.transpose() * ht * A;
  return energy;
}

}  // namespace deformable
}  // namespace rigidiff
