// Joint position limits of the skeletons in a barrier world (world/barrier_articulated.hpp): the contact
// barrier on each limited coordinate's gap to its limit, so that a step keeps the joints strictly within their
// limits as it keeps surfaces apart.
#include <algorithm>
#include <cmath>

#include "rigidiff/contact/barrier.hpp"
#include "rigidiff/macros.hpp"
#include "rigidiff/world/barrier_articulated.hpp"
#include "rigidiff/world/barrier_articulated_derivatives.hpp"

namespace rigidiff {

namespace {

// One finite limit of coordinate qi: its gap (> 0 strictly within) and the gap's gradient in the tangent at q
// (q (+) delta, Motion::Step), coef on the dofs `dof` (n of them). A vector-space dof or a planar joint's turn
// moves its coordinate one to one; a planar joint's x and y (parent frame) move by R(theta) delta_xy, so their
// gaps are linear in delta_xy with coefficients the row of R(theta) (two dofs) that turn with theta: dcoef, the
// coefficients' derivative in the joint's turn dof `turn` (-1 when there is none).
struct LimitGap {
  int qi = 0, n = 1, turn = -1;
  int dof[2] = {0, 0};
  double coef[2] = {0.0, 0.0}, dcoef[2] = {0.0, 0.0};
  double gap = 0.0;
};

// f(limit) for each finite limit of each joint (free and ball joints have none)
template <class F>
void forLimits(const ArticulatedBarrier& art, const double* q, F&& f) {
  const Model& m = art.model;
  for (int i = 1; i < m.njoints; ++i) {
    const JointModel& j = m.joints[i];
    if (j.type == JointType::Free || j.type == JointType::Ball) continue;
    const bool planar = j.type == JointType::Planar;
    const double c = planar ? std::cos(q[j.idx_q + 2]) : 1.0, s = planar ? std::sin(q[j.idx_q + 2]) : 0.0;
    for (int k = 0; k < j.nv; ++k) {
      LimitGap l;
      l.qi = j.idx_q + k;
      l.dof[0] = j.idx_v + k;
      double row[2] = {1.0, 0.0}, drow[2] = {0.0, 0.0};
      if (planar && k < 2) {  // row k of R(theta) = [[c, -s], [s, c]] and of its derivative [[-s, -c], [c, -s]]
        l.n = 2;
        l.turn = j.idx_v + 2;
        l.dof[0] = j.idx_v, l.dof[1] = j.idx_v + 1;
        row[0] = k == 0 ? c : s, row[1] = k == 0 ? -s : c;
        drow[0] = k == 0 ? -s : c, drow[1] = k == 0 ? -c : -s;
      }
      for (double sign : {1.0, -1.0}) {
        const double limit = sign > 0.0 ? m.lower_limit[l.qi] : m.upper_limit[l.qi];
        if (!std::isfinite(limit)) continue;
        l.gap = sign * (q[l.qi] - limit);
        for (int a = 0; a < l.n; ++a) l.coef[a] = sign * row[a], l.dcoef[a] = sign * drow[a];
        f(l);
      }
    }
  }
}

}  // namespace

double jointLimitBarrier(const ArticulatedBarrier& art, double dhat, const double* q, double weight, double* grad,
                         MatX* hess) {
  if (!art.joint_limits) return 0.0;
  const double shat = dhat * dhat;
  double total = 0.0;
  forLimits(art, q, [&](const LimitGap& l) {
    const double gap = l.gap;
    if (gap >= dhat) return;
    const double s = gap > 0.0 ? gap * gap : 0.0;
    total += barrier(s, shat);
    const double b1 = barrierFirstDerivative(s, shat);
    // d2/dg2 b(g^2) = 4 g^2 b'' + 2 b', clamped like a point-plane pair's: its block coef coef^T stays PSD
    const double b2 = std::max(4.0 * gap * gap * barrierSecondDerivative(s, shat) + 2.0 * b1, 0.0);
    for (int a = 0; a < l.n; ++a) {
      if (grad) grad[l.dof[a]] += weight * b1 * 2.0 * gap * l.coef[a];
      if (hess)
        for (int b = 0; b < l.n; ++b) (*hess)(l.dof[a], l.dof[b]) += weight * b2 * l.coef[a] * l.coef[b];
    }
  });
  return total;
}

void jointLimitDerivatives(const ArticulatedBarrier& art, double dhat, const double* q, double weight, MatX& hess,
                           double* dshat_grad) {
  if (!art.joint_limits) return;
  const double shat = dhat * dhat;
  forLimits(art, q, [&](const LimitGap& l) {
    const double gap = l.gap;
    if (gap >= dhat) return;
    const double s = gap * gap;
    const double b1 = barrierFirstDerivative(s, shat), b2 = barrierSecondDerivative(s, shat);
    const double curvature = weight * (4.0 * s * b2 + 2.0 * b1);  // exact: no clamping
    for (int a = 0; a < l.n; ++a) {
      for (int b = 0; b < l.n; ++b) hess(l.dof[a], l.dof[b]) += curvature * l.coef[a] * l.coef[b];
      // the gradient's row of R(theta) turns with the joint (d rho / d delta_turn, the frame field's bracket)
      if (l.turn >= 0) hess(l.dof[a], l.turn) += weight * b1 * 2.0 * gap * l.dcoef[a];
      // b(s; shat) = shat^2 beta(s / shat) gives d b' / d shat = (b' - s b'') / shat
      dshat_grad[l.dof[a]] += weight * 2.0 * gap * (b1 - s * b2) / shat * l.coef[a];
    }
  });
}

double jointLimitStep(const ArticulatedBarrier& art, const double* q, const double* dq) {
  if (!art.joint_limits) return 1.0;
  double alpha = 1.0;
  forLimits(art, q, [&](const LimitGap& l) {
    // the gap moves linearly along q (+) alpha dq (a planar joint's x and y by alpha R(theta) dq_xy)
    double closing = 0.0;  // how fast the gap shrinks per unit alpha
    for (int a = 0; a < l.n; ++a) closing -= l.coef[a] * dq[l.dof[a]];
    if (closing > 0.0 && l.gap - closing < 0.1 * l.gap) alpha = std::min(alpha, 0.9 * l.gap / closing);
  });
  return alpha;
}

void checkWithinJointLimits(const ArticulatedBarrier& art, const double* q) {
  if (!art.joint_limits) return;
  const Model& m = art.model;
  forLimits(art, q, [&](const LimitGap& l) {
    RD_CHECK_ARG(l.gap > 0.0, "joint '" << m.names[m.dof_joint[l.dof[0]]] << "' is at or beyond its position limit (q["
                                        << l.qi << "] = " << q[l.qi] << ", limits [" << m.lower_limit[l.qi] << ", "
                                        << m.upper_limit[l.qi]
                                        << "]): with joint limits on, a state must lie strictly within them");
  });
}

}  // namespace rigidiff
