// Joint position limits of the skeletons in a barrier world (world/barrier_articulated.hpp): the contact
// barrier on each limited dof's gap to its limit, so that a step keeps the joints strictly within their limits
// as it keeps surfaces apart.
#include <algorithm>
#include <cmath>

#include "rigidiff/contact/barrier.hpp"
#include "rigidiff/macros.hpp"
#include "rigidiff/world/barrier_articulated.hpp"
#include "rigidiff/world/barrier_articulated_derivatives.hpp"

namespace rigidiff {

namespace {

// the coordinate of dof c of a vector-space joint in q, or of a planar joint's turn (theta moves by delta_w along a
// Newton step, on R^2 x SO(2)); -1 for a free or ball joint's dof and a planar joint's translation (x, y move by
// R(theta) delta_xy: their limits are refused, checkWithinJointLimits)
int qIndex(const Model& m, int c) {
  const JointModel& j = m.joints[m.dof_joint[c]];
  if (j.type == JointType::Planar) return c - j.idx_v == 2 ? j.idx_q + 2 : -1;
  if (j.type == JointType::Free || j.type == JointType::Ball) return -1;
  return j.idx_q + c - j.idx_v;
}

// f(c, gap, sign) for each finite limit of each dof c of a vector-space joint (free and ball joints have none):
// gap = q_i - lower (sign +1) or upper - q_i (sign -1), i = qIndex(c) the dof's coordinate
template <class F>
void forLimits(const ArticulatedBarrier& art, const double* q, F&& f) {
  const Model& m = art.model;
  for (int c = 0; c < m.nv; ++c) {
    const int i = qIndex(m, c);
    if (i < 0) continue;
    if (std::isfinite(m.lower_limit[i])) f(c, q[i] - m.lower_limit[i], 1.0);
    if (std::isfinite(m.upper_limit[i])) f(c, m.upper_limit[i] - q[i], -1.0);
  }
}

}  // namespace

double jointLimitBarrier(const ArticulatedBarrier& art, double dhat, const double* q, double weight, double* grad,
                         double* hess_diag) {
  if (!art.joint_limits) return 0.0;
  const double shat = dhat * dhat;
  double total = 0.0;
  forLimits(art, q, [&](int c, double gap, double sign) {
    if (gap >= dhat) return;
    const double s = gap > 0.0 ? gap * gap : 0.0;
    total += barrier(s, shat);
    const double b1 = barrierFirstDerivative(s, shat);
    if (grad) grad[c] += weight * sign * b1 * 2.0 * gap;
    // d2/dq2 b(gap^2) = 4 gap^2 b'' + 2 b' (sign^2 = 1); clamped like a point-plane pair's
    if (hess_diag) hess_diag[c] += weight * std::max(4.0 * gap * gap * barrierSecondDerivative(s, shat) + 2.0 * b1, 0.0);
  });
  return total;
}

void jointLimitDerivatives(const ArticulatedBarrier& art, double dhat, const double* q, double weight,
                           double* hess_diag, double* dshat_grad) {
  if (!art.joint_limits) return;
  const double shat = dhat * dhat;
  forLimits(art, q, [&](int c, double gap, double sign) {
    if (gap >= dhat) return;
    const double s = gap * gap;
    const double b1 = barrierFirstDerivative(s, shat), b2 = barrierSecondDerivative(s, shat);
    hess_diag[c] += weight * (4.0 * s * b2 + 2.0 * b1);  // exact: no clamping
    // b(s; shat) = shat^2 beta(s / shat) gives d b' / d shat = (b' - s b'') / shat
    dshat_grad[c] += weight * sign * 2.0 * gap * (b1 - s * b2) / shat;
  });
}

double jointLimitStep(const ArticulatedBarrier& art, const double* q, const double* dq) {
  if (!art.joint_limits) return 1.0;
  double alpha = 1.0;
  forLimits(art, q, [&](int c, double gap, double sign) {
    const double closing = -sign * dq[c];  // how fast the gap shrinks per unit alpha
    if (closing > 0.0 && gap - closing < 0.1 * gap) alpha = std::min(alpha, 0.9 * gap / closing);
  });
  return alpha;
}

void checkWithinJointLimits(const ArticulatedBarrier& art, const double* q) {
  if (!art.joint_limits) return;
  const Model& m = art.model;
  for (int i = 1; i < m.njoints; ++i) {
    const JointModel& j = m.joints[i];
    if (j.type != JointType::Planar) continue;
    for (int k = 0; k < 2; ++k)
      RD_CHECK_ARG(!std::isfinite(m.lower_limit[j.idx_q + k]) && !std::isfinite(m.upper_limit[j.idx_q + k]),
                   "joint '" << m.names[i] << "': barrier worlds do not enforce a planar joint's limits on x and y yet "
                             << "(its turn's limits act): remove them or switch joint_limits off");
  }
  forLimits(art, q, [&](int c, double gap, double) {
    RD_CHECK_ARG(gap > 0.0, "joint '" << art.model.names[art.model.dof_joint[c]] << "' is at or beyond its position "
                                      << "limit (q[" << qIndex(art.model, c) << "] = " << q[qIndex(art.model, c)]
                                      << ", limits [" << art.model.lower_limit[qIndex(art.model, c)] << ", "
                                      << art.model.upper_limit[qIndex(art.model, c)]
                                      << "]): with joint limits on, a state must lie strictly within them");
  });
}

}  // namespace rigidiff
