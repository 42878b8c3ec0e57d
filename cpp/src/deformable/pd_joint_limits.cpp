// The joint-limit penalty of a projective world's skeletons (pd_skeleton.hpp): each coordinate beyond its lower
// or upper position limit adds k_l/2 (gap)^2, a term of the step's potential like the contacts' penalty, so that
// Newton's method and the exact adjoint carry it as they carry those. Only vector-space joints have position
// limits here (their coordinate idx_q + k moves with dof idx_v + k); free and ball joints have none.
#include <cmath>

#include "rigidiff/deformable/pd_skeleton.hpp"

namespace rigidiff {
namespace deformable {

double jointLimitPenalty(const PdSkeletons& sk, const VecX& s, VecX* g, MatX* hss) {
  if (!sk.joint_limits) return 0.0;
  const double k = sk.limit_stiffness;
  double energy = 0.0;
  for (int j = 1; j < sk.model.njoints; ++j) {
    const JointModel& jm = sk.model.joints[j];
    if (jm.type == JointType::Free || jm.type == JointType::Ball) continue;
    for (int c = 0; c < jm.nv; ++c) {
      const int iq = jm.idx_q + c, i = jm.idx_v + c;
      // gap < 0 beyond a limit; an infinite limit is never reached
      const double below = s[iq] - sk.model.lower_limit[iq], above = sk.model.upper_limit[iq] - s[iq];
      double force = 0.0;  // d(energy)/d(s_i)
      int active = 0;
      if (std::isfinite(below) && below < 0.0) energy += 0.5 * k * below * below, force += k * below, ++active;
      if (std::isfinite(above) && above < 0.0) energy += 0.5 * k * above * above, force -= k * above, ++active;
      if (g != nullptr) (*g)[i] += force;
      if (hss != nullptr) (*hss)(i, i) += k * active;
    }
  }
  return energy;
}

}  // namespace deformable
}  // namespace rigidiff
